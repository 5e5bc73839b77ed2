//! Byte spans inside, line/column only at the edges.
//!
//! Every key, value and comment carries a [`Span`] (a half-open byte range into the
//! original text). [`LineIndex`] converts a byte offset into a 1-based line and a column
//! counted in bytes (UTF-8), UTF-16 code units or Unicode scalar values.

use serde::Serialize;

/// Where [`Span::linked`] places begin.
const LINKED_BASE: usize = 1 << 26;

/// A half-open byte range `[start, end)` into the analysed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, serde::Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    /// `local`, a byte range of linked file `file` (a file the analysed one is read with,
    /// indexing the plan's linked files), moved past any analysed text (files are at most
    /// 16 MiB), so that it never lands in this file and keeps its place in its own.
    pub(crate) fn linked(file: usize, local: Span) -> Span {
        let base = (file + 1) * LINKED_BASE;
        Span::new(base + local.start.min(LINKED_BASE - 1), base + local.end.min(LINKED_BASE - 1))
    }

    /// The linked file and the byte range in it of a [`Span::linked`] place.
    pub(crate) fn as_linked(self) -> Option<(usize, Span)> {
        (self.start >= LINKED_BASE).then(|| {
            let base = self.start / LINKED_BASE * LINKED_BASE;
            (self.start / LINKED_BASE - 1, Span::new(self.start - base, self.end.saturating_sub(base)))
        })
    }

    pub const fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    pub(crate) const fn empty(at: usize) -> Self {
        Self { start: at, end: at }
    }

    pub const fn len(&self) -> usize {
        self.end - self.start
    }

    pub const fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub const fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }

    /// The smallest span covering both.
    pub(crate) fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// How columns are counted at an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    /// UTF-8 bytes (LSP `utf-8` position encoding).
    Utf8,
    /// UTF-16 code units (LSP default).
    Utf16,
    /// Unicode scalar values (terminal output and JSON v1).
    Char,
}

/// A 0-based line and column; renderers add 1 where they print 1-based positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// Line starts of one text, for converting byte offsets to positions and back.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        Self { line_starts, len: text.len() }
    }

    fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where 0-based `line` starts, clamped to the text.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts.get(line).copied().unwrap_or(self.len)
    }

    /// 0-based line containing `offset` (offsets past the end map to the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    /// Byte range of 0-based `line` without its line terminator.
    pub fn line_span(&self, text: &str, line: usize) -> Span {
        let start = self.line_start(line);
        let mut end = self.line_start(line + 1);
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Span::new(start, end)
    }

    /// Position of `offset`, with the column counted in `unit`. An offset inside a
    /// multi-byte character is moved back to the character's start.
    pub fn position(&self, text: &str, offset: usize, unit: ColumnUnit) -> LineCol {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let prefix = &text[self.line_start(line)..offset];
        let column = match unit {
            ColumnUnit::Utf8 => prefix.len(),
            ColumnUnit::Utf16 => prefix.encode_utf16().count(),
            ColumnUnit::Char => prefix.chars().count(),
        };
        LineCol { line, column }
    }

    /// Byte offset of a 0-based position; columns past the line's end clamp to it,
    /// lines past the end clamp to the end of the text.
    pub fn offset(&self, text: &str, pos: LineCol, unit: ColumnUnit) -> usize {
        if pos.line >= self.line_count() {
            return text.len();
        }
        let line = self.line_span(text, pos.line);
        let line_text = &text[line.start..line.end];
        let mut counted = 0;
        for (i, ch) in line_text.char_indices() {
            if counted >= pos.column {
                return line.start + i;
            }
            counted += match unit {
                ColumnUnit::Utf8 => ch.len_utf8(),
                ColumnUnit::Utf16 => ch.len_utf16(),
                ColumnUnit::Char => 1,
            };
        }
        line.end
    }
}

/// The largest char boundary not after `offset`.
pub fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_in_each_unit() {
        let text = "a: 1\nkey: \"é😀x\"\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(text, x, ColumnUnit::Utf8), LineCol { line: 1, column: 12 });
        assert_eq!(index.position(text, x, ColumnUnit::Utf16), LineCol { line: 1, column: 9 });
        assert_eq!(index.position(text, x, ColumnUnit::Char), LineCol { line: 1, column: 8 });
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
            let pos = index.position(text, x, unit);
            assert_eq!(index.offset(text, pos, unit), x);
        }
    }

    #[test]
    fn offsets_clamp_and_snap_to_char_boundaries() {
        let text = "é\r\nb";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 1, ColumnUnit::Char), LineCol { line: 0, column: 0 });
        assert_eq!(index.line_span(text, 0), Span::new(0, 2));
        assert_eq!(index.offset(text, LineCol { line: 0, column: 99 }, ColumnUnit::Utf16), 2);
        assert_eq!(index.offset(text, LineCol { line: 9, column: 0 }, ColumnUnit::Utf16), text.len());
        assert_eq!(index.position(text, 999, ColumnUnit::Utf8), LineCol { line: 1, column: 1 });
    }
}
