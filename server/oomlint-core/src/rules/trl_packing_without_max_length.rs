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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlSft {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let (Some(packing), Some(max_length)) = (r.entry("packing"), r.entry("max_length")) else { return };
    if support::flag(&r, "packing") && r.is_null("max_length") {
        out.report(max_length.key_span.cover(max_length.value.span), "`packing: true` with `max_length: null`: TRL raises \"When packing is enabled, `max_length` can't be `None`.\"")
            .with_related(packing.key_span, "packing enabled here")
            .with_fix(set_value(ctx, max_length, Literal::Int(1024), "Pack to 1024 tokens (TRL's default)", Applicability::Unsafe));
    }
}
