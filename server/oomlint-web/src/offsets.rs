//! Byte offsets (inside) ↔ UTF-16 code units (JavaScript strings, CodeMirror).

/// The UTF-16 offset of every byte boundary of one text, computed once.
pub(crate) struct Utf16 {
    /// `None` for ASCII text, where both units agree.
    units_before_byte: Option<Vec<u32>>,
    len: usize,
}

impl Utf16 {
    pub(crate) fn new(text: &str) -> Utf16 {
        if text.is_ascii() {
            return Utf16 { units_before_byte: None, len: text.len() };
        }
        let mut table = vec![0u32; text.len() + 1];
        let mut units = 0u32;
        for (at, ch) in text.char_indices() {
            // Bytes inside a character map to the character's start.
            for slot in &mut table[at..at + ch.len_utf8()] {
                *slot = units;
            }
            units += ch.len_utf16() as u32;
        }
        table[text.len()] = units;
        Utf16 { units_before_byte: Some(table), len: text.len() }
    }

    /// The UTF-16 offset of byte `offset` (clamped to the text).
    pub(crate) fn units_at(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        match &self.units_before_byte {
            None => offset,
            Some(table) => table[offset] as usize,
        }
    }

    /// The byte offset of UTF-16 offset `units` (a position inside a surrogate pair maps to
    /// the character's start; past the end, to the end).
    pub(crate) fn byte_at(&self, units: usize) -> usize {
        match &self.units_before_byte {
            None => units.min(self.len),
            Some(table) => {
                let after = table.partition_point(|&u| (u as usize) <= units);
                let at = after.saturating_sub(1);
                // Back to the first byte with this unit count: a character's start.
                table[..=at].iter().rposition(|&u| u != table[at]).map_or(0, |i| i + 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Utf16;

    #[test]
    fn ascii_is_the_identity() {
        let map = Utf16::new("abc");
        assert_eq!((map.units_at(2), map.byte_at(2), map.units_at(9), map.byte_at(9)), (2, 2, 3, 3));
    }

    #[test]
    fn multibyte_and_astral_characters_count_as_javascript_does() {
        // é: 2 bytes, 1 unit; 🚀: 4 bytes, 2 units.
        let text = "aé🚀b";
        let map = Utf16::new(text);
        let js: Vec<usize> = [0, 1, 3, 7, 8].iter().map(|&b| map.units_at(b)).collect();
        assert_eq!(js, [0, 1, 2, 4, 5]);
        let bytes: Vec<usize> = [0, 1, 2, 3, 4, 5, 9].iter().map(|&u| map.byte_at(u)).collect();
        assert_eq!(bytes, [0, 1, 3, 3, 7, 8, 8]);
        assert_eq!(map.units_at(2), 1, "inside é maps to its start");
    }
}
