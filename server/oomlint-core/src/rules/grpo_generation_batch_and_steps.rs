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

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let (Some(gbs), Some(steps)) = (r.entry("generation_batch_size"), r.entry("steps_per_generation")) else { return };
    if support::is_set(&r, "generation_batch_size") && support::is_set(&r, "steps_per_generation") {
        out.report(steps.key_span, "`generation_batch_size` and `steps_per_generation` are both set: TRL raises \"'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time\"")
            .with_related(gbs.key_span, "generation_batch_size set here");
    }
}
