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

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    let (deepspeed, fsdp) = (&axolotl.deepspeed, &axolotl.fsdp);
    let (true, true, Some(fsdp_key), Some(deepspeed_key)) =
        (deepspeed.value, fsdp.value, fsdp.key_span(), deepspeed.key_span())
    else {
        return;
    };
    out.report(
        fsdp_key,
        "`deepspeed` and `fsdp` are both set: Axolotl raises \"deepspeed and fsdp cannot be used together.\"",
    )
    .with_related(deepspeed_key, "DeepSpeed set here");
}
