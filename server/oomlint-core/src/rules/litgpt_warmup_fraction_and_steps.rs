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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) {
        return;
    }
    let Some(litgpt) = support::litgpt(ctx) else { return };
    let Some(fraction_setting) = litgpt.lr_warmup_fraction.as_ref() else { return };
    let Some(fraction) = fraction_setting.value.filter(|f| *f != 0.0) else { return };
    let (Some(fraction_key), Some(fraction_span)) = (fraction_setting.key_span(), fraction_setting.value_span()) else {
        return;
    };
    // Unset, the script's default (100 or 2000) is non-zero.
    let steps = &litgpt.lr_warmup_steps;
    if steps.value.is_some_and(|s| s != 0.0) {
        let diagnostic = out.report(
            fraction_key,
            "`train.lr_warmup_fraction` with a non-zero `train.lr_warmup_steps` (the default is 100 for fine-tuning, 2000 for pretrain): LitGPT raises \"Can't provide both `--train.lr_warmup_fraction` and `--train.lr_warmup_steps`. Choose one.\"",
        );
        if let Some(key) = steps.key_span() {
            diagnostic.with_related(key, "warmup steps set here").with_fix(support::set(
                ctx,
                steps,
                Literal::Null,
                "Set `lr_warmup_steps: null`",
                Applicability::Unsafe,
            ));
        }
    }
    if !(0.0..=1.0).contains(&fraction) {
        out.report(fraction_span, format!("lr_warmup_fraction {fraction} is outside [0, 1]: LitGPT raises \"`--train.lr_warmup_fraction` must be between 0 and 1.\""));
    }
}
