//! Applying fixes: byte edits on the original text, repeated until nothing changes (the
//! leaves write the result back, through one atomic writer).
//!
//! A fix is applied whole or not at all; one that overlaps an edit already taken in the
//! same round is left for the next round (the text is re-analysed in between). Bytes
//! outside the edits are never touched, so comments, quoting, indentation and key order
//! survive.

use crate::analysis::{analyze_text, Options};
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::span::Span;
use std::path::Path;

/// Rounds of fix → re-analyse before giving up on convergence.
pub const MAX_ROUNDS: usize = 10;

/// The result of applying a set of fixes once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub text: String,
    /// How many fixes were applied.
    pub count: usize,
}

fn overlaps(a: Span, b: Span) -> bool {
    (a.start < b.end && b.start < a.end) || (a.start == b.start && (a.is_empty() || b.is_empty()))
}

/// Applies `fixes` in order to `text`, skipping a fix that overlaps an earlier one or
/// that has an edit outside the text or off a character boundary.
pub fn apply(text: &str, fixes: &[&Fix]) -> Applied {
    let mut taken: Vec<&Edit> = Vec::new();
    let mut count = 0;
    for fix in fixes {
        let valid = fix.edits.iter().all(|e| {
            e.span.start <= e.span.end && text.is_char_boundary(e.span.start) && text.is_char_boundary(e.span.end)
        });
        let free = fix.edits.iter().enumerate().all(|(i, e)| {
            !taken.iter().any(|t| overlaps(t.span, e.span)) && !fix.edits[..i].iter().any(|o| overlaps(o.span, e.span))
        });
        if valid && free && !fix.edits.is_empty() {
            taken.extend(&fix.edits);
            count += 1;
        }
    }
    taken.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in taken {
        out.push_str(&text[at..edit.span.start]);
        out.push_str(&edit.content);
        at = edit.span.end;
    }
    out.push_str(&text[at..]);
    Applied { text: out, count }
}

/// The first fix of each finding that is at least as safe as `minimum`.
fn fixes_at_least(diagnostics: &[Diagnostic], minimum: Applicability) -> Vec<&Fix> {
    diagnostics.iter().filter_map(|d| d.fixes.iter().find(|f| f.applicability >= minimum)).collect()
}

/// The outcome of fixing one file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    pub text: String,
    /// Fixes applied over all rounds.
    pub count: usize,
    pub rounds: usize,
    /// Whether the last round found nothing more to fix.
    pub converged: bool,
}

/// Fixes `text` (the content of `path`) until no applicable fix is left, at most
/// [`MAX_ROUNDS`] times.
pub fn fix_text(path: &Path, text: &str, options: &Options, minimum: Applicability) -> Fixed {
    let mut current = text.to_string();
    let mut count = 0;
    for round in 0..MAX_ROUNDS {
        let analysis = analyze_text(path, current.clone(), options);
        let applied = apply(&current, &fixes_at_least(&analysis.diagnostics, minimum));
        if applied.count == 0 || applied.text == current {
            return Fixed { text: current, count, rounds: round, converged: true };
        }
        count += applied.count;
        current = applied.text;
    }
    Fixed { text: current, count, rounds: MAX_ROUNDS, converged: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(edits: Vec<Edit>) -> Fix {
        Fix { title: "t".into(), applicability: Applicability::Safe, edits }
    }

    #[test]
    fn non_overlapping_edits_apply_and_overlaps_wait() {
        let text = "precision: bf16-mixed\nquantize: bnb.nf4\n";
        let a = fix(vec![Edit::replace(Span::new(11, 21), "bf16-true")]);
        let b = fix(vec![Edit::replace(Span::new(16, 21), "true")]);
        let c = fix(vec![Edit::insert(text.len(), "# end\n")]);
        let applied = apply(text, &[&a, &b, &c]);
        assert_eq!(applied.count, 2);
        assert_eq!(applied.text, "precision: bf16-true\nquantize: bnb.nf4\n# end\n");
    }

    #[test]
    fn invalid_edits_are_skipped() {
        let text = "é: 1\n";
        let inside_char = fix(vec![Edit::delete(Span::new(1, 2))]);
        let past_end = fix(vec![Edit::delete(Span::new(3, 99))]);
        let same_point = fix(vec![Edit::insert(0, "a"), Edit::insert(0, "b")]);
        assert_eq!(apply(text, &[&inside_char, &past_end, &same_point]), Applied { text: text.into(), count: 0 });
    }
}
