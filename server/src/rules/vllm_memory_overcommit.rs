//! ## What it does
//! Reports a GRPO run with vLLM colocated in the training process whose memory
//! fraction cannot work: the training footprint plus `gpu_memory_utilization ×` the
//! card's total memory is more than the card, or the fraction itself is outside (0, 1].
//!
//! ## Why
//! vLLM reserves its fraction of the **total** device memory when it starts inside the
//! trainer (TRL colocate mode, Axolotl, Unsloth `fast_inference`), and refuses to
//! start when less is free: "Free memory on device … on startup is less than desired
//! GPU memory utilization". If it does start, everything training allocates later must
//! fit in the rest, or the first optimizer step runs out of memory.
//!
//! ## Example
//! ```yaml
//! # oomlint: gpu=A10G
//! model_name_or_path: Qwen/Qwen2.5-7B-Instruct
//! use_vllm: true
//! vllm_mode: colocate
//! vllm_gpu_memory_utilization: 0.9   # leaves 2.4 GB for a 7B model in training
//! ```
//!
//! ## Fix
//! Unsafe: lower `vllm_gpu_memory_utilization` to what the training footprint leaves
//! free (vLLM then has less KV cache: fewer concurrent sequences).
//!
//! ## Source
//! vLLM `vllm/v1/worker/utils.py` (`request_memory`) and `vllm/config/cache.py`;
//! TRL `trl/generation/vllm_generation.py`; Axolotl
//! `src/axolotl/core/trainers/grpo/__init__.py`.

use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::estimate::format_bytes;
use crate::plan::VllmMode;

pub fn check(ctx: &Context, out: &mut Reporter) {
    let Some(vllm) = ctx.plan.and_then(|p| p.rl.as_ref()).and_then(|rl| rl.vllm.as_ref()) else { return };
    if vllm.mode.value != VllmMode::Colocate {
        return;
    }
    let fraction = &vllm.gpu_memory_utilization;
    let span = fraction.value_span().or_else(|| vllm.mode.key_span()).unwrap_or_default();
    if !(fraction.value > 0.0 && fraction.value <= 1.0) {
        out.report(span, format!("vLLM gpu_memory_utilization must be in (0, 1], got {}", fraction.value));
        return;
    }
    let (Some(estimate), Some(gpu)) = (ctx.estimate, ctx.gpu) else { return };
    let reservation: u64 = estimate.components.iter().filter(|c| c.name == "vllm-reservation").map(|c| c.bytes).sum();
    let training = estimate.peak.device_bytes.saturating_sub(reservation);
    let vllm_bytes = (fraction.value * gpu.memory_bytes as f64) as u64;
    if training + vllm_bytes <= gpu.memory_bytes {
        return;
    }
    let free_share = 1.0 - training as f64 / gpu.memory_bytes as f64;
    let message = format!(
        "vLLM reserves {} ({} of {}'s {}) but training needs {} beside it: {} over",
        format_bytes(vllm_bytes),
        fraction.value,
        gpu.name,
        format_bytes(gpu.memory_bytes),
        format_bytes(training),
        format_bytes(training + vllm_bytes - gpu.memory_bytes)
    );
    let diagnostic = out.report(span, message);
    // Round down to two decimals and keep a 5 % margin for the estimate's band.
    let suggested = ((free_share - 0.05) * 100.0).floor() / 100.0;
    if let (Some(value_span), true) = (fraction.value_span(), suggested >= 0.05) {
        diagnostic.with_fix(Fix {
            title: format!("Lower the vLLM memory fraction to {suggested:.2}"),
            applicability: Applicability::Unsafe,
            edits: vec![Edit::replace(value_span, format!("{suggested:.2}"))],
        });
    }
}
