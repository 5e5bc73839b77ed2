//! ## What it does
//! Reports `train.lr_warmup_fraction` set together with a non-zero
//! `train.lr_warmup_steps` (which defaults to 100 in fine-tuning and 2000 in `pretrain`,
//! so setting only the fraction trips it too), and a fraction outside [0, 1].
//!
//! ## Why
//! `TrainArgs.__post_init__` raises `ValueError: Can't provide both
//! `--train.lr_warmup_fraction` and `--train.lr_warmup_steps`. Choose one.` (or
//! "`--train.lr_warmup_fraction` must be between 0 and 1.") while the config is parsed.
//!
//! ## Example
//! ```yaml
//! train:
//!   lr_warmup_fraction: 0.05   # error: lr_warmup_steps defaults to 2000
//! ```
//!
//! ## Fix
//! Set `lr_warmup_steps: null` next to the fraction. The fix does that when
//! `lr_warmup_steps` is written in the file.
//!
//! Fix safety: **unsafe**: the file names two warmups; keeping the fraction is a guess.
//!
//! ## Source
//! LitGPT `litgpt/args.py` (`TrainArgs.__post_init__`): "Can't provide both
//! `--train.lr_warmup_fraction` and `--train.lr_warmup_steps`. Choose one.",
//! "`--train.lr_warmup_fraction` must be between 0 and 1."

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(fraction) = r.entry("train.lr_warmup_fraction").filter(|e| support::truthy(e)) else { return };
    let steps = r.entry("train.lr_warmup_steps");
    // Absent: the script default (100 or 2000) is truthy.
    let steps_truthy = steps.is_none_or(support::truthy);
    if steps_truthy {
        let diagnostic = out.report(
            fraction.key_span,
            "`train.lr_warmup_fraction` with a non-zero `train.lr_warmup_steps` (the default is 100 for fine-tuning, 2000 for pretrain): LitGPT raises \"Can't provide both `--train.lr_warmup_fraction` and `--train.lr_warmup_steps`. Choose one.\"",
        );
        if let Some(steps) = steps {
            diagnostic.with_related(steps.key_span, "warmup steps set here").with_fix(set_value(
                ctx,
                steps,
                Literal::Null,
                "Set `lr_warmup_steps: null`",
                Applicability::Unsafe,
            ));
        }
    }
    if let Some(value) = r.f64("train.lr_warmup_fraction").filter(|v| !(0.0..=1.0).contains(&v.value)) {
        out.report(fraction.value.span, format!("lr_warmup_fraction {} is outside [0, 1]: LitGPT raises \"`--train.lr_warmup_fraction` must be between 0 and 1.\"", value.value));
    }
}
