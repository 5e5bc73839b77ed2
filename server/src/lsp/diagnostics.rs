//! oomlint findings as LSP diagnostics.
//!
//! Each diagnostic carries `source: "oomlint"`, the rule code, related locations and
//! `data: {"rule": name, "fixes": [...]}` with every fix already in LSP ranges, so code
//! actions are built from the diagnostic alone, never by linting again.

use super::convert::Positions;
use crate::analysis::edits_by_file;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix, Severity};
use crate::model::LinkedFile;
use crate::span::LineIndex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tower_lsp_server::ls_types::{
    self as lsp, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, TextEdit, Uri,
    WorkspaceEdit,
};

pub const SOURCE: &str = "oomlint";

/// What `data` holds on every published diagnostic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticData {
    pub rule: String,
    pub fixes: Vec<FixData>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixData {
    pub title: String,
    /// `safe`, `unsafe` or `display`.
    pub applicability: String,
    pub edits: Vec<TextEdit>,
    /// Edits of the files the document was read with (the config its launch names, or the
    /// launch that names it), where the value a fix changes is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_files: Vec<OtherFile>,
}

/// A fix's edits of another file than the document's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherFile {
    pub uri: Uri,
    pub edits: Vec<TextEdit>,
}

impl FixData {
    pub fn is_safe(&self) -> bool {
        self.applicability == "safe"
    }

    /// The fix as a workspace edit of the document at `uri` and the other files it edits.
    pub fn workspace_edit(&self, uri: &Uri) -> WorkspaceEdit {
        let mut changes = HashMap::from([(uri.clone(), self.edits.clone())]);
        for other in &self.other_files {
            changes.entry(other.uri.clone()).or_default().extend(other.edits.iter().cloned());
        }
        changes.retain(|_, edits| !edits.is_empty());
        WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() }
    }
}

pub fn applicability_name(applicability: Applicability) -> &'static str {
    match applicability {
        Applicability::Safe => "safe",
        Applicability::Unsafe => "unsafe",
        Applicability::Display => "display",
    }
}

/// A fix's edits in LSP ranges, in the document (`positions`) and in the files it was read
/// with (`linked`); None when an edit lies in no file read, or in one without a file URI.
pub fn fix_data(fix: &Fix, positions: &Positions, linked: &[LinkedFile]) -> Option<FixData> {
    let text_edits = |edits: &[Edit], p: &Positions| -> Vec<TextEdit> {
        edits.iter().map(|e| TextEdit::new(p.range(e.span), e.content.clone())).collect()
    };
    let mut data = FixData {
        title: fix.title.clone(),
        applicability: applicability_name(fix.applicability).to_string(),
        edits: Vec::new(),
        other_files: Vec::new(),
    };
    for group in edits_by_file(linked, &fix.edits)? {
        match group.linked {
            None => data.edits = text_edits(&group.edits, positions),
            Some(file) => {
                let uri = Uri::from_file_path(std::path::absolute(&file.path).ok()?)?;
                let index = LineIndex::new(&file.text);
                let p = Positions { text: &file.text, index: &index, encoding: positions.encoding };
                data.other_files.push(OtherFile { uri, edits: text_edits(&group.edits, &p) });
            }
        }
    }
    Some(data)
}

pub fn to_lsp(diagnostic: &Diagnostic, uri: &Uri, positions: &Positions, linked: &[LinkedFile]) -> lsp::Diagnostic {
    let data = DiagnosticData {
        rule: diagnostic.rule.to_string(),
        fixes: diagnostic.fixes.iter().filter_map(|f| fix_data(f, positions, linked)).collect(),
    };
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), positions.range(r.span)),
            message: r.message.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range: positions.range(diagnostic.span),
        severity: Some(severity(diagnostic.severity)),
        code: Some(NumberOrString::String(diagnostic.code.to_string())),
        code_description: None,
        source: Some(SOURCE.to_string()),
        message: diagnostic.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: serde_json::to_value(data).ok(),
    }
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// The rule code and data of a diagnostic this server published; `None` for others.
pub fn ours(diagnostic: &lsp::Diagnostic) -> Option<(String, DiagnosticData)> {
    if diagnostic.source.as_deref() != Some(SOURCE) {
        return None;
    }
    let code = match diagnostic.code.as_ref()? {
        NumberOrString::String(code) => code.clone(),
        NumberOrString::Number(_) => return None,
    };
    let data = serde_json::from_value(diagnostic.data.clone()?).ok()?;
    Some((code, data))
}

/// Whether two ranges share a line (code actions apply to the lines the cursor is on).
pub fn lines_overlap(a: Range, b: Range) -> bool {
    a.start.line <= b.end.line && b.start.line <= a.end.line
}
