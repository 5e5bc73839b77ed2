//! JSON output, version 1 (documented in the README; fields are added, never renamed).

use super::range;
use crate::analysis::Analysis;
use crate::diagnostic::Fix;
use serde_json::{json, Value};

fn position(p: crate::span::LineCol) -> Value {
    json!({"line": p.line, "column": p.column})
}

fn span_range(analysis: &Analysis, span: crate::span::Span) -> Value {
    let (start, end) = range(analysis, span);
    json!({"start": position(start), "end": position(end)})
}

pub fn fixes(analysis: &Analysis, fixes: &[Fix]) -> Value {
    fixes
        .iter()
        .map(|f| {
            json!({
                "title": f.title,
                "applicability": f.applicability,
                "edits": f.edits.iter().map(|e| json!({"range": span_range(analysis, e.span), "content": e.content})).collect::<Vec<_>>(),
            })
        })
        .collect()
}

pub fn file(analysis: &Analysis) -> Value {
    let diagnostics: Vec<Value> = analysis
        .diagnostics
        .iter()
        .map(|d| {
            json!({
                "code": d.code,
                "rule": d.rule,
                "severity": d.severity,
                "message": d.message,
                "range": span_range(analysis, d.span),
                "related": d.related.iter().map(|r| json!({"range": span_range(analysis, r.span), "message": r.message})).collect::<Vec<_>>(),
                "fixes": fixes(analysis, &d.fixes),
            })
        })
        .collect();
    json!({"path": analysis.path.display().to_string(), "format": analysis.format.name(), "diagnostics": diagnostics})
}

pub fn report(analyses: &[Analysis]) -> Value {
    json!({"version": 1, "files": analyses.iter().map(file).collect::<Vec<_>>()})
}
