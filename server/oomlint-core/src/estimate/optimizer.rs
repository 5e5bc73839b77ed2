//! Trainable parameters, their gradients, optimizer state, master copies and step temporaries.

use super::setup::Setup;
use super::{fsdp, zero};
use super::{Component, Phase, Provenance};
use crate::plan::{Method, Optimizer, Sharding};

/// Optimizer state per trainable parameter: (bytes, paged outside the PyTorch allocator, label).
fn state_bytes(s: &Setup) -> (f64, bool, String) {
    let b = s.trainable_bytes as f64;
    let adam = format!("2 moments × {} B (AdamW follows the parameter dtype)", s.trainable_bytes);
    match &s.optimizer {
        Optimizer::AdamW | Optimizer::AdamWFused => (2.0 * b, false, adam),
        // bitsandbytes keeps tensors under 1e5 elements in ordinary memory and pages the rest.
        Optimizer::PagedAdamW => (2.0 * b, true, format!("{adam}, paged (managed memory, outside the allocator)")),
        Optimizer::AdamW8bit => (2.0 + 8.0 / 2048.0, false, "2 moments × 1 B + fp32 absmax per 2048".to_string()),
        Optimizer::PagedAdamW8bit => (2.0 + 8.0 / 2048.0, true, "2 moments × 1 B, paged".to_string()),
        Optimizer::Lion => (b, false, format!("1 moment × {} B", s.trainable_bytes)),
        Optimizer::Lion8bit => (1.0, false, "1 moment × 1 B".to_string()),
        // Factored second moment: one row and one column vector per matrix.
        Optimizer::Adafactor => {
            (4.0 * 0.002, false, "factored row/column statistics (≈ 0.2 % of the parameters × 4 B)".to_string())
        }
        Optimizer::Sgd => (0.0, false, "no state (momentum 0)".to_string()),
        Optimizer::Other(name) => (2.0 * b, false, format!("unknown optimizer `{name}`: assumed AdamW, {adam}")),
    }
}

/// Temporaries of one `step()`: the foreach AdamW path materializes one extra copy of the parameters.
fn step_temporary_bytes(s: &Setup) -> (f64, &'static str) {
    match s.optimizer {
        Optimizer::AdamW | Optimizer::Lion | Optimizer::Other(_) => (
            s.trainable_bytes as f64,
            "foreach implementation: one intermediate per parameter (sqrt of the second moment)",
        ),
        _ => (0.0, "fused or blockwise kernel: no full-size intermediates"),
    }
}

pub(super) fn components(s: &Setup) -> Vec<Component> {
    if let Sharding::Megatron { distributed_optimizer } = s.sharding {
        return megatron(s, distributed_optimizer);
    }
    let p = s.trainable as f64;
    let mut out = Vec::new();
    let accumulating = s.grad_accumulation > 1;
    if s.is_peft() {
        out.push(Component {
            name: "trainable",
            bytes: (p * s.trainable_bytes as f64 / s.shard_params as f64) as u64,
            phase: Phase::Forward,
            live_in: Phase::ALL.to_vec(),
            formula: format!("{} adapter params × {} B", s.trainable, s.trainable_bytes),
            provenance: Provenance::Exact,
        });
    }
    let grad_bytes = s.trainable_bytes as f64;
    // Every gradient exists at the end of backward. They persist across micro-batches, and small
    // adapter gradients count from the first backward; under LitGPT's FSDP the accumulating
    // micro-batches hold unsharded gradients instead.
    let mut grad_live = vec![Phase::OptimizerStep];
    if !fsdp::accumulates_unsharded(s) {
        grad_live.insert(0, Phase::BackwardEnd);
        if accumulating || s.is_peft() {
            grad_live.splice(0..0, [Phase::Forward, Phase::Backward]);
        }
    }
    let grads = Component {
        name: "gradients",
        bytes: (p * grad_bytes / s.shard_grads as f64) as u64,
        phase: Phase::OptimizerStep,
        live_in: grad_live,
        formula: format!(
            "{} trainable × {} B{}{}",
            s.trainable,
            s.trainable_bytes,
            shard_note(s.shard_grads),
            if fsdp::accumulates_unsharded(s) {
                ", from the synchronizing micro-batch on (unsharded while accumulating)".to_string()
            } else if accumulating {
                format!(", kept across {} accumulation steps", s.grad_accumulation)
            } else {
                String::new()
            }
        ),
        provenance: Provenance::Exact,
    };
    // ZeRO's optimizer offload keeps the gradient partitions on the CPU
    // (`stage3.py` `grad_partitions_flat_buffer` on `self.device`; `stage_1_and_2.py`
    // `async_accumulate_grad_in_cpu_via_gpu`).
    let offloaded = zero::optimizer_offloaded(s);
    if !offloaded {
        out.push(grads);
    }
    let (per, paged, label) = state_bytes(s);
    if per > 0.0 && !offloaded {
        out.push(Component {
            name: if paged { "optimizer-paged" } else { "optimizer" },
            bytes: (p * per / s.shard_optimizer as f64) as u64,
            phase: Phase::OptimizerStep,
            live_in: Phase::STEP.to_vec(),
            formula: format!("{} trainable × {label}{}", s.trainable, shard_note(s.shard_optimizer)),
            provenance: if matches!(s.optimizer, Optimizer::Adafactor | Optimizer::Other(_)) {
                Provenance::Heuristic
            } else {
                Provenance::Exact
            },
        });
    }
    if s.mixed_master() && !offloaded {
        out.push(Component {
            name: "master-weights",
            bytes: (p * 4.0 / s.shard_optimizer as f64) as u64,
            phase: Phase::OptimizerStep,
            live_in: Phase::STEP.to_vec(),
            formula: format!("{} trainable × 4 B fp32 master copy{}", s.trainable, shard_note(s.shard_optimizer)),
            provenance: Provenance::Exact,
        });
    }
    let (tmp, why) = step_temporary_bytes(s);
    if tmp > 0.0 && !offloaded {
        out.push(Component {
            name: "optimizer-temporaries",
            bytes: (p * tmp / s.shard_optimizer as f64) as u64,
            phase: Phase::OptimizerStep,
            live_in: vec![Phase::OptimizerStep],
            formula: format!("{} trainable × {} B: {why}", s.trainable, s.trainable_bytes),
            provenance: Provenance::Derived,
        });
    }
    out
}

/// Megatron-core's training state (`megatron.rs`): the fp32 gradient buffer whole on every rank
/// (`distributed/param_and_grad_buffer.py`, `grad_reduce_in_fp32`), and the optimizer's fp32 main
/// parameters and two fp32 Adam moments, sharded by the distributed optimizer over the
/// data-parallel ranks (the routed experts' over the expert-data-parallel ranks). Megatron's
/// Adam is a fused kernel (Transformer Engine's or Apex's `FusedAdam`): no full-size temporaries.
fn megatron(s: &Setup, distributed: bool) -> Vec<Component> {
    let (dense, experts) = (s.trainable.saturating_sub(s.expert_trainable), s.expert_trainable);
    let (dp, edp) = if distributed { (s.shard_optimizer, s.expert_data_parallel) } else { (1, 1) };
    let sharded = |bytes: u64| bytes * dense / dp.max(1) + bytes * experts / edp.max(1);
    let over = |bytes: u64| {
        let dense_part = format!("{dense} params × {bytes} B{}", shard_note(dp));
        if experts == 0 {
            dense_part
        } else {
            format!("{dense_part} + {experts} routed-expert params × {bytes} B{}", shard_note(edp))
        }
    };
    let mut grad_live = vec![Phase::BackwardEnd, Phase::OptimizerStep];
    if s.grad_accumulation > 1 || s.is_peft() {
        grad_live.splice(0..0, [Phase::Forward, Phase::Backward]);
    }
    vec![
        Component {
            name: "gradients",
            bytes: s.trainable * 4,
            phase: Phase::OptimizerStep,
            live_in: grad_live,
            formula: format!(
                "{} trainable × 4 B: Megatron's fp32 gradient buffer, whole on every data-parallel rank",
                s.trainable
            ),
            provenance: Provenance::Exact,
        },
        Component {
            name: "optimizer",
            bytes: sharded(8),
            phase: Phase::OptimizerStep,
            live_in: Phase::STEP.to_vec(),
            formula: format!("2 fp32 Adam moments: {}", over(8)),
            provenance: Provenance::Exact,
        },
        Component {
            name: "master-weights",
            bytes: sharded(4),
            phase: Phase::OptimizerStep,
            live_in: Phase::STEP.to_vec(),
            formula: format!("fp32 main parameters: {}", over(4)),
            provenance: Provenance::Exact,
        },
    ]
}

fn shard_note(n: u64) -> String {
    if n > 1 {
        format!(" / {n} ranks")
    } else {
        String::new()
    }
}

impl Setup {
    /// DeepSpeed keeps fp32 master weights next to 16-bit parameters; plain autocast does not.
    fn mixed_master(&self) -> bool {
        matches!(self.sharding, Sharding::Zero { stage: 1.., .. })
            && self.trainable_bytes < 4
            && !matches!(self.method, Method::Lora | Method::Qlora)
    }
}
