//! What one DeepSpeed ZeRO rank holds on the device beyond its partitions.
//!
//! Mirrors `deepspeed/runtime/zero/stage3.py` (`DeepSpeedZeroOptimizer_Stage3`) and
//! `partitioned_param_coordinator.py` at deepspeedai/DeepSpeed@38327e07:
//! - parameters are gathered one submodule at a time, with up to
//!   `stage3_prefetch_bucket_size` elements fetched ahead and at most
//!   `stage3_max_live_parameters` kept gathered; parameters under
//!   `stage3_param_persistence_threshold` elements stay gathered for the whole run;
//! - a submodule's full gradient exists until it is copied into the reduce bucket
//!   (`__ipg_bucket_flat_buffer`, `reduce_bucket_size` elements of the 16-bit dtype,
//!   allocated at start-up with `contiguous_gradients`) and reduce-scattered;
//! - with `offload_param` the 16-bit partitions live on the CPU (or NVMe); with
//!   `offload_optimizer` the gradient partitions (`grad_partitions_flat_buffer` on
//!   `self.device`, the CPU), fp32 master weights and moments do.
//!
//! DeepSpeed's own estimate (`stage3.py` `estimate_zero3_model_states_mem_needs`) charges the
//! device `4 × largest_layer_params` with both offloads: the largest layer's 16-bit weight
//! and gradient; this module adds the prefetch and reduce buckets it leaves out.

use super::context::Implementation;
use super::setup::Setup;
use super::{Component, Phase, Provenance};
use crate::plan::Sharding;

/// Whether the run is DeepSpeed ZeRO-3 (LitGPT shards with its own FSDP).
pub(super) fn stage3(s: &Setup) -> bool {
    s.implementation != Implementation::Litgpt && matches!(s.sharding, Sharding::Zero { stage: 3.., .. })
}

/// Whether ZeRO keeps the 16-bit parameter partitions off the device (stage 3 `offload_param`).
pub(super) fn params_offloaded(s: &Setup) -> bool {
    stage3(s) && matches!(s.sharding, Sharding::Zero { offload_params: true, .. })
}

/// Whether ZeRO keeps gradient partitions, master weights and optimizer state off the device.
pub(super) fn optimizer_offloaded(s: &Setup) -> bool {
    matches!(s.sharding, Sharding::Zero { stage: 1.., offload_optimizer: true, .. })
}

/// Parameters of the largest module, counting only its own tensors (`stage3.py`
/// `model_to_params`: `m.parameters(recurse=False)`): the embedding, the head or the widest
/// linear.
pub(super) fn largest_module(s: &Setup) -> u64 {
    s.counts.embedding.max(s.counts.head).max(s.counts.largest_linear)
}

/// Parameters that stay gathered on every rank: norms and biases, each smaller than
/// `stage3_param_persistence_threshold` when the hidden size is.
pub(super) fn persistent(s: &Setup) -> u64 {
    if s.arch.n_embd < s.buckets.persistence {
        s.counts.small
    } else {
        0
    }
}

/// The working set of a ZeRO-3 rank: gathered parameters, the largest module's gradient
/// before it is reduced, and the reduce bucket.
pub(super) fn stage3_buffers(s: &Setup) -> Vec<Component> {
    if !stage3(s) {
        return Vec::new();
    }
    let b = s.buckets;
    let largest = largest_module(s);
    let live = (largest + b.prefetch).min(b.max_live.max(largest));
    let beta = s.param_bytes;
    let mut out = vec![
        Component {
            name: "gathered-parameters",
            bytes: live * beta,
            phase: Phase::Forward,
            live_in: vec![Phase::Forward, Phase::Backward],
            formula: format!(
                "min(largest module {largest} + prefetch bucket {}, max live {}) params × {beta} B: ZeRO-3 gathers one \
                 submodule at a time",
                b.prefetch, b.max_live
            ),
            provenance: Provenance::Derived,
        },
        Component {
            name: "reduce-bucket",
            bytes: b.reduce * beta,
            phase: Phase::Backward,
            live_in: Phase::ALL.to_vec(),
            formula: format!("reduce_bucket_size {} elements × {beta} B, allocated at start-up", b.reduce),
            provenance: Provenance::Derived,
        },
    ];
    if !s.is_peft() {
        let grad = s.trainable_bytes;
        out.push(Component {
            name: "module-gradient",
            bytes: largest * grad,
            phase: Phase::Backward,
            live_in: vec![Phase::Backward],
            formula: format!(
                "largest module {largest} params × {grad} B: its full gradient before the reduce-scatter{}",
                if optimizer_offloaded(s) { " and the copy of its partition to the CPU" } else { "" }
            ),
            provenance: Provenance::Derived,
        });
    }
    out
}
