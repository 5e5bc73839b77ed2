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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let (Some(packing), Some(rl)) = (r.entry("sample_packing"), r.entry("rl")) else { return };
    if support::truthy(packing) && support::truthy(rl) {
        out.report(packing.key_span.cover(packing.value.span), "`sample_packing: true` with `rl`: Axolotl raises \"`sample_packing: true` does not work with RLHF training\"")
            .with_related(rl.key_span, "RL training set here")
            .with_fix(set_value(ctx, packing, Literal::Bool(false), "Set `sample_packing: false`", Applicability::Safe));
    }
}
