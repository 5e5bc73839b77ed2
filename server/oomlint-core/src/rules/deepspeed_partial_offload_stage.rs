//! ## What it does
//! Reports `zero_optimization.offload_optimizer.ratio` below 1 (partial optimizer
//! offload) with a ZeRO stage other than 3.
//!
//! ## Why
//! Partial offloading (ZeRO-Offload++) is implemented for stage 3 only; DeepSpeed's
//! config model asserts `Partial offloading only supported for ZeRO Stage 3.` when the
//! config is read.
//!
//! ## Example
//! ```json
//! {"zero_optimization": {"stage": 2,
//!   "offload_optimizer": {"device": "cpu", "ratio": 0.3}}}
//! ```
//!
//! ## Fix
//! Use `"stage": 3`, or offload the whole optimizer (drop `ratio`). No automatic fix.
//!
//! ## Source
//! DeepSpeed `deepspeed/runtime/zero/config.py` (`DeepSpeedZeroConfig.offload_ratio_check`):
//! "Partial offloading only supported for ZeRO Stage 3."

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(ds) = support::deepspeed(ctx) else { return };
    let Some(ratio) = ds.offload_optimizer_ratio.as_ref().filter(|r| r.value < 1.0) else { return };
    let stage = &ds.zero_stage;
    if stage.value == 3 {
        return;
    }
    let Some(span) = ratio.value_span() else { return };
    let diagnostic = out.report(span, format!("offload_optimizer ratio {} with ZeRO stage {}: DeepSpeed asserts \"Partial offloading only supported for ZeRO Stage 3.\"", ratio.value, stage.value));
    if let Some(key) = stage.key_span() {
        diagnostic.with_related(key, "stage set here");
    }
}
