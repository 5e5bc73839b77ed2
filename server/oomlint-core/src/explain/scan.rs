//! Reading a log the way a person does: without colours, without `[rankN]:` prefixes,
//! following one rank's lines even when ranks interleave, and across wrapped lines.
//!
//! The message parser works on *compact* text: one stream's lines with ANSI escapes,
//! rank prefixes and all whitespace removed, each kept byte remembering its offset in
//! the original log. That makes a message wrapped mid-word (`capa` / `city`) or at a
//! space read the same as an unwrapped one.

/// How many lines of other ranks may separate two lines of one stream (64 ranks interleaving
/// line by line, with room to spare); further apart they are not one message or traceback.
pub(crate) const MAX_STREAM_GAP: usize = 256;

/// One line of the log.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// Byte range of the line without its `\n`.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Byte offset where the content starts, after leading ANSI escapes and a rank prefix.
    pub(crate) body: usize,
    /// The `N` of a `[rankN]:` / `[defaultN]:` prefix.
    pub(crate) rank: Option<u32>,
}

/// The lines of a log, with one stream (line indices) per rank prefix.
pub(crate) struct Log<'a> {
    pub(crate) text: &'a str,
    pub(crate) lines: Vec<Line>,
}

impl<'a> Log<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                lines.push(Line::read(text, start, i));
                start = i + 1;
            }
        }
        if start < text.len() {
            lines.push(Line::read(text, start, text.len()));
        }
        Self { text, lines }
    }

    /// The line's content after its prefix, with ANSI escapes still in place.
    pub(crate) fn body(&self, line: usize) -> &'a str {
        let l = &self.lines[line];
        self.text.get(l.body..l.end).unwrap_or("")
    }

    /// The line's content after its prefix, without ANSI escapes, `\r` or surrounding whitespace.
    pub(crate) fn clean(&self, line: usize) -> String {
        let l = &self.lines[line];
        let mut out = Vec::with_capacity(l.end - l.body);
        for_each_visible(self.text.as_bytes(), l.body, l.end, |b, _| out.push(b));
        String::from_utf8_lossy(&out).trim().replace('\r', "")
    }

    /// The next line after `line` with the same rank prefix (within [`MAX_STREAM_GAP`] lines).
    pub(crate) fn next_in_stream(&self, line: usize) -> Option<usize> {
        let rank = self.lines.get(line)?.rank;
        let end = self.lines.len().min(line + 1 + MAX_STREAM_GAP);
        (line + 1..end).find(|&j| self.lines[j].rank == rank)
    }

    /// The previous line before `line` with the same rank prefix (within [`MAX_STREAM_GAP`] lines).
    pub(crate) fn prev_in_stream(&self, line: usize) -> Option<usize> {
        let rank = self.lines.get(line)?.rank;
        (line.saturating_sub(MAX_STREAM_GAP)..line).rev().find(|&j| self.lines[j].rank == rank)
    }

    /// Compact text of up to `max_lines` lines of `first`'s stream, starting with the last
    /// `first_tail` bytes of `first` and stopping once `max_bytes` are collected.
    pub(crate) fn compact(&self, first: usize, first_tail: usize, max_lines: usize, max_bytes: usize) -> Compact {
        let mut compact = Compact::default();
        let mut line = Some(first);
        let mut taken = 0;
        while let Some(l) = line {
            if taken == max_lines || compact.bytes.len() >= max_bytes {
                break;
            }
            let info = &self.lines[l];
            let from = if l == first { info.body.max(info.end.saturating_sub(first_tail)) } else { info.body };
            for_each_visible(self.text.as_bytes(), from, info.end, |b, at| {
                if !b.is_ascii_whitespace() {
                    compact.bytes.push(b);
                    compact.offsets.push(at);
                }
            });
            taken += 1;
            line = self.next_in_stream(l);
        }
        compact
    }

    /// 0-based index of the line containing byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.lines.partition_point(|l| l.start <= offset).saturating_sub(1)
    }
}

impl Line {
    fn read(text: &str, start: usize, end: usize) -> Line {
        let bytes = text.as_bytes();
        let mut at = start;
        // Leading colour codes and spaces before a prefix.
        loop {
            if let Some(next) = escape_end(bytes, at, end) {
                at = next;
            } else if at < end && (bytes[at] == b' ' || bytes[at] == b'\r') {
                at += 1;
            } else {
                break;
            }
        }
        match rank_prefix(&bytes[at..end]) {
            Some((rank, len)) => Line { start, end, body: at + len, rank: Some(rank) },
            None => Line { start, end, body: start, rank: None },
        }
    }
}

/// `[rank3]:` or `[default3]:` (torchrun's prefixes): the rank and the prefix length.
fn rank_prefix(bytes: &[u8]) -> Option<(u32, usize)> {
    let rest = bytes.strip_prefix(b"[")?;
    let word = if rest.starts_with(b"rank") {
        4
    } else if rest.starts_with(b"default") {
        7
    } else {
        return None;
    };
    let digits = rest[word..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || rest.get(word + digits..word + digits + 2) != Some(b"]:") {
        return None;
    }
    let rank = std::str::from_utf8(&rest[word..word + digits]).ok()?.parse().ok()?;
    Some((rank, 1 + word + digits + 2))
}

/// Where the escape sequence starting at `at` ends, if one starts there.
fn escape_end(bytes: &[u8], at: usize, end: usize) -> Option<usize> {
    if bytes.get(at) != Some(&0x1b) || at + 1 >= end {
        return (bytes.get(at) == Some(&0x1b)).then_some(end.min(at + 1));
    }
    match bytes[at + 1] {
        // CSI: parameters and intermediates, then one final byte.
        b'[' => {
            let mut i = at + 2;
            while i < end && (0x20..=0x3f).contains(&bytes[i]) {
                i += 1;
            }
            Some((i + 1).min(end))
        }
        // OSC (hyperlinks, titles): up to BEL or ESC \.
        b']' => {
            let mut i = at + 2;
            while i < end {
                if bytes[i] == 0x07 {
                    return Some(i + 1);
                }
                if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'\\') {
                    return Some((i + 2).min(end));
                }
                i += 1;
            }
            Some(end)
        }
        _ => Some(at + 2),
    }
}

#[cfg(test)]
thread_local! {
    /// Bytes of the log read by [`for_each_visible`] on this thread: every line read, cleaned
    /// or compacted goes through it, so tests bound a scan's work by counting, not by the clock.
    pub(crate) static BYTES_READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Calls `f` with each byte of `start..end` outside escape sequences, and its offset.
fn for_each_visible(bytes: &[u8], start: usize, end: usize, mut f: impl FnMut(u8, usize)) {
    #[cfg(test)]
    BYTES_READ.with(|read| read.set(read.get() + end.saturating_sub(start)));
    let mut i = start;
    while i < end {
        if let Some(next) = escape_end(bytes, i, end) {
            i = next;
            continue;
        }
        f(bytes[i], i);
        i += 1;
    }
}

/// Whitespace-free text with the original offset of each byte.
#[derive(Debug, Default)]
pub(crate) struct Compact {
    pub(crate) bytes: Vec<u8>,
    pub(crate) offsets: Vec<usize>,
}

impl Compact {
    /// Original byte range covering compact bytes `from..to` (`to` exclusive), ending on a char boundary.
    pub(crate) fn original_span(&self, text: &str, from: usize, to: usize) -> crate::span::Span {
        let start = self.offsets.get(from).copied().unwrap_or(text.len());
        let mut end = to.checked_sub(1).and_then(|last| self.offsets.get(last)).map_or(start, |&o| o + 1);
        while end < text.len() && !text.is_char_boundary(end) {
            end += 1;
        }
        crate::span::Span::new(start, end.max(start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_colours_are_stripped() {
        let text = "\x1b[31m[rank1]: Traceback\x1b[0m\n[default0]:x\nplain [rank2]: not a prefix\n[rank]: no digits";
        let log = Log::new(text);
        assert_eq!(log.lines.len(), 4);
        assert_eq!(log.lines[0].rank, Some(1));
        assert_eq!(log.clean(0), "Traceback");
        assert_eq!(log.lines[1].rank, Some(0));
        assert_eq!(log.lines[2].rank, None);
        assert_eq!(log.lines[3].rank, None);
        assert_eq!(log.clean(3), "[rank]: no digits");
    }

    #[test]
    fn streams_follow_one_rank() {
        let text = "[rank0]: a\n[rank1]: b\n[rank0]: c\nd\n[rank1]: e";
        let log = Log::new(text);
        assert_eq!(log.next_in_stream(0), Some(2));
        assert_eq!(log.next_in_stream(1), Some(4));
        assert_eq!(log.prev_in_stream(4), Some(1));
        assert_eq!(log.next_in_stream(2), None);
        let compact = log.compact(0, usize::MAX, 10, 1000);
        assert_eq!(compact.bytes, b"ac");
        assert_eq!(compact.original_span(text, 0, 2), crate::span::Span::new(9, 32));
    }

    #[test]
    fn escapes_never_overrun() {
        for text in ["\x1b", "\x1b[", "\x1b]8;;", "[rank1]:\x1b[3", "\x1b]0;t\x07x", "é\x1b[1mé"] {
            let log = Log::new(text);
            let compact = log.compact(0, usize::MAX, 10, 1000);
            for &o in &compact.offsets {
                assert!(o < text.len());
            }
        }
        let log = Log::new("\x1b]0;title\x07x\x1b[1;31my\x1b[0m");
        assert_eq!(log.compact(0, usize::MAX, 1, 100).bytes, b"xy");
    }
}
