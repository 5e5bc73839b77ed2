//! Jaro-Winkler similarity for "did you mean" suggestions, with a cheap upper bound that
//! skips most candidates before the comparison.
//!
//! Scores are exactly those of `strsim::jaro_winkler` (the same matching, in the same
//! order, and the same arithmetic); words of up to 64 characters are matched with bit
//! masks instead of a nested scan. The bound: Jaro matches pair equal characters, so they
//! are at most the characters two words share (counted per bin of [`Word`]'s histogram),
//! and Winkler's prefix bonus is 0.1 × (common prefix, at most 4) × (1 − Jaro), which grows
//! with Jaro, so the bound's Jaro with the words' real prefix bounds it.

/// Histogram bins; characters fall into a bin by code point, so a bin's shared count can
/// only overstate the shared characters.
const BINS: usize = 64;

/// A word prepared for comparison: its characters and their histogram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    chars: Vec<char>,
    /// Characters per bin, saturating (see [`upper_bound`]).
    bins: [u16; BINS],
}

impl Word {
    pub(crate) fn new(text: &str) -> Word {
        let chars: Vec<char> = text.chars().collect();
        let mut bins = [0u16; BINS];
        for c in &chars {
            let bin = &mut bins[*c as usize % BINS];
            *bin = bin.saturating_add(1);
        }
        Word { chars, bins }
    }
}

/// The Jaro-Winkler similarity of `a` and `b` when it can reach `threshold`; None when
/// the bound rules that out (then the score is below `threshold`).
pub(crate) fn jaro_winkler_at_least(a: &Word, b: &Word, threshold: f64) -> Option<f64> {
    // The margin keeps a pair whose score equals the bound through rounding.
    (upper_bound(a, b) >= threshold - 1e-9).then(|| jaro_winkler(a, b))
}

/// `strsim::generic_jaro_winkler` on characters.
pub(crate) fn jaro_winkler(a: &Word, b: &Word) -> f64 {
    let (a, b) = (&a.chars, &b.chars);
    let jaro = if a.len() <= 64 && b.len() <= 64 { jaro_short(a, b) } else { strsim::generic_jaro(a, b) };
    if jaro <= 0.7 {
        return jaro;
    }
    jaro + 0.1 * common_prefix(a, b) as f64 * (1.0 - jaro)
}

/// Winkler's common prefix, at most 4 characters.
fn common_prefix(a: &[char], b: &[char]) -> usize {
    a.iter().take(4).zip(b).take_while(|(x, y)| x == y).count()
}

/// `strsim::generic_jaro` for words of at most 64 characters: each character of `a` takes
/// the first unmatched equal character of `b` within the search window, as there.
fn jaro_short(a: &[char], b: &[char]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let below = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let mut ascii = [0u64; 128];
    for (j, c) in b.iter().enumerate() {
        if let Some(positions) = ascii.get_mut(*c as usize) {
            *positions |= 1 << j;
        }
    }
    let positions = |c: char| match ascii.get(c as usize) {
        Some(positions) => *positions,
        None => b.iter().enumerate().filter(|(_, d)| **d == c).fold(0, |mask, (j, _)| mask | 1 << j),
    };
    let range = (a.len().max(b.len()) / 2).saturating_sub(1);
    let (mut a_matched, mut b_matched, mut matches) = (0u64, 0u64, 0usize);
    for (i, c) in a.iter().enumerate() {
        let window = below((i + range + 1).min(b.len())) & !below(i.saturating_sub(range));
        let free = positions(*c) & window & !b_matched;
        if free != 0 {
            b_matched |= 1 << free.trailing_zeros();
            a_matched |= 1 << i;
            matches += 1;
        }
    }
    if matches == 0 {
        return 0.0;
    }
    // The k-th matched character of `a` against the k-th of `b`.
    let mut transpositions = 0;
    while a_matched != 0 {
        let (i, j) = (a_matched.trailing_zeros() as usize, b_matched.trailing_zeros() as usize);
        transpositions += usize::from(a[i] != b[j]);
        a_matched &= a_matched - 1;
        b_matched &= b_matched - 1;
    }
    transpositions /= 2;
    ((matches as f64 / a.len() as f64)
        + (matches as f64 / b.len() as f64)
        + ((matches - transpositions) as f64 / matches as f64))
        / 3.0
}

/// An upper bound of the Jaro-Winkler similarity of `a` and `b`, without matching them.
pub(crate) fn upper_bound(a: &Word, b: &Word) -> f64 {
    if a.chars.is_empty() && b.chars.is_empty() {
        return 1.0;
    }
    // A saturated bin would understate what the words share; their lengths still bound it.
    let saturated = a.chars.len().max(b.chars.len()) >= usize::from(u16::MAX);
    let shared = if saturated {
        a.chars.len().min(b.chars.len())
    } else {
        a.bins.iter().zip(&b.bins).map(|(x, y)| u32::from(*x.min(y))).sum::<u32>() as usize
    };
    if shared == 0 {
        return 0.0;
    }
    let shared = shared as f64;
    let jaro = (shared / a.chars.len() as f64 + shared / b.chars.len() as f64 + 1.0) / 3.0;
    jaro + 0.1 * common_prefix(&a.chars, &b.chars) as f64 * (1.0 - jaro)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: &[&str] = &[
        "",
        "a",
        "precision",
        "precison",
        "micro_batch_size",
        "micro_batch_sise",
        "global_batch_size",
        "llama-3.1-8b-instruct",
        "llama-3.1-8c-instruct",
        "qwen2.5-7b",
        "qwen2.5-8b",
        "gemma-3-4b-it",
        "zzzz",
        "größe",
        "grösse",
        "learning_rate",
        "lr_scheduler_type",
        "gradient_checkpointing",
        "gradient_checkpoiting",
    ];

    #[test]
    fn scores_are_those_of_strsim_and_the_bound_never_hides_one() {
        for a in WORDS {
            for b in WORDS {
                let expected = strsim::jaro_winkler(a, b);
                let (wa, wb) = (Word::new(a), Word::new(b));
                assert!(upper_bound(&wa, &wb) >= expected - 1e-12, "{a} / {b}");
                for threshold in [0.0, 0.5, 0.8, 0.85, expected] {
                    match jaro_winkler_at_least(&wa, &wb, threshold) {
                        Some(score) => assert_eq!(score.to_bits(), expected.to_bits(), "{a} / {b}"),
                        None => assert!(expected < threshold, "{a} / {b} at {threshold}"),
                    }
                }
            }
        }
    }

    #[test]
    fn scores_match_strsim_on_generated_words() {
        // Short words over a small alphabet (many matches and transpositions), some longer
        // than 64 characters and some beyond ASCII.
        let alphabet = ['a', 'b', 'c', '-', '1', 'é', 'ß'];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |bound: usize| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % bound
        };
        for _ in 0..20_000 {
            let length = if next(10) == 0 { 60 + next(20) } else { next(14) };
            let a: String = (0..length).map(|_| alphabet[next(alphabet.len())]).collect();
            let length = if next(10) == 0 { 60 + next(20) } else { next(14) };
            let b: String = (0..length).map(|_| alphabet[next(alphabet.len())]).collect();
            let ours = jaro_winkler_at_least(&Word::new(&a), &Word::new(&b), 0.0);
            assert_eq!(ours.map(f64::to_bits), Some(strsim::jaro_winkler(&a, &b).to_bits()), "{a} / {b}");
        }
    }

    #[test]
    fn saturated_bins_still_bound_the_score() {
        let long = "a".repeat(usize::from(u16::MAX) + 10);
        for short in ["a", "aaaa", "ab"] {
            let expected = strsim::jaro_winkler(&long, short);
            assert!(upper_bound(&Word::new(&long), &Word::new(short)) >= expected, "{short}");
        }
    }

    #[test]
    fn the_bound_skips_words_without_enough_shared_characters() {
        let query = Word::new("micro_batch_sise");
        assert_eq!(jaro_winkler_at_least(&query, &Word::new("zzzz"), 0.8), None);
        assert_eq!(jaro_winkler_at_least(&query, &Word::new("qwen2.5-7b"), 0.8), None);
        assert!(jaro_winkler_at_least(&query, &Word::new("micro_batch_size"), 0.8).is_some());
    }
}
