//! ## What it does
//! Reports a GRPO run with vLLM colocated in the training process whose memory
//! fraction cannot work: the training footprint plus `gpu_memory_utilization ×` the
//! card's total memory is more than the card, or the fraction itself is outside (0, 1].
//!
//! ## Why
//! vLLM reserves its fraction of the **total** device memory when it starts inside the
//! trainer (TRL colocate mode, Axolotl), and refuses to start when less is free: "Free
//! memory on device … on startup is less than desired GPU memory utilization". If it
//! does start, everything training allocates later must fit in the rest, or the first
//! optimizer step runs out of memory. Unsloth (`fast_inference=True`) starts vLLM before
//! the model exists, hands it `gpu_memory_utilization ×` the memory **free** at that
//! moment, and then trains on vLLM's copy of the base weights: the weights count once,
//! inside vLLM's share, and training needs the rest beside it. Under Unsloth's standby
//! mode (`UNSLOTH_VLLM_STANDBY=1`) Unsloth sets the fraction itself, so none is reported.
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
//! `src/axolotl/core/trainers/grpo/__init__.py`; Unsloth `unsloth/models/llama.py`
//! (`load_vllm` before `convert_vllm_to_huggingface`) and unsloth-zoo
//! `unsloth_zoo/vllm_utils.py` (`approximate_vllm_memory_usage`: `gpu_memory_utilization
//! × free_memory`; `load_vllm`: the standby target).

use super::{support, Context, Reporter};
use crate::diagnostic::Applicability;
use crate::estimate::{format_bytes, VllmClaim};
use crate::plan::VllmMode;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
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
    // Unsloth's standby mode replaces the fraction with its own target for the card.
    if vllm.fraction_of_free && vllm.enable_sleep_mode.value {
        return;
    }
    let Some(claim) = VllmClaim::of(
        &estimate.components,
        estimate.peak.device_bytes,
        gpu.memory_bytes,
        fraction.value,
        vllm.fraction_of_free,
    ) else {
        return;
    };
    if claim.training + claim.vllm <= gpu.memory_bytes {
        return;
    }
    let share = match claim.free_at_start {
        Some(free) => format!(
            "{} of the {} free when Unsloth starts it, the base weights it shares with training included",
            fraction.value,
            format_bytes(free)
        ),
        None => format!("{} of {}'s {}", fraction.value, gpu.name, format_bytes(gpu.memory_bytes)),
    };
    let message = format!(
        "vLLM reserves {} ({share}) but training needs {} beside it: {} over",
        format_bytes(claim.vllm),
        format_bytes(claim.training),
        format_bytes(claim.training + claim.vllm - gpu.memory_bytes)
    );
    let diagnostic = out.report(span, message);
    // The estimate's vLLM lever sets the same fraction: the largest that leaves the verdict's headroom.
    if let Some(suggested) = claim.fitting_fraction(gpu.memory_bytes) {
        diagnostic.with_fix(support::set(
            ctx,
            fraction,
            Literal::Fixed(suggested, 2),
            format!("Lower the vLLM memory fraction to {suggested:.2}"),
            Applicability::Unsafe,
        ));
    }
}
