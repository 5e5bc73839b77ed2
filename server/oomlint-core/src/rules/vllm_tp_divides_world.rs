//! ## What it does
//! Reports a TRL GRPO config that generates with colocated vLLM (`use_vllm: true`,
//! `vllm_mode: colocate`, the default since TRL 1.0) where `num_processes` (1 when
//! unset) is not a multiple of `vllm_tensor_parallel_size`.
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

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let colocate = support::text(&r, "vllm_mode").is_none_or(|m| m == "colocate");
    if !support::flag(&r, "use_vllm") || !colocate {
        return;
    }
    let Some(tp) = r.u64("vllm_tensor_parallel_size").filter(|t| t.value > 1) else { return };
    let processes = r.u64("num_processes").map_or(1, |p| p.value.max(1));
    if processes % tp.value == 0 {
        return;
    }
    let Some(entry) = r.entry("vllm_tensor_parallel_size") else { return };
    let diagnostic = out.report(entry.value.span, format!("vllm_tensor_parallel_size {} does not divide the {processes} training process(es): TRL raises \"tensor_parallel_size ({}) must divide world size ({processes}) evenly.\"", tp.value, tp.value));
    if let Some(key) = support::key_of(&r, "num_processes") {
        diagnostic.with_related(key, "num_processes set here");
    }
}
