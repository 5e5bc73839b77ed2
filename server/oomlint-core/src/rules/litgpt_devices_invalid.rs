//! ## What it does
//! Reports a LitGPT `devices` count that is neither `-1` nor positive (`0`, `-2`).
//! Other non-numbers (a GPU list such as `"0,1"`) are `invalid-value` findings of the
//! schema.
//!
//! ## Why
//! Every LitGPT script passes `devices` through `parse_devices`, which raises
//! `ValueError: Devices must be 'auto' or a positive integer, got: …`. To pick GPUs, set
//! `CUDA_VISIBLE_DEVICES` and give `devices` the count.
//!
//! ## Example
//! ```yaml
//! devices: 0     # error: meant "GPU 0"
//! ```
//!
//! ## Fix
//! Give a count (`devices: 2`) or `auto`. No automatic fix: the intended count is not
//! known.
//!
//! ## Source
//! LitGPT `litgpt/utils.py` (`parse_devices`): "Devices must be 'auto' or a positive
//! integer, got: {devices!r}".

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(devices) = support::litgpt(ctx).and_then(|l| l.devices.as_ref()) else { return };
    let Some(span) = devices.value_span().filter(|_| devices.value == 0 || devices.value < -1) else { return };
    // The message quotes the value as written.
    let shown = ctx.source(span);
    out.report(
        span,
        format!("devices: {shown}: LitGPT raises \"Devices must be 'auto' or a positive integer, got: {shown}\"; select GPUs with CUDA_VISIBLE_DEVICES and give their count here"),
    );
}
