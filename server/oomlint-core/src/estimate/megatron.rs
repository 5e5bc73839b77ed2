//! Megatron-core's model parallelism beyond tensor parallelism, for one rank of verl's Megatron
//! workers (`verl/workers/megatron_workers.py`, which hands the sizes to
//! `mpu.initialize_model_parallel`), and what its distributed optimizer keeps.
//!
//! - Pipeline parallelism splits the decoder layers into `pp` stages of `⌈L / pp⌉` layers
//!   (`megatron/core/transformer/transformer_block.py` `get_num_layers_to_build`); the first stage
//!   also holds the embedding, the last the output layer.
//! - Under the 1F1B schedule (`pipeline_parallel/schedules.py`
//!   `forward_backward_pipelining_without_interleaving`) a stage runs `pp - rank - 1` warm-up
//!   forwards before its first backward, so the first stage holds the activations of
//!   `min(pp, m)` micro-batches of its layers (`m` micro-batches per step): about one
//!   micro-batch through every layer once `m ≥ pp`.
//! - Expert parallelism gives each rank `n_expert / ep` routed experts (`transformer/moe/
//!   moe_layer.py`: `num_local_experts = num_moe_experts // expert_model_parallel_size`).
//! - The distributed optimizer (`optimizer/distrib_optimizer.py`) shards the fp32 main
//!   parameters and Adam's two fp32 moments over the data-parallel ranks (with the context-
//!   parallel ones); the routed experts' over the expert-data-parallel ranks,
//!   `world / (ep × etp × pp)`, with the expert tensor-parallel size `etp` defaulting to the
//!   tensor-parallel size. The bf16 parameters and the fp32 gradient buffer (verl sets
//!   `grad_reduce_in_fp32`, `verl/utils/megatron_utils.py`) stay whole on every rank: per
//!   parameter `2 + 4 + 12 / d` bytes, Megatron-LM's own figure with the distributed optimizer
//!   (`megatron/training/theoretical_memory_usage.py`, `6 + 12 / data_parallel_size`).
//!
//! The first and the last stage are estimated, and the estimate is the one that peaks higher
//! (`estimate::peak_rank`): the first holds the embedding and the most micro-batches in flight,
//! the last the output layer, one micro-batch (1F1B runs no warm-up forward there, as
//! `pp - rank - 1` is 0) and the logits. A middle stage holds fewer micro-batches than the
//! first and no output layer, so it never peaks above both.

use crate::catalog::Architecture;

/// A pipeline stage whose rank an estimate describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The embedding, `min(pp, m)` micro-batches in flight.
    First,
    /// The output layer and the logits, one micro-batch in flight.
    Last,
}

/// One stage's share of `arch` (already one tensor-parallel rank's) under `pp` stages, and the
/// architecture whose activations it holds at once with `micro_batches` per step.
pub(super) fn stage(arch: &Architecture, pp: u64, micro_batches: u64, stage: Stage) -> (Architecture, Architecture) {
    let layers = arch.n_layer.max(1);
    let stage_layers = layers.div_ceil(pp.max(1));
    let weights = with_layers(arch, stage_layers);
    let in_flight = match stage {
        Stage::First => pp.clamp(1, micro_batches.max(1)),
        Stage::Last => 1,
    };
    let activations = with_layers(arch, (stage_layers * in_flight).min(layers));
    (weights, activations)
}

/// `arch` cut to its first `n` layers: the hybrid and dense-MLP layer counts in proportion, the
/// sliding-window pattern's first `n` layers.
fn with_layers(arch: &Architecture, n: u64) -> Architecture {
    let layers = arch.n_layer.max(1);
    let share = |count: u64| (count * n).div_ceil(layers).min(n);
    let mut a = arch.clone();
    a.n_layer = n;
    a.n_mamba_layers = share(arch.n_mamba_layers);
    a.n_dense_layers = share(arch.n_dense_layers);
    a.n_kv_shared_layers = share(arch.n_kv_shared_layers);
    a.sliding_window_layers = arch.sliding_window_layers.as_ref().map(|p| p.chars().take(n as usize).collect());
    if let Some(pattern) = &arch.layer_pattern {
        let first: String = pattern.chars().take(n as usize).collect();
        a.n_mamba_layers = first.bytes().filter(|b| *b == b'M').count() as u64;
        a.layer_pattern = Some(first);
    }
    a
}
