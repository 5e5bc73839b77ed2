//! Jaro-Winkler similarity for "did you mean" suggestions, with a cheap upper bound that
//! skips most candidates before the quadratic comparison.
//!
//! Scores are exactly those of `strsim::jaro_winkler` (same algorithm, over characters).
//! The bound: Jaro matches pair equal characters, so they are at most the characters two
//! words share (counted per bin of [`Word`]'s histogram), and Winkler's prefix bonus adds
//! at most 0.4 × (1 − Jaro).

/// Histogram bins; characters fall into a bin by code point, so a bin's shared count can
/// only overstate the shared characters.
const BINS: usize = 64;

/// A word prepared for comparison: its characters and their histogram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    chars: Vec<char>,
    bins: [u32; BINS],
}

impl Word {
    pub fn new(text: &str) -> Word {
        let chars: Vec<char> = text.chars().collect();
        let mut bins = [0u32; BINS];
        for c in &chars {
            let bin = &mut bins[*c as usize % BINS];
            *bin = bin.saturating_add(1);
        }
        Word { chars, bins }
    }
}

/// The Jaro-Winkler similarity of `a` and `b` when it can reach `threshold`; None when
/// the bound rules that out (then the score is below `threshold`).
pub fn jaro_winkler_at_least(a: &Word, b: &Word, threshold: f64) -> Option<f64> {
    // The margin keeps a pair whose score equals the bound through rounding.
    (upper_bound(a, b) >= threshold - 1e-9).then(|| strsim::generic_jaro_winkler(&a.chars, &b.chars))
}

/// An upper bound of the Jaro-Winkler similarity of `a` and `b`.
fn upper_bound(a: &Word, b: &Word) -> f64 {
    let shared: u64 = a.bins.iter().zip(&b.bins).map(|(x, y)| u64::from(*x.min(y))).sum();
    if a.chars.is_empty() && b.chars.is_empty() {
        return 1.0;
    }
    if shared == 0 {
        return 0.0;
    }
    let shared = shared as f64;
    let jaro = (shared / a.chars.len() as f64 + shared / b.chars.len() as f64 + 1.0) / 3.0;
    jaro + 0.4 * (1.0 - jaro)
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
    fn the_bound_skips_words_without_enough_shared_characters() {
        let query = Word::new("micro_batch_sise");
        assert_eq!(jaro_winkler_at_least(&query, &Word::new("zzzz"), 0.8), None);
        assert_eq!(jaro_winkler_at_least(&query, &Word::new("qwen2.5-7b"), 0.8), None);
        assert!(jaro_winkler_at_least(&query, &Word::new("micro_batch_size"), 0.8).is_some());
    }
}
