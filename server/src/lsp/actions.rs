//! Code actions: the rules' quick fixes (from diagnostic data), the estimator's levers on
//! the keys they edit, "Disable <rule> for this line", and `source.fixAll.oomlint`.

use super::convert::Positions;
use super::diagnostics::{self, lines_overlap};
use super::locate::entry_with_value;
use super::state::OpenDocument;
use crate::analysis::FileEdits;
use crate::diagnostic::Edit;
use crate::estimate::breakdown::gib;
use crate::estimate::Lever;
use crate::syntax::Language;
use std::collections::HashMap;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionContext, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit,
};

/// `source.fixAll.oomlint`: every safe fix at once.
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.oomlint")
}

/// The actions for `range` in `document`, filtered by the client's `only`.
pub fn code_actions(
    document: &OpenDocument,
    positions: &Positions,
    range: Range,
    context: &CodeActionContext,
) -> Vec<CodeActionOrCommand> {
    let mut actions = Vec::new();
    let mut offered: Vec<WorkspaceEdit> = Vec::new();
    for diagnostic in &context.diagnostics {
        let Some((_, data)) = diagnostics::ours(diagnostic) else { continue };
        let preferred = data.fixes.len() == 1 && data.fixes[0].is_safe();
        for fix in &data.fixes {
            let edit = fix.workspace_edit(&document.uri);
            offered.push(edit.clone());
            actions.push(CodeAction {
                title: fix.title.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic.clone()]),
                edit: Some(edit),
                is_preferred: preferred.then_some(true),
                ..CodeAction::default()
            });
        }
    }
    if let Some(estimate) = &document.analysis.estimate {
        for lever in &estimate.levers {
            let linked = &document.analysis.linked_files;
            let Some(fix) = lever.fixes.first().and_then(|f| diagnostics::fix_data(f, positions, linked)) else {
                continue;
            };
            // Offered on the lines of this document it edits (a lever that edits only the
            // config the launch names is offered there).
            let edit = fix.workspace_edit(&document.uri);
            if fix.edits.iter().any(|e| lines_overlap(e.range, range)) && !offered.contains(&edit) {
                actions.push(CodeAction {
                    title: lever_title(document, lever),
                    kind: Some(CodeActionKind::REFACTOR_REWRITE),
                    edit: Some(edit),
                    ..CodeAction::default()
                });
            }
        }
    }
    let mut disabled = Vec::new();
    for diagnostic in &context.diagnostics {
        let Some((code, data)) = diagnostics::ours(diagnostic) else { continue };
        if disabled.contains(&code) {
            continue;
        }
        if let Some(edit) = suppression(document, positions, diagnostic.range, &code) {
            actions.push(CodeAction {
                title: format!("Disable {} ({code}) for this line", data.rule),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic.clone()]),
                edit: Some(workspace_edit(&document.uri, vec![edit])),
                ..CodeAction::default()
            });
            disabled.push(code);
        }
    }
    if let Some(edits) = fix_all(document) {
        actions.push(CodeAction {
            title: "Fix all safe oomlint findings".into(),
            kind: Some(fix_all_kind()),
            edit: Some(workspace_edit(&document.uri, edits)),
            ..CodeAction::default()
        });
    }
    actions
        .into_iter()
        .filter(|a| wanted(a.kind.as_ref(), context.only.as_deref()))
        .map(CodeActionOrCommand::CodeAction)
        .collect()
}

/// Whether `kind` falls under one of the kinds the client asked for (`source` covers
/// `source.fixAll.oomlint`); without `only`, every kind is.
fn wanted(kind: Option<&CodeActionKind>, only: Option<&[CodeActionKind]>) -> bool {
    let kind = kind.map_or("", CodeActionKind::as_str);
    match only {
        None => true,
        Some(only) => only.iter().any(|o| kind == o.as_str() || kind.starts_with(&format!("{}.", o.as_str()))),
    }
}

fn workspace_edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..WorkspaceEdit::default() }
}

/// E.g. "Halve per_device_train_batch_size (16→8) and double gradient_accumulation_steps (2→4): saves 9.8 GiB".
pub fn lever_title(document: &OpenDocument, lever: &Lever) -> String {
    let analysis = &document.analysis;
    let edits = lever.fixes.first().map_or(&[][..], |f| &f.edits[..]);
    let parts: Vec<String> = edits
        .iter()
        .map(|edit| {
            // An edit of the config the launch names reads its old value there.
            let (text, span) = match analysis.edits_by_file(std::slice::from_ref(edit)).as_deref() {
                Some([_, FileEdits { linked: Some(file), edits }]) => (file.text.as_str(), edits[0].span),
                _ => (analysis.text.as_str(), edit.span),
            };
            let old = text.get(span.start..span.end).unwrap_or_default().trim();
            let key = entry_with_value(&analysis.document, edit.span).map_or("the value", |e| e.key.as_str());
            format!("{} {key} ({old}→{})", verb(old, edit), edit.content)
        })
        .collect();
    if parts.is_empty() {
        return format!("{}: saves {:.1} GiB", lever.title, gib(lever.saves_bytes));
    }
    let mut title = parts.join(" and ");
    if let Some(first) = title.get(..1) {
        title = first.to_uppercase() + &title[1..];
    }
    format!("{title}: saves {:.1} GiB", gib(lever.saves_bytes))
}

fn verb(old: &str, edit: &Edit) -> &'static str {
    match (old.parse::<f64>(), edit.content.trim().parse::<f64>()) {
        (Ok(old), Ok(new)) if new * 2.0 == old => "halve",
        (Ok(old), Ok(new)) if new == old * 2.0 => "double",
        _ => "set",
    }
}

/// Inserts `# oomlint: ignore[CODE]` on the line above the finding, or adds the code to
/// such a comment already there. `None` for JSON and notebooks, which have no `#` comments.
fn suppression(document: &OpenDocument, positions: &Positions, range: Range, code: &str) -> Option<TextEdit> {
    let analysis = &document.analysis;
    if matches!(analysis.document.language, Language::Json | Language::Notebook) {
        return None;
    }
    let text = &analysis.text;
    let line = range.start.line as usize;
    let line_start = analysis.line_index.line_start(line);
    if line > 0 {
        let above = analysis.line_index.line_span(text, line - 1);
        let above_text = &text[above.start..above.end];
        if let Some(close) = existing_ignore(above_text) {
            if above_text.contains(code) {
                return None;
            }
            let at = positions.position(above.start + close);
            return Some(TextEdit::new(Range::new(at, at), format!(", {code}")));
        }
    }
    let current = analysis.line_index.line_span(text, line);
    let indent: String = text[current.start..current.end].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let newline = if text[current.end..].starts_with("\r\n") { "\r\n" } else { "\n" };
    let at = positions.position(line_start);
    Some(TextEdit::new(Range::new(at, at), format!("{indent}# oomlint: ignore[{code}]{newline}")))
}

/// The offset of the closing `]` of a `# oomlint: ignore[...]` comment filling the line.
fn existing_ignore(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    let rest = trimmed.strip_prefix('#')?.trim_start().strip_prefix("oomlint:")?.trim_start();
    let codes = rest.strip_prefix("ignore[")?;
    let close = codes.find(']')?;
    Some(line.len() - codes.len() + close)
}

/// The safe fixes of the published findings, minus any that overlap an earlier one.
fn fix_all(document: &OpenDocument) -> Option<Vec<TextEdit>> {
    let mut edits: Vec<TextEdit> = Vec::new();
    let safe = document
        .diagnostics
        .iter()
        .filter_map(diagnostics::ours)
        // A fix that edits another file too is offered alone, never applied on save with this one.
        .flat_map(|(_, data)| data.fixes.into_iter().filter(|f| f.is_safe() && f.other_files.is_empty()));
    for fix in safe {
        let clashes = fix.edits.iter().any(|new| edits.iter().any(|old| ranges_touch(old.range, new.range)));
        if !clashes {
            edits.extend(fix.edits);
        }
    }
    edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
    (!edits.is_empty()).then_some(edits)
}

fn ranges_touch(a: Range, b: Range) -> bool {
    let key = |p: tower_lsp_server::ls_types::Position| (p.line, p.character);
    key(a.start) < key(b.end) && key(b.start) < key(a.end) || a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_an_existing_ignore_comment() {
        let line = "  # oomlint: ignore[OOM101]";
        assert_eq!(existing_ignore(line), Some(line.len() - 1));
        assert_eq!(existing_ignore("# oomlint:ignore[OOM1, OOM2] "), Some(27));
        assert_eq!(existing_ignore("key: 1  # oomlint: ignore[OOM1]"), None);
        assert_eq!(existing_ignore("# other"), None);
    }

    #[test]
    fn kinds_filter_hierarchically() {
        let quickfix = CodeActionKind::QUICKFIX;
        let fix_all = fix_all_kind();
        assert!(wanted(Some(&quickfix), None));
        assert!(wanted(Some(&fix_all), None));
        assert!(wanted(Some(&fix_all), Some(&[CodeActionKind::SOURCE])));
        assert!(wanted(Some(&fix_all), Some(&[CodeActionKind::SOURCE_FIX_ALL])));
        assert!(!wanted(Some(&quickfix), Some(&[CodeActionKind::SOURCE])));
        assert!(!wanted(Some(&CodeActionKind::new("sourcery")), Some(&[CodeActionKind::SOURCE])));
    }
}
