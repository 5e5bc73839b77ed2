//! Renderers of diagnostics: line and column exist only here.

pub mod estimate;
pub mod explain;
pub mod full;
pub mod github;
pub mod html;
pub mod json;
pub mod sarif;

use crate::analysis::Analysis;
use crate::diagnostic::Edit;
use crate::span::{ColumnUnit, LineCol, LineIndex, Span};
use crate::syntax::{notebook, Language};
use std::borrow::Cow;

/// 1-based start and end positions of a span, columns in Unicode scalar values.
pub fn range(analysis: &Analysis, span: Span) -> (LineCol, LineCol) {
    let at = |offset| {
        let p = analysis.line_index.position(&analysis.text, offset, ColumnUnit::Char);
        LineCol { line: p.line + 1, column: p.column + 1 }
    };
    (at(span.start), at(span.end))
}

/// One edit of a fix, in the file it edits.
pub struct PlacedEdit<'a> {
    /// The linked file it edits (a config the launch names, or the launch that names the
    /// analysed config); None for the analysed file.
    pub file: Option<&'a str>,
    pub start: LineCol,
    pub end: LineCol,
    pub content: String,
}

/// A fix's edits with 1-based ranges in the files they edit; None when one lies in no file
/// the analysis read.
pub fn placed_edits<'a>(analysis: &'a Analysis, edits: &[Edit]) -> Option<Vec<PlacedEdit<'a>>> {
    let mut out = Vec::new();
    for group in analysis.edits_by_file(edits)? {
        let (text, lines) = match group.linked {
            Some(linked) => (linked.text.as_str(), Cow::Owned(LineIndex::new(&linked.text))),
            None => (analysis.text.as_str(), Cow::Borrowed(&analysis.line_index)),
        };
        let at = |offset| {
            let p = lines.position(text, offset, ColumnUnit::Char);
            LineCol { line: p.line + 1, column: p.column + 1 }
        };
        out.extend(group.edits.into_iter().map(|e| PlacedEdit {
            file: group.linked.map(|l| l.path.as_str()),
            start: at(e.span.start),
            end: at(e.span.end),
            content: e.content,
        }));
    }
    Some(out)
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
