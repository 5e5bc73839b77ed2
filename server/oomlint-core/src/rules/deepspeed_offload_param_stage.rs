//! ## What it does
//! Warns about `zero_optimization.offload_param` with a CPU or NVMe device while the
//! ZeRO stage is below 3.
//!
//! ## Why
//! Parameter offloading is a ZeRO-3 feature (DeepSpeed documents `offload_param` as
//! "valid only with stage 3"); with stage 0–2 the block is accepted and does nothing,
//! so the parameters stay on the GPU and the memory the author planned for is not
//! saved.
//!
//! ## Example
//! ```json
//! {"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}
//! ```
//!
//! ## Fix
//! Use `"stage": 3`, or drop `offload_param` (stage 2 can still offload the optimizer).
//! No automatic fix: stage 3 changes communication and checkpoints.
//!
//! ## Source
//! DeepSpeed `deepspeed/runtime/zero/offload_config.py` (`DeepSpeedZeroOffloadParamConfig`
//! docstring: parameter offloading is valid only with stage 3) and
//! `deepspeed/runtime/zero/config.py`.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(ds) = support::deepspeed(ctx) else { return };
    if !ds.offload_param_device.as_ref().is_some_and(|d| matches!(d.value.as_str(), "cpu" | "nvme")) {
        return;
    }
    let stage = &ds.zero_stage;
    if stage.value >= 3 {
        return;
    }
    let span = support::first_key(&[ds.offload_param_key]);
    let diagnostic = out.report(span, format!("`offload_param` with ZeRO stage {}: parameter offloading works only with stage 3, so the parameters stay on the GPU", stage.value));
    if let Some(key) = stage.key_span() {
        diagnostic.with_related(key, "stage set here");
    }
}
