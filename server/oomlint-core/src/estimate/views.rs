//! From allocated bytes to the reserved and device views, and the uncertainty band.

use super::context::Implementation;
use super::setup::Setup;
use super::{Component, Phase, Provenance};
use crate::plan::Checkpointing;

/// CUDA context of one process with lazy module loading (PyTorch ≥ 1.13): 0.3–0.6 GiB.
pub(super) const CUDA_CONTEXT_BYTES: u64 = 470 * (1 << 20);

/// NCCL communicators and buffers per rank when training is distributed.
pub(super) const NCCL_BYTES: u64 = 512 * (1 << 20);

/// Cached-but-free share of the allocated peak (reserved / allocated − 1).
pub(super) fn fragmentation(s: &Setup) -> (f64, String) {
    let variable_length = s.implementation != Implementation::Litgpt;
    let mut phi: f64 = 0.05;
    let mut why = vec!["5 % fixed-shape training".to_string()];
    if variable_length {
        phi += 0.05;
        why.push("+5 % variable-length batches".into());
    }
    if s.checkpointing != Checkpointing::None && s.is_peft() {
        phi += 0.03;
        why.push("+3 % checkpointing with adapters".into());
    }
    if s.expandable_segments {
        phi /= 2.0;
        why.push("halved by expandable_segments".into());
    }
    (phi, why.join(", "))
}

/// The allocator's cached blocks at the peak.
pub(super) fn allocator_overhead(s: &Setup, allocated: u64, peak: Phase) -> Component {
    let (phi, why) = fragmentation(s);
    Component {
        name: "allocator-overhead",
        bytes: (allocated as f64 * phi) as u64,
        phase: peak,
        live_in: vec![peak],
        formula: format!("{:.0} % of the allocated peak ({why})", phi * 100.0),
        provenance: Provenance::Calibrated,
    }
}

/// Memory outside the PyTorch allocator: CUDA context, NCCL, paged optimizer state.
pub(super) fn outside_allocator(s: &Setup, paged_optimizer: u64) -> Vec<Component> {
    let mut out = vec![Component {
        name: "cuda-context",
        bytes: CUDA_CONTEXT_BYTES,
        phase: Phase::Forward,
        live_in: Phase::ALL.to_vec(),
        formula: format!("{} per process (lazy module loading)", super::format_bytes(CUDA_CONTEXT_BYTES)),
        provenance: Provenance::Calibrated,
    }];
    if s.world > 1 {
        out.push(Component {
            name: "nccl",
            bytes: NCCL_BYTES,
            phase: Phase::Backward,
            live_in: Phase::ALL.to_vec(),
            formula: format!("{} of NCCL communicators and buffers per rank", super::format_bytes(NCCL_BYTES)),
            provenance: Provenance::Heuristic,
        });
    }
    if paged_optimizer > 0 {
        out.push(Component {
            name: "paged-optimizer-resident",
            bytes: paged_optimizer,
            phase: Phase::OptimizerStep,
            live_in: Phase::STEP.to_vec(),
            formula: "paged optimizer state resident on the device (managed memory)".into(),
            provenance: Provenance::Derived,
        });
    }
    out
}

/// Relative band of the device view: the model's error plus the fragmentation spread. An
/// architecture sized from its name (`catalog/names.rs`) adds
/// [`NAME_SIZED_ERROR`](crate::catalog::names::NAME_SIZED_ERROR) to the model's error in
/// quadrature (independent errors): ±35 % on top of the path's own, e.g. 0.15 → 0.38.
pub(super) fn band(s: &Setup) -> (f64, f64) {
    let (phi, _) = fragmentation(s);
    // Roughly the p90 |error| measured by `cargo bench --bench accuracy` (tests/estimator/ACCURACY.md);
    // Hugging Face paths are checked against the oracle only.
    let path: f64 = match s.implementation {
        Implementation::Litgpt => 0.07,
        Implementation::Hf => 0.15,
        Implementation::Unsloth => 0.30,
    };
    let shape = if s.arch.sized_from_name { crate::catalog::names::NAME_SIZED_ERROR } else { 0.0 };
    let model = path.hypot(shape);
    let rl = if s.rl.is_some() { 0.05 } else { 0.0 };
    (-(model + phi / 2.0), model + phi + rl)
}
