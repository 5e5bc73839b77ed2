//! What one rank holds beyond its shards under LitGPT's FSDP.
//!
//! LitGPT's scripts use Fabric's `FSDPStrategy(auto_wrap_policy={Block},
//! activation_checkpointing_policy={Block}, limit_all_gathers=True)`: torch FSDP1 with
//! `FULL_SHARD`, one FlatParameter per `Block` and one for the root (embedding, final norm,
//! head), and `use_orig_params=True` (Fabric's default), so frozen and trainable parameters
//! share a FlatParameter.

use super::context::Implementation;
use super::setup::Setup;
use super::{Component, Phase, Provenance};
use crate::plan::Method;

/// Parameters of the root FlatParameter and of one `Block`'s.
fn unit_parameters(s: &Setup) -> (u64, u64) {
    let c = &s.counts;
    let root = c.embedding + c.head + s.arch.n_embd;
    (root, c.total.saturating_sub(root) / s.arch.n_layer.max(1))
}

/// Whether the root FlatParameter has a trainable parameter (head, embedding or final norm).
fn root_trainable(s: &Setup) -> bool {
    match s.method {
        Method::Full | Method::Pretrain | Method::AdapterV2 => true,
        Method::Lora | Method::Qlora => s.lora_targets.lm_head,
        Method::Adapter => false,
    }
}

/// Whether the blocks' FlatParameters have a trainable parameter.
fn blocks_trainable(s: &Setup) -> bool {
    let t = &s.lora_targets;
    match s.method {
        Method::Lora | Method::Qlora => t.query || t.key || t.value || t.output || t.mlp_gate || t.mlp_up || t.mlp_down,
        _ => true,
    }
}

/// Micro-batches that only accumulate run under `no_backward_sync` (FSDP's `no_sync`): each
/// rank keeps unsharded gradients and no sharded ones until the synchronizing micro-batch.
pub(super) fn accumulates_unsharded(s: &Setup) -> bool {
    s.implementation == Implementation::Litgpt && s.world > 1 && s.grad_accumulation > 1
}

pub(super) fn litgpt_rank_buffers(s: &Setup) -> Vec<Component> {
    let (root, block) = unit_parameters(s);
    let beta = s.param_bytes;
    let grad_beta = s.trainable_bytes;
    let mut out = vec![
        Component {
            name: "gathered-root",
            bytes: root * beta,
            phase: Phase::Forward,
            live_in: vec![Phase::Forward, Phase::Backward, Phase::BackwardEnd],
            formula: format!(
                "{root} root params (embedding, final norm, head) × {beta} B: FULL_SHARD does not reshard the root \
                 after forward, only at the end of backward"
            ),
            provenance: Provenance::Derived,
        },
        Component {
            name: "gathered-blocks",
            bytes: 2 * block * beta,
            phase: Phase::Forward,
            live_in: vec![Phase::Forward, Phase::Backward],
            formula: format!("two gathered blocks ({block} params each; limit_all_gathers) × {beta} B"),
            provenance: Provenance::Derived,
        },
    ];
    if accumulates_unsharded(s) {
        let blocks = if blocks_trainable(s) { s.arch.n_layer * block } else { 0 };
        let root_grad = if root_trainable(s) { root } else { 0 };
        out.push(Component {
            name: "unsharded-gradients",
            bytes: (blocks + root_grad) * grad_beta,
            phase: Phase::Backward,
            live_in: vec![Phase::Forward, Phase::Backward, Phase::BackwardEnd],
            formula: format!(
                "({blocks} block + {root_grad} root params) × {grad_beta} B: under no_sync each FlatParameter with a \
                 trainable parameter accumulates a gradient of its full unsharded size, frozen parameters included"
            ),
            provenance: Provenance::Derived,
        });
    }
    if root_trainable(s) {
        let (head, embedding) = (s.counts.head, s.counts.embedding);
        out.push(Component {
            name: "head-gradient",
            bytes: head * grad_beta,
            phase: Phase::Backward,
            live_in: vec![Phase::Backward, Phase::BackwardEnd],
            formula: format!(
                "{head} head params × {grad_beta} B: waits in autograd's input buffer of the root FlatParameter's \
                 views until the embedding's gradient arrives"
            ),
            provenance: Provenance::Derived,
        });
        out.push(Component {
            name: "root-gradient",
            bytes: (embedding + root) * grad_beta,
            phase: Phase::BackwardEnd,
            live_in: vec![Phase::BackwardEnd],
            formula: format!(
                "({embedding} embedding + {root} root params) × {grad_beta} B: the embedding's gradient and the root \
                 FlatParameter's gradient assembled from its views, before accumulation and reduce-scatter"
            ),
            provenance: Provenance::Derived,
        });
    }
    out
}
