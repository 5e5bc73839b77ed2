//! oomlint findings as LSP diagnostics.
//!
//! Each diagnostic carries `source: "oomlint"`, the rule code, related locations and
//! `data: {"rule": name, "fixes": [...]}` with every fix already in LSP ranges, so code
//! actions are built from the diagnostic alone, never by linting again.

use super::convert::Positions;
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::{
    self as lsp, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, TextEdit, Uri,
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
}

impl FixData {
    pub fn is_safe(&self) -> bool {
        self.applicability == "safe"
    }
}

pub fn applicability_name(applicability: Applicability) -> &'static str {
    match applicability {
        Applicability::Safe => "safe",
        Applicability::Unsafe => "unsafe",
        Applicability::Display => "display",
    }
}

/// A fix's edits in LSP ranges.
pub fn fix_data(fix: &Fix, positions: &Positions) -> FixData {
    FixData {
        title: fix.title.clone(),
        applicability: applicability_name(fix.applicability).to_string(),
        edits: fix.edits.iter().map(|e| TextEdit::new(positions.range(e.span), e.content.clone())).collect(),
    }
}

pub fn to_lsp(diagnostic: &Diagnostic, uri: &Uri, positions: &Positions) -> lsp::Diagnostic {
    let data = DiagnosticData {
        rule: diagnostic.rule.to_string(),
        fixes: diagnostic.fixes.iter().map(|f| fix_data(f, positions)).collect(),
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
