//! ## What it does
//! Reports a `# oomlint: ignore[...]` or `# oomlint: disable-file[...]` comment (or one
//! code inside it) that suppressed nothing, and codes that name no rule.
//!
//! ## Why
//! A suppression outlives the problem it silenced: after the config is fixed, or the
//! rule stops firing, the comment only hides the next real finding on that line.
//! A misspelt code suppresses nothing at all. Not reported while the file has a syntax
//! error (the other rules then see only part of it).
//!
//! ## Example
//! ```yaml
//! precision: bf16-true  # oomlint: ignore[litgpt-quantize-mixed-precision]  (nothing to ignore)
//! ```
//!
//! ## Fix
//! Remove the comment, or the unused codes from its list. Fix safety: **safe**: the
//! comment has no effect.
//!
//! ## Source
//! oomlint's suppression comments (README, "Suppression"); modelled on ruff's
//! `unused-noqa` (RUF100).

use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::span::Span;
use crate::suppression::Suppression;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    // After a syntax error other rules see only part of the file: nothing is "unused" yet.
    if ctx.document.is_incomplete() {
        return;
    }
    for suppression in ctx.suppressions.unwrap_or_default() {
        if suppression.is_unused() {
            let what = if suppression.codes.is_empty() {
                "suppression comment matches no finding".to_string()
            } else {
                let codes: Vec<String> = suppression.codes.iter().map(|c| format!("`{}`", c.text)).collect();
                format!("suppression of {} matches no finding", codes.join(", "))
            };
            out.report(suppression.comment, what).with_fix(Fix {
                title: "Remove the suppression comment".into(),
                applicability: Applicability::Safe,
                edits: vec![Edit::delete(removal_span(ctx.text, suppression))],
            });
            continue;
        }
        let unused: Vec<_> = suppression.codes.iter().filter(|c| !c.used).collect();
        if unused.is_empty() {
            continue;
        }
        let kept: Vec<&str> = suppression.codes.iter().filter(|c| c.used).map(|c| c.text.as_str()).collect();
        let list_span = Span::new(
            suppression.codes.first().map_or(0, |c| c.span.start),
            suppression.codes.last().map_or(0, |c| c.span.end),
        );
        for code in unused {
            let message = match super::find(&code.text) {
                Some(_) => format!("`{}` is suppressed here but does not occur", code.text),
                None => format!("`{}` is not a rule code or name", code.text),
            };
            out.report(code.span, message).with_fix(Fix {
                title: format!("Remove `{}` from the suppression", code.text),
                applicability: Applicability::Safe,
                edits: vec![Edit::replace(list_span, kept.join(", "))],
            });
        }
    }
}

/// The comment, with the blanks before it; a comment alone on its line takes the line.
fn removal_span(text: &str, suppression: &Suppression) -> Span {
    let comment = suppression.comment;
    let line_start = text[..comment.start].rfind('\n').map_or(0, |i| i + 1);
    if suppression.own_line {
        let end = text[comment.end..].find('\n').map_or(text.len(), |i| comment.end + i + 1);
        return Span::new(line_start, end);
    }
    let before = text[line_start..comment.start].trim_end().len();
    Span::new(line_start + before, comment.end)
}
