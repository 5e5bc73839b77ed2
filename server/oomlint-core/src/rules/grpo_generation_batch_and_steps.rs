//! ## What it does
//! Reports a TRL GRPO config that sets both `generation_batch_size` and
//! `steps_per_generation`.
//!
//! ## Why
//! Each determines the other (`generation_batch_size = per_device_train_batch_size ×
//! num_processes × steps_per_generation`), so `GRPOConfig.__post_init__` raises
//! `ValueError: 'generation_batch_size' and 'steps_per_generation' can not be both
//! configured at the same time`.
//!
//! ## Example
//! ```yaml
//! generation_batch_size: 64
//! steps_per_generation: 4    # error
//! ```
//!
//! ## Fix
//! Keep one. No automatic fix: which one the author tuned is not known.
//!
//! ## Source
//! TRL `trl/trainer/grpo_config.py` (`GRPOConfig.__post_init__`): "'generation_batch_size'
//! and 'steps_per_generation' can not be both configured at the same time".

use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(rl) = ctx.plan.and_then(|p| p.rl.as_ref()) else { return };
    let gbs = rl.generation_batch_size.as_ref().and_then(|g| g.key_span());
    let steps = rl.steps_per_generation.as_ref().and_then(|s| s.key_span());
    if let (Some(gbs), Some(steps)) = (gbs, steps) {
        out.report(steps, "`generation_batch_size` and `steps_per_generation` are both set: TRL raises \"'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time\"")
            .with_related(gbs, "generation_batch_size set here");
    }
}
