//! JSON output, version 1 (documented in the README; fields are added, never renamed).
//!
//! The report borrows from the analyses and serializes straight to text (no
//! intermediate `serde_json::Value` tree); field order is the output's key order.

use super::range;
use crate::analysis::Analysis;
use crate::diagnostic::{Applicability, Fix, Severity};
use crate::span::{LineCol, Span};
use serde::Serialize;

#[derive(Serialize)]
struct Range {
    start: LineCol,
    end: LineCol,
}

fn span_range(analysis: &Analysis, span: Span) -> Range {
    let (start, end) = range(analysis, span);
    Range { start, end }
}

#[derive(Serialize)]
pub struct FixReport<'a> {
    title: &'a str,
    applicability: Applicability,
    edits: Vec<EditReport<'a>>,
}

#[derive(Serialize)]
struct EditReport<'a> {
    range: Range,
    content: String,
    /// The file edited when it is not the report's (a config the launch names, or the
    /// launch that names the config); left out for the report's own file.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

/// The fixes with their edits placed in the files they edit; a fix with an edit in no file
/// the analysis read is left out.
pub fn fixes<'a>(analysis: &'a Analysis, fixes: &'a [Fix]) -> Vec<FixReport<'a>> {
    fixes
        .iter()
        .filter_map(|f| {
            let edits = super::file_changes(analysis, &f.edits)?
                .into_iter()
                .flat_map(|change| {
                    change.edits.into_iter().map(move |e| EditReport {
                        range: Range { start: e.start, end: e.end },
                        content: e.content,
                        file: change.file,
                    })
                })
                .collect();
            Some(FixReport { title: &f.title, applicability: f.applicability, edits })
        })
        .collect()
}

#[derive(Serialize)]
struct RelatedReport<'a> {
    range: Range,
    message: &'a str,
}

#[derive(Serialize)]
struct DiagnosticReport<'a> {
    code: &'static str,
    rule: &'static str,
    severity: Severity,
    message: &'a str,
    range: Range,
    related: Vec<RelatedReport<'a>>,
    /// Text that belongs to no place (the memory findings' breakdown); left out when empty.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
    fixes: Vec<FixReport<'a>>,
}

#[derive(Serialize)]
pub struct FileReport<'a> {
    path: String,
    format: &'static str,
    diagnostics: Vec<DiagnosticReport<'a>>,
}

pub fn file(analysis: &Analysis) -> FileReport<'_> {
    let diagnostics = analysis
        .diagnostics
        .iter()
        .map(|d| DiagnosticReport {
            code: d.code,
            rule: d.rule,
            severity: d.severity,
            message: &d.message,
            range: span_range(analysis, d.span),
            related: d
                .related
                .iter()
                .map(|r| RelatedReport { range: span_range(analysis, r.span), message: &r.message })
                .collect(),
            notes: &d.notes,
            fixes: fixes(analysis, &d.fixes),
        })
        .collect();
    FileReport { path: analysis.path.display().to_string(), format: analysis.format.name(), diagnostics }
}

#[derive(Serialize)]
pub struct Report<'a> {
    version: u32,
    files: Vec<FileReport<'a>>,
}

pub fn report(analyses: &[Analysis]) -> Report<'_> {
    Report { version: 1, files: analyses.iter().map(file).collect() }
}
