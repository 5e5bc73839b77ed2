//! ## What it does
//! Reports a TRL GRPO config that generates with colocated vLLM (`use_vllm: true`,
//! `vllm_mode: colocate`, the default since TRL 1.0) where `num_processes` is not a
//! multiple of `vllm_tensor_parallel_size`. Without `num_processes` the launch sets the
//! world size (`accelerate launch --num_processes`): a warning that says one process fails
//! and a multiple of the tensor-parallel size divides it.
//!
//! ## Why
//! Colocated vLLM groups the training ranks into tensor-parallel groups of equal size;
//! TRL raises `ValueError: tensor_parallel_size (2) must divide world size (1) evenly.`
//! when it builds the engine, after the model is loaded.
//!
//! ## Example
//! ```yaml
//! use_vllm: true
//! vllm_mode: colocate
//! num_processes: 1
//! vllm_tensor_parallel_size: 2   # error on one process
//! ```
//!
//! ## Fix
//! Launch a multiple of the tensor-parallel size (`num_processes`), or lower
//! `vllm_tensor_parallel_size`. No automatic fix: the GPU count is the user's.
//!
//! ## Source
//! TRL `trl/generation/vllm_generation.py` (colocate set-up): "tensor_parallel_size ({tp})
//! must divide world size ({w}) evenly."

use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(plan) = ctx.plan else { return };
    let Some(grpo) = plan.trainer.as_ref().and_then(|t| t.grpo.as_ref()) else { return };
    let colocate = grpo.vllm_mode.value == "colocate";
    if !grpo.use_vllm.value || !colocate {
        return;
    }
    let tp = &grpo.vllm_tensor_parallel_size;
    if tp.value <= 1 {
        return;
    }
    // The world size is the launch's unless the file states it; one process is assumed then.
    let stated = plan.stated_world_size();
    let processes = stated.unwrap_or(1);
    if processes % tp.value == 0 {
        return;
    }
    let Some(span) = tp.value_span() else { return };
    let mut message = format!("vllm_tensor_parallel_size {} does not divide the {processes} training process(es): TRL raises \"tensor_parallel_size ({}) must divide world size ({processes}) evenly.\"", tp.value, tp.value);
    if stated.is_none() {
        message.push_str(&format!(" on one process; the world size is set at launch (`--num_processes`), and a multiple of {} processes divides it", tp.value));
    }
    let diagnostic = out.report(span, message);
    if stated.is_none() {
        diagnostic.severity = crate::diagnostic::Severity::Warning;
    }
    if let Some(key) = plan.devices.as_ref().and_then(|d| d.key_span()) {
        diagnostic.with_related(key, "num_processes set here");
    }
}
