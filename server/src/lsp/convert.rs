//! Byte spans ↔ LSP positions in the negotiated encoding, and URIs ↔ paths.
//!
//! Everything inside oomlint is a byte [`Span`]; positions exist only here. Offsets and
//! positions out of range clamp (to the line's end, or the text's end) instead of failing.

use crate::span::{ColumnUnit, LineCol, LineIndex, Span};
use std::path::PathBuf;
use tower_lsp_server::ls_types::{ClientCapabilities, Position, PositionEncodingKind, Range, Uri};

/// The position encoding agreed with the client: UTF-8 when it offers it, else UTF-16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    /// Picks UTF-8 when the client lists it in `general.positionEncodings`.
    pub fn negotiate(capabilities: &ClientCapabilities) -> Self {
        let offered = capabilities.general.as_ref().and_then(|g| g.position_encodings.as_ref());
        if offered.is_some_and(|kinds| kinds.contains(&PositionEncodingKind::UTF8)) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }

    fn unit(self) -> ColumnUnit {
        match self {
            Encoding::Utf8 => ColumnUnit::Utf8,
            Encoding::Utf16 => ColumnUnit::Utf16,
        }
    }
}

/// Converts between byte offsets of one text and LSP positions.
pub struct Positions<'a> {
    pub text: &'a str,
    pub index: &'a LineIndex,
    pub encoding: Encoding,
}

impl Positions<'_> {
    pub fn position(&self, offset: usize) -> Position {
        let LineCol { line, column } = self.index.position(self.text, offset, self.encoding.unit());
        Position::new(saturate(line), saturate(column))
    }

    pub fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    pub fn offset(&self, position: Position) -> usize {
        let pos = LineCol { line: position.line as usize, column: position.character as usize };
        self.index.offset(self.text, pos, self.encoding.unit())
    }

    /// The byte span of `range`, with the ends put in order.
    pub fn span(&self, range: Range) -> Span {
        let (a, b) = (self.offset(range.start), self.offset(range.end));
        Span::new(a.min(b), a.max(b))
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The path analysis sees for `uri`: the file path for `file:` URIs, otherwise the URI's
/// path (its file name still selects the language, e.g. `untitled:/train.yaml`).
pub fn uri_to_path(uri: &Uri) -> PathBuf {
    if uri.scheme().as_str().eq_ignore_ascii_case("file") {
        if let Some(path) = uri.to_file_path() {
            return path.into_owned();
        }
    }
    // A notebook cell (`vscode-notebook-cell:/dir/nb.ipynb#cell-id`) holds one cell's Python
    // source, not the notebook's JSON: read it as a Python script next to the notebook.
    if uri.scheme().as_str().eq_ignore_ascii_case("vscode-notebook-cell") {
        return PathBuf::from(format!("{}.cell.py", uri.path().as_str()));
    }
    PathBuf::from(uri.path().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notebook_cells_are_read_as_python() {
        let uri: Uri = "vscode-notebook-cell:/work/grpo.ipynb#W2sZmlsZQ%3D%3D".parse().unwrap();
        let path = uri_to_path(&uri);
        assert_eq!(crate::format::language_of(&path), Some(crate::syntax::Language::Python));
        assert!(path.starts_with("/work"));
    }

    #[test]
    fn positions_follow_the_encoding_and_clamp() {
        let text = "a: \"é😀\"\nb: 1\n";
        let index = LineIndex::new(text);
        let end_of_quote = text.find("\"\n").unwrap();
        for (encoding, column) in [(Encoding::Utf16, 7), (Encoding::Utf8, 10)] {
            let p = Positions { text, index: &index, encoding };
            assert_eq!(p.position(end_of_quote), Position::new(0, column));
            assert_eq!(p.offset(Position::new(0, column)), end_of_quote);
            assert_eq!(p.offset(Position::new(0, 999)), text.find('\n').unwrap());
            assert_eq!(p.offset(Position::new(99, 0)), text.len());
        }
    }

    #[test]
    fn uri_paths_keep_the_file_name() {
        let file: Uri = "file:///tmp/a%20b/train.yaml".parse().unwrap();
        assert_eq!(uri_to_path(&file), PathBuf::from("/tmp/a b/train.yaml"));
        let untitled: Uri = "untitled:/qlora.yaml".parse().unwrap();
        assert_eq!(uri_to_path(&untitled).file_name().unwrap(), "qlora.yaml");
    }
}
