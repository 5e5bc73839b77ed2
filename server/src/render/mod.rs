//! Renderers of diagnostics: line and column exist only here.

pub mod estimate;
pub mod explain;
pub mod full;
pub mod github;
pub mod html;
pub mod json;
pub mod sarif;

use crate::analysis::Analysis;
use crate::span::{ColumnUnit, LineCol, Span};
use crate::syntax::{notebook, Language};

/// 1-based start and end positions of a span, columns in Unicode scalar values.
pub fn range(analysis: &Analysis, span: Span) -> (LineCol, LineCol) {
    let at = |offset| {
        let p = analysis.line_index.position(&analysis.text, offset, ColumnUnit::Char);
        LineCol { line: p.line + 1, column: p.column + 1 }
    };
    (at(span.start), at(span.end))
}

/// `path:line:col: CODE name: message`, one line per finding; in notebooks
/// `path:cell N:line:col:` with the line and column inside the code cell.
pub fn concise(analysis: &Analysis, out: &mut String) {
    let notebook = analysis.document.language == Language::Notebook;
    for d in &analysis.diagnostics {
        let in_cell = notebook.then(|| notebook::cell_position(&analysis.text, d.span.start)).flatten();
        let place = match in_cell {
            Some((cell, line, column)) => format!("cell {cell}:{line}:{column}"),
            None => {
                let (start, _) = range(analysis, d.span);
                format!("{}:{}", start.line, start.column)
            }
        };
        out.push_str(&format!(
            "{}:{place}: {} {}: {}\n",
            analysis.path.display(),
            d.code,
            d.rule,
            d.message.replace('\n', " ")
        ));
    }
}
