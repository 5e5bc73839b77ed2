//! ## What it does
//! Reports `sample_packing: true` in an Axolotl preference or RL config (`rl:` set).
//!
//! ## Why
//! DPO, KTO, ORPO and GRPO batches pair or group samples, which multipack would mix;
//! Axolotl raises `ValueError: sample_packing: true does not work with RLHF training`
//! while loading the config.
//!
//! ## Example
//! ```yaml
//! rl: dpo
//! sample_packing: true    # error
//! ```
//!
//! ## Fix
//! Set `sample_packing: false`.
//!
//! Fix safety: **safe**: RL training never ran with packing.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/validation.py` (`check_sample_packing_w_rl`):
//! "`sample_packing: true` does not work with RLHF training".

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let (Some(plan), Some(axolotl)) = (ctx.plan, support::axolotl(ctx)) else { return };
    let Some(packing) = plan.packing.as_ref() else { return };
    let rl = &axolotl.rl;
    let (true, true, Some(span), Some(rl_key)) = (packing.value, rl.value, packing.entry_span(), rl.key_span()) else {
        return;
    };
    out.report(
        span,
        "`sample_packing: true` with `rl`: Axolotl raises \"`sample_packing: true` does not work with RLHF training\"",
    )
    .with_related(rl_key, "RL training set here")
    .with_fix(support::set(ctx, packing, Literal::Bool(false), "Set `sample_packing: false`", Applicability::Safe));
}
