//! ## What it does
//! Reports an Axolotl config that sets both `deepspeed` and `fsdp`.
//!
//! ## Why
//! Both shard the model, in incompatible ways; Axolotl raises `ValueError: deepspeed and
//! fsdp cannot be used together.` while loading the config.
//!
//! ## Example
//! ```yaml
//! deepspeed: deepspeed_configs/zero3_bf16.json
//! fsdp:
//!   - full_shard      # error
//! ```
//!
//! ## Fix
//! Keep one. No automatic fix.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/validation.py` (`check_fsdp_deepspeed`):
//! "deepspeed and fsdp cannot be used together."

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let (Some(deepspeed), Some(fsdp)) = (r.entry("deepspeed"), r.entry("fsdp")) else { return };
    if support::truthy(deepspeed) && support::truthy(fsdp) {
        out.report(
            fsdp.key_span,
            "`deepspeed` and `fsdp` are both set: Axolotl raises \"deepspeed and fsdp cannot be used together.\"",
        )
        .with_related(deepspeed.key_span, "DeepSpeed set here");
    }
}
