//! SARIF 2.1.0 output (`--output-format sarif`), for code-scanning uploads.

use super::range;
use crate::analysis::Analysis;
use crate::diagnostic::{Fix, Severity};
use crate::rules::RULES;
use crate::span::LineCol;
use serde_json::{json, Value};
use std::path::Path;

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn region(analysis: &Analysis, span: crate::span::Span) -> Value {
    let (start, end) = range(analysis, span);
    region_of(start, end)
}

fn region_of(start: LineCol, end: LineCol) -> Value {
    json!({"startLine": start.line, "startColumn": start.column, "endLine": end.line, "endColumn": end.column})
}

fn location(analysis: &Analysis, span: crate::span::Span) -> Value {
    json!({"physicalLocation": {
        "artifactLocation": {"uri": uri(analysis)},
        "region": region(analysis, span),
    }})
}

/// A relative URI with forward slashes (SARIF wants URIs, not OS paths).
fn uri(analysis: &Analysis) -> String {
    path_uri(&analysis.path)
}

fn path_uri(path: &Path) -> String {
    let path = path.to_string_lossy().replace('\\', "/");
    path.strip_prefix("./").unwrap_or(&path).replace(' ', "%20")
}

/// A fix as SARIF's `fix`: one artifact change per file it edits (a launch's fix may edit
/// the config it names); None when an edit lies in no file the analysis read.
fn fix(analysis: &Analysis, fix: &Fix) -> Option<Value> {
    let changes: Vec<Value> = super::file_changes(analysis, &fix.edits)?
        .into_iter()
        .map(|change| {
            let uri = change.file.map_or_else(|| uri(analysis), |f| path_uri(Path::new(f)));
            let replacements: Vec<Value> = change
                .edits
                .into_iter()
                .map(|e| json!({"deletedRegion": region_of(e.start, e.end), "insertedContent": {"text": e.content}}))
                .collect();
            json!({"artifactLocation": {"uri": uri}, "replacements": replacements})
        })
        .collect();
    Some(json!({"description": {"text": fix.title}, "artifactChanges": changes}))
}

fn rules() -> Vec<Value> {
    RULES
        .iter()
        .map(|r| {
            let doc = r.doc();
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary()},
                "fullDescription": {"text": doc},
                "help": {"text": doc, "markdown": doc},
                "defaultConfiguration": {"level": level(r.severity)},
                "properties": {"category": r.category},
            })
        })
        .collect()
}

/// The message, then each note (SARIF has no place for text outside a location).
fn message(d: &crate::diagnostic::Diagnostic) -> String {
    std::iter::once(d.message.as_str()).chain(d.notes.iter().map(String::as_str)).collect::<Vec<_>>().join("\n\n")
}

pub fn report(analyses: &[Analysis]) -> Value {
    let results: Vec<Value> = analyses
        .iter()
        .flat_map(|a| a.diagnostics.iter().map(move |d| (a, d)))
        .map(|(a, d)| {
            let rule_index = RULES.iter().position(|r| r.code == d.code).unwrap_or(0);
            let fixes: Vec<Value> = d.fixes.iter().filter_map(|f| fix(a, f)).collect();
            json!({
                "ruleId": d.code,
                "ruleIndex": rule_index,
                "level": level(d.severity),
                "message": {"text": message(d)},
                "locations": [location(a, d.span)],
                "relatedLocations": d.related.iter().enumerate().map(|(i, r)| {
                    let mut loc = location(a, r.span);
                    loc["id"] = json!(i);
                    loc["message"] = json!({"text": r.message});
                    loc
                }).collect::<Vec<_>>(),
                "fixes": fixes,
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "oomlint",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/oomlint/oomlint",
                "rules": rules(),
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}
