//! What one rank holds beyond its shards under FSDP: LitGPT's, and the end of backward of
//! the Hugging Face Trainer's (accelerate FSDP1/FSDP2).
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

/// The end of backward of a Hugging Face model under full-shard FSDP, full fine-tuning: the
/// root unit (embedding, final norm, head) is still gathered, its gradients are assembled, and
/// the last decoder layer's reduce-scatter input is still held. `gathered_bytes` is the dtype
/// the units are gathered in.
///
/// Follows torch 2.15 `torch/distributed/fsdp/_fully_shard/` (FSDP2; FSDP1's root FlatParameter
/// behaves alike):
/// - `_fsdp_state.py` / `_fsdp_param_group.py`: the root group is not resharded after forward,
///   so its unsharded parameters live until its `post_backward`, the last one to run;
/// - a tied embedding and head share one parameter: autograd keeps the head's weight gradient
///   in the input buffer of that parameter's `AccumulateGrad` until the embedding's gradient
///   arrives at the very end, then adds them (head gradient, embedding gradient, sum);
///   untied, the head's gradient is accumulated into its `.grad` and `foreach_reduce`
///   (`_fsdp_collectives.py`) copies every unsharded gradient of the root into the
///   reduce-scatter input before `unsharded_grads.clear()` (both alive at once);
/// - `FSDPCommContext.reduce_scatter_states` keeps the previous group's reduce-scatter input
///   (`reduce_scatter_max_input_buffers = 1`) until the next group's reduce: the first
///   decoder layer's, one layer of gradients, when the root reduces.
///
/// Checked against `FSDPMemTracker` on the CPU (`tests/estimator/fsdp2_oracle.csv`), where
/// with activation checkpointing this moment is the rank's peak.
pub(super) fn hf_backward_end(s: &Setup, gathered_bytes: u64) -> Vec<Component> {
    if s.is_peft() || !matches!(s.method, Method::Full | Method::Pretrain) {
        return Vec::new();
    }
    let c = &s.counts;
    let root = c.embedding + c.head + s.arch.n_embd;
    let block = c.total.saturating_sub(root) / s.arch.n_layer.max(1);
    let (root_grads, how) = if c.head == 0 {
        (3 * c.embedding, "3 × {e} tied embedding/head params: the head's gradient waiting for the embedding's, the embedding's, and their sum")
    } else {
        (2 * root, "2 × {r} root params: the unsharded gradients and the reduce-scatter input they are copied into")
    };
    let how = how.replace("{e}", &c.embedding.to_string()).replace("{r}", &root.to_string());
    vec![
        Component {
            name: "gathered-root",
            bytes: root * gathered_bytes,
            phase: Phase::BackwardEnd,
            live_in: vec![Phase::BackwardEnd],
            formula: format!(
                "{root} root params (embedding, final norm, head) × {gathered_bytes} B: the root unit is not resharded \
                 after forward and stays gathered until its post-backward, the last"
            ),
            provenance: Provenance::Derived,
        },
        Component {
            name: "root-gradient",
            bytes: root_grads * gathered_bytes + block * gathered_bytes,
            phase: Phase::BackwardEnd,
            live_in: vec![Phase::BackwardEnd],
            formula: format!(
                "({how}) + one decoder layer's reduce-scatter input ({block} params, kept until the next reduce) × \
                 {gathered_bytes} B"
            ),
            provenance: Provenance::Derived,
        },
    ]
}
