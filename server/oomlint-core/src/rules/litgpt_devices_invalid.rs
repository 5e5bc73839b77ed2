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
use crate::syntax::ScalarKind;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(entry) = r.entry("devices") else { return };
    let count = match entry.value.as_scalar() {
        Some(s) if s.kind == ScalarKind::Str => s.text.trim().parse::<i64>().ok(),
        Some(s) => s.as_i64(),
        None => None,
    };
    if count.is_some_and(|c| c == 0 || c < -1) {
        let shown = ctx.text.get(entry.value.span.start..entry.value.span.end).unwrap_or_default();
        out.report(
            entry.value.span,
            format!("devices: {shown}: LitGPT raises \"Devices must be 'auto' or a positive integer, got: {shown}\"; select GPUs with CUDA_VISIBLE_DEVICES and give their count here"),
        );
    }
}
