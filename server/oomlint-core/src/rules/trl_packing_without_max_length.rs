//! ## What it does
//! Reports a TRL SFT config with `packing: true` and `max_length: null`.
//!
//! ## Why
//! Packing fills sequences up to `max_length`; without one there is nothing to pack
//! to, and `SFTTrainer` raises `ValueError: When packing is enabled, max_length can't be
//! None.` while preparing the dataset.
//!
//! ## Example
//! ```yaml
//! packing: true
//! max_length: null    # error
//! ```
//!
//! ## Fix
//! Give a pack length. The fix writes TRL's default, 1024.
//!
//! Fix safety: **unsafe**: the pack length sets activation memory and what the model
//! sees per sequence.
//!
//! ## Source
//! TRL `trl/trainer/sft_trainer.py` (`_prepare_dataset`): "When packing is enabled,
//! `max_length` can't be `None`."

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlSft {
        return;
    }
    let Some(plan) = ctx.plan else { return };
    let (Some(packing), Some(sft)) = (plan.packing.as_ref(), plan.trainer.as_ref().and_then(|t| t.sft.as_ref())) else {
        return;
    };
    let max_length = &sft.max_length;
    let (true, None, Some(span), Some(packing_key)) =
        (packing.value, max_length.value, max_length.entry_span(), packing.key_span())
    else {
        return;
    };
    let default = sft.default_max_length;
    out.report(span, "`packing: true` with `max_length: null`: TRL raises \"When packing is enabled, `max_length` can't be `None`.\"")
        .with_related(packing_key, "packing enabled here")
        .with_fix(support::set(
            ctx,
            max_length,
            Literal::from(default),
            format!("Pack to {default} tokens (TRL's default)"),
            Applicability::Unsafe,
        ));
}
