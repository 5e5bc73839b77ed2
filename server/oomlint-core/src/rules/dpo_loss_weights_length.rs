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
    let Some(r) = support::reader(ctx) else { return };
    let Some(weights) = r.entry("loss_weights") else { return };
    let Some(weight_count) = weights.value.as_sequence().map(<[_]>::len) else { return };
    let types = r.entry("loss_type");
    let type_count = match types {
        Some(t) => match t.value.as_sequence() {
            Some(items) => items.len(),
            None if support::is_set(&r, "loss_type") => 1,
            None => return,
        },
        None => 1, // default ["sigmoid"]
    };
    if weight_count != type_count {
        let diagnostic = out.report(weights.value.span, format!("{weight_count} loss_weights for {type_count} loss_type(s): TRL raises \"`loss_weights` must have the same length as `loss_type` when combining multiple losses. Got {weight_count} weights for {type_count} loss types.\""));
        if let Some(t) = types {
            diagnostic.with_related(t.value.span, "loss types listed here");
        }
    }
}
