//! ## What it does
//! Reports a tensor-parallel size that does not divide the model's attention heads, where the
//! engine that splits them refuses it at start-up:
//! - a vLLM rollout engine: verl's `actor_rollout_ref.rollout.tensor_model_parallel_size` (with
//!   `rollout.name: vllm`), OpenRLHF's vLLM engines (`--vllm.tensor_parallel_size`, or
//!   `--vllm_tensor_parallel_size` in v0.8.0 and before), and TRL's colocated vLLM
//!   (`vllm_tensor_parallel_size`);
//! - Megatron-core, for verl's Megatron workers (`actor.megatron.tensor_model_parallel_size`),
//!   which also splits the key/value heads (its query groups).
//!
//! The heads come from the model's architecture; a model sized from its name only is not
//! checked.
//!
//! ## Why
//! Each rank holds whole heads. vLLM checks this when it builds the engine: `ValueError: Total
//! number of attention heads (28) must be divisible by tensor parallel size (8).`; Megatron when
//! it builds the transformer config: `ValueError: num_attention_heads (28) must be a multiple of
//! tensor_model_parallel_size (8).`, and the same for `num_query_groups`. Both happen after the
//! workers have started, minutes into a run.
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
//!     actor_rollout_ref.rollout.name=vllm \
//!     actor_rollout_ref.rollout.tensor_model_parallel_size=8   # error: 28 heads
//! ```
//!
//! ## Fix
//! A tensor-parallel size that divides the heads (for Qwen2.5-7B: 1, 2, 4 or 7; under Megatron
//! it must also divide its 4 key/value heads). No automatic fix: the size also decides how the
//! GPUs are grouped.
//!
//! ## Source
//! vLLM `vllm/config/model.py` `ModelConfig.verify_with_parallel_config`: "Total number of
//! attention heads ({total_num_attention_heads}) must be divisible by tensor parallel size
//! ({tensor_parallel_size})." (the text config's `num_attention_heads`). Megatron-core
//! `megatron/core/transformer/transformer_config.py` `TransformerConfig.__post_init__`:
//! "num_attention_heads ({self.num_attention_heads}) must be a multiple of
//! tensor_model_parallel_size ({self.tensor_model_parallel_size})." and "num_query_groups
//! ({self.num_query_groups}) must be a multiple of tensor_model_parallel_size (…)."; verl
//! `verl/models/mcore/config_converter.py` sets `num_query_groups` to the Hugging Face config's
//! `num_key_value_heads`.

use super::support;
use super::{Context, Reporter};
use crate::catalog::Architecture;
use crate::model::ModelLookup;
use crate::span::Span;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(ModelLookup::Found(arch)) = ctx.model else { return };
    if arch.sized_from_name || arch.n_head == 0 {
        return;
    }
    if let Some(v) = support::verl(ctx) {
        if v.rollout_name.value.as_deref() == Some("vllm") && !v.rollout_name.is_unknown() {
            if let Some(tp) = v.rollout_tp.known_value() {
                vllm(arch, tp, v.span(&v.rollout_tp), "actor_rollout_ref.rollout.tensor_model_parallel_size", out);
            }
        }
        if v.strategy.value.as_deref() == Some("megatron") {
            if let [Some(tp), ..] = &v.megatron_sizes {
                megatron(arch, tp.value, v.span(tp), out);
            }
        }
    }
    if let Some(s) = support::openrlhf(ctx) {
        let engines = s.vllm_engines.value.value.unwrap_or(0);
        if let Some(tp) = s.vllm_tp.value.known_value().filter(|_| engines > 0) {
            vllm(arch, tp, s.span(&s.vllm_tp), &format!("--{}", s.vllm_tp.flag), out);
        }
    }
    let grpo = ctx.plan.and_then(|p| p.trainer.as_ref()).and_then(|t| t.grpo.as_ref());
    if let Some(g) = grpo.filter(|g| g.use_vllm.value && g.vllm_mode.value == "colocate") {
        if let Some(span) = g.vllm_tensor_parallel_size.value_span() {
            vllm(arch, g.vllm_tensor_parallel_size.value, span, "vllm_tensor_parallel_size", out);
        }
    }
}

fn vllm(arch: &Architecture, tp: u64, span: Span, key: &str, out: &mut Reporter) {
    let heads = arch.n_head;
    if tp <= 1 || heads.is_multiple_of(tp) {
        return;
    }
    out.report(
        span,
        format!(
            "{key} {tp} does not divide {}'s {heads} attention heads: vLLM raises \"Total number of attention heads \
             ({heads}) must be divisible by tensor parallel size ({tp}).\" when it builds the engine; {}",
            arch.name,
            dividing(heads, None)
        ),
    );
}

fn megatron(arch: &Architecture, tp: u64, span: Span, out: &mut Reporter) {
    let (heads, groups) = (arch.n_head, arch.n_query_groups);
    let message = if tp > 1 && !heads.is_multiple_of(tp) {
        format!("num_attention_heads ({heads}) must be a multiple of tensor_model_parallel_size ({tp}).")
    } else if tp > 1 && groups > 0 && !groups.is_multiple_of(tp) {
        format!("num_query_groups ({groups}) must be a multiple of tensor_model_parallel_size ({tp}).")
    } else {
        return;
    };
    out.report(
        span,
        format!(
            "tensor_model_parallel_size {tp} does not divide {}'s heads ({heads} attention, {groups} key/value): \
             Megatron-core raises \"{message}\" when verl builds the model; {}",
            arch.name,
            dividing(heads, Some(groups))
        ),
    );
}

/// The sizes up to 8 that divide the heads (and the key/value heads, for Megatron).
fn dividing(heads: u64, groups: Option<u64>) -> String {
    let sizes: Vec<String> = (1..=8u64)
        .filter(|t| heads.is_multiple_of(*t) && groups.is_none_or(|g| g == 0 || g.is_multiple_of(*t)))
        .map(|t| t.to_string())
        .collect();
    format!("sizes up to 8 that divide them: {}", sizes.join(", "))
}
