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
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Deepspeed {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let path = "zero_optimization.offload_optimizer.ratio";
    let Some(ratio) = r.f64(path).filter(|v| v.value < 1.0) else { return };
    let stage = r.i64("zero_optimization.stage").map_or(0, |s| s.value);
    if stage == 3 {
        return;
    }
    let Some(entry) = r.entry(path) else { return };
    let diagnostic = out.report(entry.value.span, format!("offload_optimizer ratio {} with ZeRO stage {stage}: DeepSpeed asserts \"Partial offloading only supported for ZeRO Stage 3.\"", ratio.value));
    if let Some(key) = support::key_of(&r, "zero_optimization.stage") {
        diagnostic.with_related(key, "stage set here");
    }
}
