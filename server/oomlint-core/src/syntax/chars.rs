//! Character index → byte offset, for parsers that count characters.

use std::cell::Cell;

/// Converts character indices into byte offsets of one text (identity for ASCII texts).
/// A parser asks in nearly increasing order, so each lookup walks on from the previous
/// answer, or from a checkpoint every `STRIDE` characters when that is nearer.
pub(crate) struct CharOffsets<'a> {
    text: &'a str,
    checkpoints: Vec<usize>,
    ascii: bool,
    /// The last answer: (character index, byte offset).
    cursor: Cell<(usize, usize)>,
}

const STRIDE: usize = 256;

impl<'a> CharOffsets<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let ascii = text.is_ascii();
        let checkpoints =
            if ascii { Vec::new() } else { text.char_indices().step_by(STRIDE).map(|(byte, _)| byte).collect() };
        Self { text, checkpoints, ascii, cursor: Cell::new((0, 0)) }
    }

    /// Byte offset of the character at `index` (the text's length past the end).
    pub(crate) fn byte(&self, index: usize) -> usize {
        if self.ascii {
            return index.min(self.text.len());
        }
        let Some(&checkpoint) = self.checkpoints.get(index / STRIDE) else {
            return self.text.len();
        };
        let from_checkpoint = (index - index % STRIDE, checkpoint);
        let (char_at, byte_at) = match self.cursor.get() {
            cursor if cursor.0 <= index && cursor.0 > from_checkpoint.0 => cursor,
            _ => from_checkpoint,
        };
        let byte = self.text[byte_at..]
            .char_indices()
            .nth(index - char_at)
            .map_or(self.text.len(), |(offset, _)| byte_at + offset);
        self.cursor.set((index, byte));
        byte
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

    #[test]
    fn any_order_of_lookups_gives_char_indices() {
        let text: String = (0..2_000).map(|i| ['a', 'é', '€', '𝄞'][i % 4 * (i % 7) % 4]).collect();
        let expected: Vec<usize> = text.char_indices().map(|(byte, _)| byte).chain([text.len()]).collect();
        let offsets = CharOffsets::new(&text);
        // Forward, backward, jumps across checkpoints, repeats.
        let mut state: u64 = 7;
        for step in 0..5_000usize {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let index = if step % 3 == 0 { (state >> 33) as usize % expected.len() } else { step % expected.len() };
            assert_eq!(offsets.byte(index), expected[index], "character {index}");
        }
        assert_eq!(offsets.byte(expected.len() + 5), text.len());
    }
}
