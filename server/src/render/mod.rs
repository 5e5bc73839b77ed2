//! Renderers of diagnostics: line and column exist only here.

pub mod estimate;
pub mod full;
pub mod github;
pub mod json;
pub mod sarif;

use crate::analysis::Analysis;
use crate::span::{ColumnUnit, LineCol, Span};

/// 1-based start and end positions of a span, columns in Unicode scalar values.
pub fn range(analysis: &Analysis, span: Span) -> (LineCol, LineCol) {
    let at = |offset| {
        let p = analysis.line_index.position(&analysis.text, offset, ColumnUnit::Char);
        LineCol { line: p.line + 1, column: p.column + 1 }
    };
    (at(span.start), at(span.end))
}

/// `path:line:col: CODE name: message`, one line per finding.
pub fn concise(analysis: &Analysis, out: &mut String) {
    for d in &analysis.diagnostics {
        let (start, _) = range(analysis, d.span);
        out.push_str(&format!(
            "{}:{}:{}: {} {}: {}\n",
            analysis.path.display(),
            start.line,
            start.column,
            d.code,
            d.rule,
            d.message.replace('\n', " ")
        ));
    }
}
