//! Character index → byte offset, for parsers that count characters.

/// Converts character indices into byte offsets of one text in O(stride) per lookup,
/// with a checkpoint every `STRIDE` characters (identity for ASCII texts).
pub(crate) struct CharOffsets<'a> {
    text: &'a str,
    checkpoints: Vec<usize>,
    ascii: bool,
}

const STRIDE: usize = 256;

impl<'a> CharOffsets<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let ascii = text.is_ascii();
        let checkpoints =
            if ascii { Vec::new() } else { text.char_indices().step_by(STRIDE).map(|(byte, _)| byte).collect() };
        Self { text, checkpoints, ascii }
    }

    /// Byte offset of the character at `index` (the text's length past the end).
    pub(crate) fn byte(&self, index: usize) -> usize {
        if self.ascii {
            return index.min(self.text.len());
        }
        let Some(&base) = self.checkpoints.get(index / STRIDE) else {
            return self.text.len();
        };
        self.text[base..].char_indices().nth(index % STRIDE).map_or(self.text.len(), |(offset, _)| base + offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_characters_to_bytes() {
        let text = "é".repeat(600) + "x";
        let offsets = CharOffsets::new(&text);
        assert_eq!(offsets.byte(0), 0);
        assert_eq!(offsets.byte(1), 2);
        assert_eq!(offsets.byte(600), 1200);
        assert_eq!(offsets.byte(601), text.len());
        assert_eq!(offsets.byte(10_000), text.len());
        assert_eq!(CharOffsets::new("abc").byte(2), 2);
    }
}
