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
    span_in(&analysis.text, &analysis.line_index, span)
}

/// 1-based start and end positions of `span` in `text` (indexed by `lines`), columns in
/// Unicode scalar values.
pub fn span_in(text: &str, lines: &LineIndex, span: Span) -> (LineCol, LineCol) {
    let at = |offset| {
        let p = lines.position(text, offset, ColumnUnit::Char);
        LineCol { line: p.line + 1, column: p.column + 1 }
    };
    (at(span.start), at(span.end))
}

/// One edit of a fix, with 1-based positions in the file it edits.
pub struct PlacedEdit {
    pub start: LineCol,
    pub end: LineCol,
    pub content: String,
}

/// A fix's edits of one file.
pub struct FileChange<'a> {
    /// The linked file edited (a config the launch names, or the launch that names the
    /// analysed config); None for the analysed file.
    pub file: Option<&'a str>,
    pub edits: Vec<PlacedEdit>,
}

/// A fix's edits by the file they edit, with 1-based ranges there (files without an edit left
/// out); None when one lies in no file the analysis read.
pub fn file_changes<'a>(analysis: &'a Analysis, edits: &[Edit]) -> Option<Vec<FileChange<'a>>> {
    let changes = analysis.edits_by_file(edits)?.into_iter().filter(|group| !group.edits.is_empty()).map(|group| {
        let (text, lines) = match group.linked {
            Some(linked) => (linked.text.as_str(), Cow::Owned(LineIndex::new(&linked.text))),
            None => (analysis.text.as_str(), Cow::Borrowed(&analysis.line_index)),
        };
        let edits = group
            .edits
            .into_iter()
            .map(|e| {
                let (start, end) = span_in(text, &lines, e.span);
                PlacedEdit { start, end, content: e.content }
            })
            .collect();
        FileChange { file: group.linked.map(|l| l.path.as_str()), edits }
    });
    Some(changes.collect())
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
