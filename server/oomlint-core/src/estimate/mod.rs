//! Peak GPU memory of one training plan, per component and phase.
//!
//! [`estimate`] turns a [`Plan`], the model's [`Architecture`] and optionally a [`Gpu`]
//! into an [`Estimate`]: the components that are live in each phase (load, forward, backward,
//! optimizer step, RL generation), the peak over those phases in three views
//! (allocated, reserved, device), a verdict against the GPU, and the levers that lower
//! the peak, each with the exact edits built from the plan's spans.
//!
//! What stays alive depends on framework releases as well as on the plan (bitsandbytes before
//! 0.43.2 keeps 4-bit matmul inputs; LitGPT 0.5 adds `StableEmbedding`): [`estimate_in`] takes
//! them in a [`Context`], [`estimate`] assumes the newest releases.
//!
//! Every number carries its formula and provenance. The per-layer saved-activation
//! tables mirror what PyTorch keeps alive in each framework's code path; see
//! `activations.rs` and the oracle-derived tables in `tests/estimator/`.

mod activations;
pub mod breakdown;
mod buckets;
pub mod chart;
mod context;
mod fsdp;
mod generation;
mod levers;
mod megatron;
mod optimizer;
mod phases;
mod setup;
mod tensor_parallel;
mod timeline;
mod views;
mod vllm_share;
mod weights;
mod zero;

use crate::plan::Sharding;
pub(crate) use vllm_share::VllmClaim;

pub use context::Context;
pub use levers::Lever;
pub use levers::Solve;
pub(crate) use setup::Setup;
pub use timeline::TimelinePhase;

use crate::catalog::{Architecture, Gpu};
use crate::plan::Plan;
use serde::Serialize;

/// One training phase; the peak is the maximum of what is live in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// After the model is loaded, before the first step: weights, adapters, a reference model,
    /// a colocated vLLM's slab. Everything live here stays live in every other phase.
    Load,
    /// End of the forward pass and the loss: every saved activation is live.
    Forward,
    /// Early backward: saved activations, logits gradients and new parameter gradients.
    Backward,
    /// The last step of backward, after the activations are freed (reported as `backward`):
    /// only separate where the root's gradients are assembled there (LitGPT's FSDP).
    #[serde(rename = "backward")]
    BackwardEnd,
    /// `optimizer.step()`: gradients, optimizer state and the step's temporaries.
    OptimizerStep,
    /// RL generation (vLLM colocated or Hugging Face `generate`).
    Generation,
    /// The no-grad log-prob passes between generation and the update (verl's old log-probs and
    /// reference log-probs, `fsdp_workers.py` `compute_log_prob`, `compute_ref_log_prob`).
    LogProbs,
    /// Handing the actor's updated weights to the colocated rollout engine before generation
    /// (verl's `rollout_mode`): what is gathered whole for it.
    WeightSync,
}

impl Phase {
    /// Every phase, in the order the peak is taken (a tie goes to the later phase, so the load,
    /// a subset of the forward pass, is never the peak). What is live in all of them is
    /// resident from the model's load on.
    pub(crate) const ALL: [Phase; 8] = [
        Phase::Load,
        Phase::Forward,
        Phase::Backward,
        Phase::BackwardEnd,
        Phase::OptimizerStep,
        Phase::WeightSync,
        Phase::Generation,
        Phase::LogProbs,
    ];
    /// The phases of a training step, every phase but the load: what is live in all of them
    /// appears with the first step (optimizer state) and then stays.
    pub(crate) const STEP: &'static [Phase] = Phase::ALL.split_at(1).1;

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Forward => "forward",
            Phase::Backward | Phase::BackwardEnd => "backward",
            Phase::OptimizerStep => "optimizer-step",
            Phase::Generation => "generation",
            Phase::LogProbs => "log-probs",
            Phase::WeightSync => "weight-sync",
        }
    }
}

/// How much a number can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// Follows from the shapes alone (parameter bytes).
    Exact,
    /// Follows from the framework's code path (what autograd saves).
    Derived,
    /// A constant measured on real runs (allocator overhead, CUDA context).
    Calibrated,
    /// A rule of thumb with a wide band.
    Heuristic,
}

/// One memory component with its formula.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Component {
    pub name: &'static str,
    pub bytes: u64,
    /// The phase where this component is largest or first appears.
    pub phase: Phase,
    /// The phases in which it is live (its bytes count towards their totals).
    pub live_in: Vec<Phase>,
    pub formula: String,
    pub provenance: Provenance,
}

/// Total live bytes of one phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct PhaseTotal {
    pub(crate) phase: Phase,
    pub(crate) allocated_bytes: u64,
}

/// The peak phase in the three views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Peak {
    pub phase: Phase,
    /// What `torch.cuda.max_memory_allocated()` reports.
    pub allocated_bytes: u64,
    /// Plus the caching allocator's cached and fragmented blocks (`max_memory_reserved()`).
    pub reserved_bytes: u64,
    /// Plus the CUDA context, NCCL and pools outside PyTorch (what `nvidia-smi` and OOM see).
    pub device_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Fits,
    /// Less than 10 % of the GPU left over.
    Tight,
    /// Exceeds when a batch reaches the maximum sequence length, fits with short ones: batches
    /// are padded to their longest sample, so the dataset decides.
    MayExceed,
    Exceeds,
}

/// The device view against the GPU's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fit {
    pub verdict: Verdict,
    /// Capacity minus the device view; negative when it does not fit.
    pub headroom_bytes: i64,
}

/// Share of the GPU that must stay free for a plan to count as fitting rather than tight.
pub(crate) const TIGHT_HEADROOM: f64 = 0.10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub parameters: u64,
    pub trainable_parameters: u64,
    pub components: Vec<Component>,
    pub(crate) phases: Vec<PhaseTotal>,
    pub peak: Peak,
    /// Relative uncertainty of the device view: (low, high), e.g. (-0.06, 0.10).
    pub band: (f64, f64),
    pub fit: Option<Fit>,
    pub levers: Vec<Lever>,
    pub solve: Option<Solve>,
    /// Plan inputs that were missing and replaced by an assumption, one sentence each.
    pub missing_inputs: Vec<String>,
    /// What the plan was read with beyond the analysed file, one sentence each (the launch
    /// script a config opened alone was analysed with).
    pub notes: Vec<String>,
    /// When one GPU is assumed for a run that more GPUs would shard: the device view per
    /// rank on 2, 4 and 8 GPUs (one node).
    pub per_world_size: Vec<WorldSizePeak>,
}

/// The device view of one rank for a world size the launch could set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WorldSizePeak {
    pub gpus: u64,
    pub device_bytes: u64,
}

/// World sizes shown when the launch sets it and the estimate assumed one GPU.
const WHAT_IF_GPUS: [u64; 3] = [2, 4, 8];

/// The peak per rank on each of [`WHAT_IF_GPUS`], when `setup` assumed one GPU.
fn per_world_size(
    plan: &Plan,
    arch: &Architecture,
    gpu: Option<&Gpu>,
    context: &Context,
    setup: &Setup,
) -> Vec<WorldSizePeak> {
    if !setup.one_gpu_assumed {
        return Vec::new();
    }
    // A tensor-parallel group of fixed size fills whole multiples of itself.
    let group = if tensor_parallel::spans_the_world(plan) { 1 } else { setup.tensor_parallel };
    WHAT_IF_GPUS
        .into_iter()
        .filter(|gpus| *gpus > group && gpus % group == 0)
        .map(|gpus| {
            let mut what_if = plan.clone();
            what_if.devices = Some(crate::plan::Sourced::derived(gpus, "a world size the launch could set"));
            what_if.num_nodes = None;
            let peak = phases::evaluate(&peak_rank(&what_if, arch, gpu, context).0).peak;
            WorldSizePeak { gpus, device_bytes: peak.device_bytes }
        })
        .collect()
}

/// Estimates the peak memory of `plan` for `arch`, with the verdict and levers when `gpu` is
/// known, for the newest framework releases.
pub fn estimate(plan: &Plan, arch: &Architecture, gpu: Option<&Gpu>) -> Estimate {
    estimate_in(plan, arch, gpu, &Context::default())
}

/// [`estimate`] for the framework releases and batch order in `context`.
pub fn estimate_in(plan: &Plan, arch: &Architecture, gpu: Option<&Gpu>, context: &Context) -> Estimate {
    estimate_with(plan, arch, gpu, context, Levers::Always)
}

/// When an estimate carries its levers and the solver's answer: each lever and each step
/// of the solver re-evaluates the whole plan, several times the cost of the estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Levers {
    /// Always (the language server's hover and code actions, `estimate`, `levers`).
    #[default]
    Always,
    /// Only when the plan is tight on or exceeds the GPU: the memory findings offer them
    /// as fixes, and nothing else in `check` reads them.
    ForFindings,
}

/// [`estimate_in`], with levers and solver only where `levers` asks for them.
pub(crate) fn estimate_with(
    plan: &Plan,
    arch: &Architecture,
    gpu: Option<&Gpu>,
    context: &Context,
    levers: Levers,
) -> Estimate {
    let (setup, other_stage) = peak_rank(plan, arch, gpu, context);
    let core = phases::evaluate(&setup);
    let fit = gpu.map(|g| data_dependent(judge(core.peak.device_bytes, g.memory_bytes), &setup, g.memory_bytes));
    let wanted = match levers {
        Levers::Always => true,
        Levers::ForFindings => fit.is_some_and(|f| f.verdict != Verdict::Fits),
    };
    let solve = gpu.filter(|_| wanted).map(|g| levers::solve(plan, arch, g, context));
    let levers = if wanted { levers::levers(plan, arch, gpu, context, &core, solve.as_ref()) } else { Vec::new() };
    let per_world_size = per_world_size(plan, arch, gpu, context, &setup);
    let notes = rank_note(&setup, other_stage).into_iter().collect();
    Estimate {
        parameters: setup.model_parameters,
        trainable_parameters: setup.model_trainable,
        components: core.components,
        phases: core.phases,
        peak: core.peak,
        band: core.band,
        fit,
        levers,
        solve,
        missing_inputs: setup.missing,
        notes,
        per_world_size,
    }
}

/// The setup of the rank that peaks highest: under Megatron pipeline parallelism the first
/// stage or the last (`megatron.rs`), with the other's device peak; any rank otherwise.
pub(super) fn peak_rank(
    plan: &Plan,
    arch: &Architecture,
    gpu: Option<&Gpu>,
    context: &Context,
) -> (Setup, Option<u64>) {
    let first = Setup::resolve(plan, arch, gpu, context);
    if first.pipeline_parallel <= 1 {
        return (first, None);
    }
    let last = Setup::resolve_stage(plan, arch, gpu, context, megatron::Stage::Last);
    let (first_peak, last_peak) =
        (phases::evaluate(&first).peak.device_bytes, phases::evaluate(&last).peak.device_bytes);
    if last_peak > first_peak {
        (last, Some(first_peak))
    } else {
        (first, Some(last_peak))
    }
}

/// Which rank the estimate describes when there are several, and why: data parallelism gives
/// every rank the same state (a replica under DDP, an equal 1/N shard under ZeRO and FSDP, which
/// pad their flat buffers to equal sizes) and the same micro batch size, and tensor parallelism
/// gives each rank of a group an equal slice of every block, so no rank holds more by
/// construction; what differs is the data each draws.
fn rank_note(setup: &Setup, other_stage: Option<u64>) -> Option<String> {
    let n = setup.world;
    if n <= 1 {
        return None;
    }
    let (tp, dp, group) = (setup.tensor_parallel, setup.data_parallel, setup.shard_group);
    let whole = if tp > 1 { "its tensor-parallel slice" } else { "a full replica" };
    let state = match setup.sharding {
        Sharding::None | Sharding::Zero { stage: 0, .. } => format!("{whole} of the model and optimizer state"),
        _ if group <= 1 => {
            format!("{whole} of the model and optimizer state (one data-parallel rank: nothing to shard)")
        }
        Sharding::Zero { stage, .. } => format!("an equal 1/{group} shard of what ZeRO-{stage} partitions"),
        Sharding::Fsdp { full_shard: true, .. } => {
            format!("an equal 1/{group} shard of the parameters, gradients and optimizer state")
        }
        Sharding::Fsdp { full_shard: false, .. } => {
            format!("an equal 1/{group} shard of the gradients and optimizer state")
        }
        Sharding::Megatron { distributed_optimizer: true } => {
            let share = match (tp, setup.expert_parallel) {
                (1, 1) => "the whole model",
                (1, _) => "that share",
                _ => "that slice",
            };
            format!(
                "the bf16 weights and fp32 gradients of {share} and an equal 1/{group} shard of their fp32 master weights and Adam moments (Megatron's distributed optimizer)"
            )
        }
        Sharding::Megatron { distributed_optimizer: false } => {
            format!("{whole} of the model and optimizer state (Megatron without the distributed optimizer)")
        }
    };
    let state = match dp / group.max(1) {
        replicas
            if replicas > 1
                && !matches!(
                    setup.sharding,
                    Sharding::None | Sharding::Zero { stage: 0, .. } | Sharding::Megatron { .. }
                ) =>
        {
            format!("{state} (hybrid sharding: {replicas} replicas of a {group}-rank shard group)")
        }
        _ => state,
    };
    let mut slice = match setup.tp_layout {
        Some(layout) if tp > 1 => format!(
            " 1/{tp} of every block's attention heads and MLP width (tensor parallelism over {tp} ranks × {dp} data-parallel; {}),",
            tensor_parallel::vocabulary(layout)
        ),
        _ => String::new(),
    };
    if setup.expert_parallel > 1 {
        let ep = setup.expert_parallel;
        slice.push_str(&format!(
            " 1/{ep} of the routed experts (expert parallelism over {ep} ranks, their optimizer state sharded over {} expert-data-parallel),",
            setup.expert_data_parallel
        ));
    }
    let data = if setup.length_from_data {
        "; batches are padded per rank, so the rank that draws the longest samples peaks highest"
    } else {
        ""
    };
    let split = match setup.sequence_parallel {
        1 => String::new(),
        sp => format!(" ({} tokens each: sequences are split over {sp} ranks)", setup.seq_len),
    };
    if setup.pipeline_parallel > 1 {
        let pp = setup.pipeline_parallel;
        let other = other_stage.map_or(String::new(), format_bytes);
        return Some(match setup.stage {
            megatron::Stage::First => format!(
                "per rank: the first of {pp} pipeline stages, which peaks above the last ({other}: one micro batch in flight, the output layer and the logits); its ranks hold{slice} its layers and the embedding, {state}, and the activations of the micro batches of {}{split} that 1F1B keeps in flight there (up to {pp}){data}",
                setup.micro_batch
            ),
            megatron::Stage::Last => format!(
                "per rank: the last of {pp} pipeline stages, which peaks above the first ({other}: up to {pp} micro batches in flight, no logits); its ranks hold{slice} its layers and the output layer, {state}, the activations of one micro batch of {}{split} (1F1B runs no warm-up forward there) and its logits{data}",
                setup.micro_batch
            ),
        });
    }
    Some(format!(
        "per rank: each of the {n} ranks holds{slice} {state} and a micro batch of {}{split}, so the ranks peak alike and this is any one of them{data}",
        setup.micro_batch
    ))
}

/// `exceeds` becomes `may-exceed` where a batch's tokens depend on its samples' lengths (padded
/// to the longest, or unpadded) and a batch of one-token samples fits: the dataset's lengths, not
/// the file, decide.
fn data_dependent(fit: Fit, setup: &Setup, capacity: u64) -> Fit {
    if fit.verdict != Verdict::Exceeds || !setup.length_from_data {
        return fit;
    }
    let shortest = Setup { seq_len: 1, ..setup.clone() };
    let floor = phases::evaluate(&shortest).peak.device_bytes;
    match judge(floor, capacity).verdict {
        Verdict::Exceeds => fit,
        _ => Fit { verdict: Verdict::MayExceed, ..fit },
    }
}

/// Fits, tight (< 10 % headroom) or exceeds.
pub(crate) fn judge(device_bytes: u64, capacity: u64) -> Fit {
    let headroom =
        (i128::from(capacity) - i128::from(device_bytes)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    let verdict = if headroom < 0 {
        Verdict::Exceeds
    } else if (headroom as f64) < TIGHT_HEADROOM * capacity as f64 {
        Verdict::Tight
    } else {
        Verdict::Fits
    };
    Fit { verdict, headroom_bytes: headroom }
}

/// Human-readable binary size, e.g. `21.3 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.2} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", b / MIB)
    }
}

#[cfg(test)]
mod tests;
