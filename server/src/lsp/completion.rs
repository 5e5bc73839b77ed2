//! Completion in YAML configs: the keys the schema allows at the cursor's path (minus
//! those already present), and the values of enums and booleans, with documentation. In
//! Python scripts and notebook cells: the keyword arguments of the recognized call being
//! typed (minus those already given); in a notebook cell, read after the code cells above
//! it, so that their imports and aliases count. In shell scripts: the flags or `key=value`
//! overrides of the launch command's program (or `accelerate launch`'s options) that the
//! word being typed may set, minus those the command sets (`schema::flags`).

use super::convert::Positions;
use super::locate::{yaml_context, Writing};
use super::state::OpenDocument;
use crate::analysis::Analysis;
use crate::format::{python, Format};
use crate::schema::docs::{property_markdown, spell};
use crate::schema::{self, properties_at, property_doc, PropertyDoc};
use crate::span::Span;
use crate::syntax::python::open_call;
use crate::syntax::Language;
use serde_json::Value;
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent, MarkupKind, TextEdit,
};

/// The completions at `offset`; `before` is the code that precedes the document in its
/// notebook (empty for a file).
pub fn complete(document: &OpenDocument, positions: &Positions, offset: usize, before: &str) -> Vec<CompletionItem> {
    let analysis = &document.analysis;
    if analysis.document.language == Language::Python {
        return keywords(before, analysis, positions, offset);
    }
    if analysis.document.language == Language::Shell {
        return flags(&analysis.text, positions, offset);
    }
    if analysis.document.language != Language::Yaml || analysis.format == Format::Unknown {
        return Vec::new();
    }
    let Some(context) = yaml_context(&analysis.text, offset) else { return Vec::new() };
    let path: Vec<&str> = context.path.iter().map(String::as_str).collect();
    match context.writing {
        Writing::Key { prefix } => properties_at(analysis.format, &path)
            .into_iter()
            .filter(|p| !p.deprecated && !context.siblings.contains(&p.name))
            .map(|p| {
                let edit = TextEdit::new(positions.range(prefix), format!("{}: ", p.name));
                item(&p, p.name.clone(), CompletionItemKind::PROPERTY, edit)
            })
            .collect(),
        Writing::Value { key, prefix } => {
            let mut key_path = path;
            key_path.push(&key);
            let Some(doc) = property_doc(analysis.format, &key_path) else { return Vec::new() };
            values(&doc)
                .into_iter()
                .map(|value| {
                    let text = spell(&value);
                    let edit = TextEdit::new(positions.range(prefix), text.clone());
                    item(&doc, text, CompletionItemKind::VALUE, edit)
                })
                .collect()
        }
    }
}

/// The keyword arguments of the recognized call whose argument list holds the cursor.
fn keywords(before: &str, analysis: &Analysis, positions: &Positions, offset: usize) -> Vec<CompletionItem> {
    let source = format!("{before}{}", analysis.text);
    let Some(call) = open_call(&source, before.len() + offset) else { return Vec::new() };
    // The file's own program resolves its imports; a notebook cell's needs the cells above.
    let parsed;
    let program = match analysis.document.program.as_deref() {
        Some(program) if before.is_empty() => program,
        _ => {
            parsed = crate::syntax::python::program(&source);
            &parsed
        }
    };
    let Some(callee) = python::Callee::from_path(&program.resolve(call.path.clone())) else { return Vec::new() };
    let prefix = Span::new(call.prefix.start.saturating_sub(before.len()), call.prefix.end - before.len());
    schema::keywords::keywords(callee)
        .into_iter()
        .filter(|p| !call.given.contains(&p.name))
        .map(|p| {
            let edit = TextEdit::new(positions.range(prefix), format!("{}=", p.name));
            item(&p, p.name.clone(), CompletionItemKind::PROPERTY, edit)
        })
        .collect()
}

/// The flags or overrides of the launch command under the cursor in a shell script.
fn flags(text: &str, positions: &Positions, offset: usize) -> Vec<CompletionItem> {
    let Some(completion) = schema::flags::complete(text, offset) else { return Vec::new() };
    let range = positions.range(completion.replace);
    completion
        .items
        .into_iter()
        .map(|flag| {
            let edit = TextEdit::new(range, flag.text.clone());
            let mut item = item(&flag.doc, flag.label.clone(), CompletionItemKind::PROPERTY, edit);
            // What the word typed so far is matched against (`+key`, `--flag`).
            let filter = flag.text.trim_end_matches('=');
            if filter != flag.label {
                item.filter_text = Some(filter.to_string());
            }
            item
        })
        .collect()
}

/// The enum's values; `true`/`false` for a boolean (known from its default).
fn values(doc: &PropertyDoc) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for value in &doc.enum_values {
        if !out.contains(value) {
            out.push(value.clone());
        }
    }
    if out.is_empty() && doc.default.as_ref().is_some_and(Value::is_boolean) {
        out = vec![Value::Bool(true), Value::Bool(false)];
    }
    out
}

fn item(doc: &PropertyDoc, label: String, kind: CompletionItemKind, edit: TextEdit) -> CompletionItem {
    let markdown = property_markdown(doc);
    CompletionItem {
        label,
        kind: Some(kind),
        detail: doc.default.as_ref().map(|d| format!("default: {}", spell(d))),
        documentation: (!markdown.is_empty())
            .then_some(Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: markdown })),
        text_edit: Some(CompletionTextEdit::Edit(edit)),
        ..CompletionItem::default()
    }
}
