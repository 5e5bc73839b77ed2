//! ## What it does
//! Reports `expandable_segments:True` in `PYTORCH_CUDA_ALLOC_CONF` in a config that
//! also turns on vLLM sleep mode (TRL `vllm_enable_sleep_mode: true` with `use_vllm`,
//! Axolotl `trl.vllm_enable_sleep_mode: true`).
//!
//! ## Why
//! Sleep mode allocates through vLLM's `CuMemAllocator` memory pool, whose constructor
//! asserts that the variable's text does not contain `expandable_segments:True`:
//! `AssertionError: Expandable segments are not compatible with memory pool. Please track
//! https://github.com/pytorch/pytorch/issues/147851 for the latest updates.`, when vLLM
//! starts inside the trainer.
//!
//! ## Example
//! ```yaml
//! use_vllm: true
//! vllm_enable_sleep_mode: true
//! env:
//!   PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True   # error
//! ```
//!
//! ## Fix
//! Drop `expandable_segments:True`, or turn sleep mode off. No automatic fix: either
//! choice changes memory behaviour.
//!
//! ## Source
//! vLLM `vllm/device_allocator/cumem.py` (`CuMemAllocator.__init__`): "Expandable segments
//! are not compatible with memory pool. …".

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    let sleep = match ctx.format {
        Format::TrlGrpo => plan
            .trainer
            .as_ref()
            .and_then(|t| t.grpo.as_ref())
            .filter(|g| g.use_vllm.value)
            .map(|g| &g.vllm_enable_sleep_mode),
        Format::Axolotl => plan.axolotl.as_ref().map(|a| &a.trl_vllm_enable_sleep_mode),
        _ => None,
    };
    let Some(sleep) = sleep.filter(|s| s.value) else { return };
    let sleep_key = support::first_key(&[sleep.key_span()]);
    for setting in plan.allocator.iter().filter(|s| s.variable == "PYTORCH_CUDA_ALLOC_CONF") {
        let Some(at) = setting.value.find("expandable_segments:True") else { continue };
        let span = support::allocator_span(setting, crate::span::Span::new(at, at + "expandable_segments:True".len()));
        out.report(span, "`expandable_segments:True` with vLLM sleep mode: vLLM's CuMemAllocator asserts \"Expandable segments are not compatible with memory pool.\"")
            .with_related(sleep_key, "sleep mode enabled here");
    }
}
