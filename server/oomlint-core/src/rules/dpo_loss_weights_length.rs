//! ## What it does
//! Reports a TRL DPO config whose `loss_weights` list is not as long as its
//! `loss_type` list (a single `loss_type` string counts as one).
//!
//! ## Why
//! Each weight multiplies one loss; `DPOConfig.__post_init__` raises `ValueError:
//! loss_weights must have the same length as loss_type when combining multiple losses.
//! Got 3 weights for 2 loss types.`
//!
//! ## Example
//! ```yaml
//! loss_type: [sigmoid, sft]
//! loss_weights: [1.0, 1.0, 0.5]   # error
//! ```
//!
//! ## Fix
//! Give one weight per loss type. No automatic fix.
//!
//! ## Source
//! TRL `trl/trainer/dpo_config.py` (`DPOConfig.__post_init__`): "`loss_weights` must have
//! the same length as `loss_type` when combining multiple losses. Got {w} weights for
//! {t} loss types."

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlDpo {
        return;
    }
    let Some(dpo) = support::trainer(ctx).and_then(|t| t.dpo.as_ref()) else { return };
    let Some(weights) = dpo.loss_weights.as_ref() else { return };
    let Some(types) = dpo.loss_type.value.as_ref() else { return };
    let (weight_count, type_count) = (weights.value.len(), types.len());
    if weight_count == type_count {
        return;
    }
    let Some(span) = weights.value_span() else { return };
    let diagnostic = out.report(span, format!("{weight_count} loss_weights for {type_count} loss_type(s): TRL raises \"`loss_weights` must have the same length as `loss_type` when combining multiple losses. Got {weight_count} weights for {type_count} loss types.\""));
    if let Some(span) = dpo.loss_type.value_span() {
        diagnostic.with_related(span, "loss types listed here");
    }
}
