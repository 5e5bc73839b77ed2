//! Tensor parallelism: what one rank of a tensor-parallel group holds.
//!
//! Both layouts oomlint reads split every decoder block the way Megatron-LM does (Shoeybi et
//! al., "Megatron-LM", §3; `megatron/core/tensor_parallel/layers.py`):
//! - the attention's `q`/`k`/`v` projections and the MLP's `gate`/`up` projections are
//!   column-parallel (`ColumnParallelLinear`, transformers' `colwise`): each rank holds the
//!   rows of `1/t` of the output features, that is `1/t` of the attention heads, of the
//!   key/value heads and of the MLP width, and produces only those outputs;
//! - the attention's output projection and the MLP's `down` projection are row-parallel
//!   (`RowParallelLinear`, `rowwise`): each rank holds the columns of the same `1/t` of the
//!   input features, multiplies its local slice and an all-reduce sums the partial outputs
//!   into the whole hidden state.
//!
//! So one rank runs the same block with `n_head / t` heads, `n_query_groups / t` key/value
//! heads and an MLP `I / t` wide: every weight of the block linears, its gradient and its
//! optimizer state are `1/t` of the model's, and so are the activations that live between a
//! column-parallel and the following row-parallel linear (roped Q, K and V, the attention output
//! and its log-sum-exp, the attention scores, the gate/up/activation outputs and the down
//! projection's input, their gradients in backward). The hidden state that enters a block, the
//! norms' inputs and the inputs of the column-parallel linears are replicated on every rank (the
//! all-reduce leaves the whole `[T, h]` tensor on each): they stay whole unless Megatron's
//! sequence parallelism splits them along the sequence (Korthikanti et al., "Reducing Activation
//! Recomputation in Large Transformer Models", §4.2.2: the all-reduce becomes a reduce-scatter
//! and the column-parallel input an all-gather), which `activations.rs` `hidden_share` applies:
//! each rank keeps `T / t` tokens of them, and of their gradients. A mixture of experts'
//! gathered inputs are kept whole (an upper bound). Norm weights and biases of row-parallel
//! linears stay whole on each rank.
//!
//! The embedding and the head depend on the framework ([`TpLayout`]):
//! - transformers' plan (`base_model_tp_plan`, the model's `_tp_plan`) leaves the embedding out
//!   (replicated) and makes `lm_head` column-parallel with a replicated output (`colwise_rep`,
//!   later `colwise_gather_output`: `ColwiseParallel(output_layouts=Replicate())` in
//!   `integrations/tensor_parallel.py`): an untied head's weight is split over the vocabulary,
//!   its logits are gathered whole on every rank, and a head tied to the embedding stays whole;
//! - Megatron-core splits the embedding (`VocabParallelEmbedding`) and the output layer over the
//!   vocabulary and keeps the logits split for the vocab-parallel cross-entropy and log-probs
//!   (`tensor_parallel/cross_entropy.py`; verl `utils/megatron/tensor_parallel.py`
//!   `vocab_parallel_log_probs_from_logits`): each rank holds `V / t` rows and `[T, V / t]`
//!   logits.
//!
//! Mamba-2 mixers are kept whole (transformers' plans do not split them), an upper bound.
//! Uneven splits (`t` not dividing a count) round up, what the largest shard holds.

use super::context::Implementation;
use super::weights::{self, ParamCounts};
use crate::catalog::Architecture;
use crate::plan::{Plan, TpLayout};

/// The tensor-parallel size and layout of `plan` on a world of `world` ranks: the plan's size,
/// or the world where the framework builds its mesh over every process (`from_pretrained(
/// tp_plan="auto")` without `tp_size`, `integrations/tensor_parallel.py`
/// `initialize_tensor_parallelism`: `tp_size if tp_size is not None else world_size`).
pub(super) fn size(plan: &Plan, world: u64) -> Option<(u64, TpLayout)> {
    let tp = plan.tensor_parallel.as_ref()?;
    let size = tp.value.size.unwrap_or(world).max(1);
    (size > 1).then_some((size, tp.value.layout))
}

/// Whether the plan's tensor-parallel group spans every process of the launch.
pub(super) fn spans_the_world(plan: &Plan) -> bool {
    plan.tensor_parallel.as_ref().is_some_and(|tp| tp.value.size.is_none())
}

/// One rank's share of `arch` under `tp`-way tensor parallelism: the same depth and hidden size
/// with `1/tp` of the heads, key/value heads and MLP width (dense, routed-expert and shared-expert
/// alike: transformers' MoE plans split each expert's `gate_up_proj`/`down_proj`, and
/// Megatron's expert tensor parallelism defaults to the tensor-parallel size), and under
/// Megatron `1/tp` of the vocabulary.
pub(super) fn share(arch: &Architecture, tp: u64, layout: TpLayout) -> Architecture {
    let split = |n: u64| n.div_ceil(tp.max(1));
    let mut a = arch.clone();
    a.n_head = split(a.n_head);
    a.n_query_groups = split(a.n_query_groups);
    if let Some(global) = a.global_attention.as_mut() {
        global.n_query_groups = split(global.n_query_groups);
    }
    a.intermediate_size = split(a.intermediate_size);
    a.moe_intermediate_size = a.moe_intermediate_size.map(split);
    a.shared_expert_intermediate_size = a.shared_expert_intermediate_size.map(split);
    if matches!(layout, TpLayout::Megatron { .. }) {
        a.vocab_size = split(a.vocab_size);
        a.padded_vocab_size = split(a.padded_vocab_size);
    }
    a
}

/// One rank's model under `tp`-way tensor parallelism (see [`share`]): its architecture, its
/// parameter counts (under transformers' plan an untied head's weight split over the vocabulary)
/// and the rows of the logits it holds (under Megatron `1/tp` of the vocabulary; a reward
/// model's one-row score head stays whole).
pub(super) fn split(
    arch: &Architecture,
    implementation: Implementation,
    reward: bool,
    tp: u64,
    layout: TpLayout,
) -> (Architecture, ParamCounts, u64) {
    let arch = share(arch, tp, layout);
    let (mut counts, rows) = weights::counts_and_head_rows(&arch, implementation, reward);
    if !reward && layout == TpLayout::Transformers && counts.head > 0 {
        let head = counts.head.div_ceil(tp);
        counts.total = counts.total - counts.head + head;
        counts.head = head;
    }
    (arch, counts, rows)
}

/// How the layout treats the embedding, the head and the logits, for the per-rank note.
pub(super) fn vocabulary(layout: TpLayout) -> &'static str {
    match layout {
        TpLayout::Transformers => {
            "the embedding whole, an untied LM head split over the vocabulary with its logits gathered whole"
        }
        TpLayout::Megatron { .. } => "the embedding, the LM head and the logits split over the vocabulary",
    }
}
