//! Levers: single changes that lower the peak, ranked by bytes saved, each with the plan
//! fields it changes and the exact edits when the file sets those fields; plus the inverse
//! solver (largest micro batch and sequence length that fit, smallest fitting combination).

use super::phases::{self, Core};
use super::{judge, Context, Phase, Verdict, VllmClaim};
use crate::catalog::{Architecture, Gpu, Vendor};
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::plan::{
    Checkpointing, Framework, LossImpl, Method, Optimizer, Plan, Precision, Quantization, Sourced, VllmMode, WeightSync,
};
use crate::syntax::Literal;
use serde::Serialize;

/// One plan field a lever sets, with its new value (each file's language spells it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    pub(crate) field: &'static str,
    pub(crate) value: Literal,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lever {
    pub title: String,
    pub saves_bytes: u64,
    /// The phase whose peak the lever lowers.
    pub phase: Phase,
    pub side_effect: String,
    pub(crate) changes: Vec<Change>,
    /// Exact edits; empty when a field the lever changes is not written in the file.
    pub fixes: Vec<Fix>,
}

/// What fits on the GPU with at least 10 % headroom: what [`super::judge`] calls `fits`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Solve {
    /// Largest micro batch that fits (0 when not even 1 does).
    pub max_micro_batch: u64,
    /// Largest sequence length (multiple of 128) that fits at the current micro batch
    /// (0 when not even 128 does); the sequence lever sets it when the plan does not fit.
    pub max_seq_length: u64,
    /// Titles of the fewest levers that together fit; empty when the plan already fits.
    pub smallest_fitting_combination: Vec<String>,
    /// Whether some combination fits at all.
    pub combination_fits: bool,
}

/// The candidate changes, in a fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    HalveMicroBatch,
    Checkpointing,
    EightBitOptimizer,
    Qlora,
    ShortenSequence,
    ChunkedLoss,
    LowerVllmFraction,
    VllmSleep,
    ExpandableSegments,
    /// verl's FSDP actor: `fsdp_config.param_offload` / `optimizer_offload`.
    VerlParamOffload,
    VerlOptimizerOffload,
    /// verl's LoRA hand-over one module at a time: `rollout.layered_summon`.
    LayeredSummon,
    /// verl's micro batches packed to a token budget: `use_dynamic_bsz`, `ppo_max_token_len_per_gpu`.
    VerlDynamicBatch,
}

const KINDS: [Kind; 13] = [
    Kind::HalveMicroBatch,
    Kind::Checkpointing,
    Kind::EightBitOptimizer,
    Kind::Qlora,
    Kind::ShortenSequence,
    Kind::ChunkedLoss,
    Kind::LowerVllmFraction,
    Kind::VllmSleep,
    Kind::ExpandableSegments,
    Kind::VerlParamOffload,
    Kind::VerlOptimizerOffload,
    Kind::LayeredSummon,
    Kind::VerlDynamicBatch,
];

fn derived<T>(value: T, why: &str) -> Sourced<T> {
    Sourced::derived(value, format!("lever: {why}"))
}

fn is_hf_family(f: Framework) -> bool {
    matches!(
        f,
        Framework::Trl | Framework::Transformers | Framework::Axolotl | Framework::Llamafactory | Framework::Unsloth
    )
}

/// Applies `kind` to a copy of `plan`; `None` when it does not apply. `fitting_seq` is the
/// solver's longest sequence that fits (0 when none does), when it ran.
fn apply(kind: Kind, plan: &Plan, fitting: Fitting) -> Option<(Plan, Vec<Change>)> {
    let mut p = plan.clone();
    let changes = match kind {
        Kind::HalveMicroBatch => {
            let micro = plan.micro_batch_size.as_ref()?.value;
            if micro < 2 {
                return None;
            }
            let half = micro / 2;
            p.micro_batch_size = Some(derived(half, "halve the micro batch"));
            let mut changes = vec![Change { field: "micro_batch_size", value: half.into() }];
            let ga = plan.gradient_accumulation.as_ref().map_or(1, |g| g.value) * 2;
            match plan.framework {
                Framework::Litgpt => {}
                // verl splits each mini batch into micro batches itself (`dp_actor.py` `update_policy`).
                Framework::Verl => p.gradient_accumulation = Some(derived(ga, "verl: mini batch ÷ micro batch")),
                // OpenRLHF derives the accumulation from the train batch (`DeepspeedStrategy`).
                Framework::Openrlhf => {
                    p.gradient_accumulation = Some(derived(ga, "OpenRLHF: train batch ÷ micro batch ÷ GPUs"))
                }
                _ => {
                    p.gradient_accumulation = Some(derived(ga, "keep the effective batch"));
                    changes.push(Change { field: "gradient_accumulation", value: ga.into() });
                }
            }
            changes
        }
        Kind::Checkpointing => {
            if plan.gradient_checkpointing.as_ref().is_some_and(|c| c.value != Checkpointing::None) {
                return None;
            }
            let (mode, value) = match plan.framework {
                Framework::Unsloth => (Checkpointing::CpuOffload, Literal::Str("unsloth".into())),
                Framework::Litgpt => return None,
                _ => (Checkpointing::Full, Literal::Bool(true)),
            };
            p.gradient_checkpointing = Some(derived(mode, "enable gradient checkpointing"));
            vec![Change { field: "gradient_checkpointing", value }]
        }
        Kind::EightBitOptimizer => {
            let current = plan.optimizer.as_ref().map_or(Optimizer::AdamW, |o| o.value.clone());
            if !matches!(current, Optimizer::AdamW | Optimizer::AdamWFused | Optimizer::PagedAdamW) {
                return None;
            }
            let quantized_litgpt = plan.framework == Framework::Litgpt && quantization(plan).is_some();
            // verl builds its optimizer from `optim.optimizer_impl`/`optim.optimizer`, not a name
            // this lever can spell.
            // OpenRLHF builds DeepSpeed's Adam itself, with no optimizer flag.
            if quantized_litgpt || matches!(plan.framework, Framework::Verl | Framework::Openrlhf) {
                return None;
            }
            p.optimizer = Some(derived(Optimizer::AdamW8bit, "8-bit AdamW"));
            let name = if plan.framework == Framework::Litgpt { "bitsandbytes.optim.AdamW8bit" } else { "adamw_8bit" };
            vec![Change { field: "optimizer", value: Literal::Str(name.into()) }]
        }
        Kind::Qlora => {
            let method = plan.method.as_ref().map(|m| m.value);
            // verl has no 4-bit loading of the actor.
            if method != Some(Method::Lora) || quantization(plan).is_some() || plan.framework == Framework::Verl {
                return None;
            }
            // LitGPT refuses quantization with mixed precision.
            let mixed = matches!(plan.precision.as_ref().map(|p| p.value), Some(Precision::Mixed(_)) | None);
            if plan.framework == Framework::Litgpt && mixed {
                return None;
            }
            p.method = Some(derived(Method::Qlora, "4-bit base weights"));
            p.quantization = Some(derived(Some(Quantization::Nf4 { double_quant: true }), "QLoRA"));
            let value = if plan.framework == Framework::Litgpt {
                Literal::Str("bnb.nf4-dq".into())
            } else {
                Literal::Bool(true)
            };
            vec![Change { field: "quantization", value }]
        }
        Kind::ShortenSequence => {
            let seq = plan.max_seq_length.as_ref()?.value;
            let shorter = shorter_sequence(seq, fitting.seq)?;
            p.max_seq_length = Some(derived(shorter, "shorten the maximum length"));
            vec![Change { field: "max_seq_length", value: shorter.into() }]
        }
        Kind::ChunkedLoss => {
            let loss = plan.loss.as_ref().map(|l| l.value);
            if !is_hf_family(plan.framework) || !matches!(loss, None | Some(LossImpl::Full)) {
                return None;
            }
            p.loss = Some(derived(LossImpl::Liger, "Liger fused linear cross-entropy"));
            vec![Change { field: "loss", value: Literal::Bool(true) }]
        }
        Kind::LowerVllmFraction => {
            let vllm = p.rl.as_mut()?.vllm.as_mut()?;
            if vllm.mode.value != VllmMode::Colocate || vllm.gpu_memory_utilization.value <= 0.15 {
                return None;
            }
            let current = vllm.gpu_memory_utilization.value;
            // The solver's fraction when the run does not fit, else a step down.
            let lower = match fitting.vllm_fraction {
                Some(f) if f < current => f,
                _ => ((current - 0.1) * 100.0).round() / 100.0,
            };
            vllm.gpu_memory_utilization = derived(lower, "lower the vLLM fraction");
            vec![Change { field: "vllm_gpu_memory_utilization", value: Literal::Float(lower) }]
        }
        Kind::VllmSleep => {
            let vllm = p.rl.as_mut()?.vllm.as_mut()?;
            if vllm.mode.value != VllmMode::Colocate || vllm.enable_sleep_mode.value {
                return None;
            }
            vllm.enable_sleep_mode = derived(true, "vLLM sleep mode");
            vec![Change { field: "vllm_enable_sleep_mode", value: Literal::Bool(true) }]
        }
        Kind::VerlParamOffload | Kind::VerlOptimizerOffload => {
            // verl's FSDP workers load an offloaded part back only for the phases that use it
            // (`phases.rs` `offload_between_phases`).
            let strategy = plan.verl.as_ref()?.strategy.value.as_deref().unwrap_or("fsdp");
            let (index, field) = match kind {
                Kind::VerlParamOffload => (0, "verl_param_offload"),
                _ => (1, "verl_optimizer_offload"),
            };
            let phases = p.rl_phases.as_mut()?;
            if !matches!(strategy, "fsdp" | "fsdp2") || phases.offloads[index] {
                return None;
            }
            phases.offloads[index] = true;
            vec![Change { field, value: Literal::Bool(true) }]
        }
        Kind::LayeredSummon => {
            // `collect_lora_params` raises under layered_summon unless the engine loaded the
            // base weights (a dummy load format does not: rule verl-layered-summon-preload).
            let verl = plan.verl.as_ref()?;
            let sync = p.rl_phases.as_mut()?.weight_sync.as_mut()?;
            if sync.value != WeightSync::WholeModel {
                return None;
            }
            *sync = derived(WeightSync::Layered, "gather one module at a time");
            let mut changes = vec![Change { field: "verl_layered_summon", value: Literal::Bool(true) }];
            if verl.load_format.value.as_deref().is_none_or(|f| f.contains("dummy")) {
                changes.push(Change { field: "verl_load_format", value: Literal::Str("safetensors".into()) });
            }
            changes
        }
        Kind::VerlDynamicBatch => {
            // The actor's update packs whole sequences into micro batches of at most the budget
            // (`seqlen_balancing.py` `rearrange_micro_batches`): the tokens of the micro batch the
            // solver fits at this size, at least one whole sequence, under the current micro batch.
            let verl = plan.verl.as_ref()?;
            if verl.dynamic_bsz.value == Some(true) {
                return None;
            }
            let (micro, seq) = (plan.micro_batch_size.as_ref()?.value, plan.max_seq_length.as_ref()?.value);
            let budget = fitting.seq?.saturating_mul(micro) / 256 * 256;
            if budget < seq || budget >= micro.saturating_mul(seq) {
                return None;
            }
            p.micro_batch_size = Some(derived(1, "use_dynamic_bsz: one packed sequence per micro batch"));
            p.max_seq_length = Some(derived(budget, "use_dynamic_bsz: ppo_max_token_len_per_gpu"));
            p.packing = Some(derived(true, "use_dynamic_bsz"));
            vec![
                Change { field: "verl_dynamic_bsz", value: Literal::Bool(true) },
                Change { field: "verl_max_token_len", value: budget.into() },
            ]
        }
        Kind::ExpandableSegments => {
            // vLLM's sleep mode allocates through a memory pool that refuses expandable
            // segments ("Expandable segments are not compatible with memory pool.").
            let sleep = plan.rl.as_ref().and_then(|rl| rl.vllm.as_ref()).is_some_and(|v| v.enable_sleep_mode.value);
            if plan.expandable_segments() || sleep {
                return None;
            }
            let mut setting = plan.effective_allocator().cloned().unwrap_or(crate::plan::AllocatorSetting {
                variable: "PYTORCH_CUDA_ALLOC_CONF".into(),
                value: String::new(),
                key_span: Default::default(),
                value_span: Default::default(),
                verbatim: false,
            });
            setting.value = expandable_value(&setting.value);
            let value = Literal::Str(setting.value.clone());
            p.allocator = vec![setting];
            vec![Change { field: "allocator", value }]
        }
    };
    Some((p, changes))
}

/// The length the sequence lever sets: the solver's longest that fits when it is shorter
/// than `current` (one answer for the lever and the solver), else half of `current` (a
/// lever that helps without fitting, or lowers a plan that fits already); none under 256.
fn shorter_sequence(current: u64, fitting_seq: Option<u64>) -> Option<u64> {
    match fitting_seq {
        Some(fits) if fits > 0 && fits < current => Some(fits),
        _ if current >= 256 => Some(current / 2),
        _ => None,
    }
}

fn quantization(plan: &Plan) -> Option<Quantization> {
    plan.quantization.as_ref().and_then(|q| q.value)
}

/// The allocator setting with `expandable_segments:True` added or switched on.
fn expandable_value(current: &str) -> String {
    let kept: Vec<&str> = current
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty() && !part.to_ascii_lowercase().starts_with("expandable_segments"))
        .collect();
    let mut parts = vec!["expandable_segments:True"];
    parts.extend(kept);
    parts.join(",")
}

/// The lever's title; `gpu` names the allocator's variable as PyTorch on ROCm asks for it.
fn title(kind: Kind, changes: &[Change], gpu: Option<&Gpu>) -> String {
    let first = changes.first().map_or(String::new(), |c| c.value.to_string());
    match kind {
        Kind::HalveMicroBatch if changes.len() > 1 => {
            format!("Halve the micro batch to {first} and double gradient accumulation to {}", changes[1].value)
        }
        Kind::HalveMicroBatch => {
            format!("Halve the micro batch to {first} (accumulation follows from the global batch)")
        }
        Kind::Checkpointing => "Enable gradient checkpointing".into(),
        Kind::EightBitOptimizer => "Use 8-bit AdamW (bitsandbytes)".into(),
        Kind::Qlora => "Load the base model in 4-bit (QLoRA)".into(),
        Kind::ShortenSequence => format!("Shorten the maximum sequence length to {first}"),
        Kind::ChunkedLoss => "Use a fused/chunked cross-entropy (Liger)".into(),
        Kind::LowerVllmFraction => format!("Lower the vLLM memory fraction to {first}"),
        Kind::VllmSleep => "Enable vLLM sleep mode".into(),
        // PyTorch on ROCm reads PYTORCH_HIP_ALLOC_CONF, the name its HIP OOM message gives.
        Kind::ExpandableSegments if gpu.is_some_and(|g| g.vendor == Vendor::Amd) => {
            "Set PYTORCH_HIP_ALLOC_CONF=expandable_segments:True".into()
        }
        Kind::ExpandableSegments => "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into(),
        Kind::VerlParamOffload => {
            "Offload the actor's parameters to CPU between phases (fsdp_config.param_offload)".into()
        }
        Kind::VerlOptimizerOffload => {
            "Offload the actor's optimizer state to CPU outside the update (fsdp_config.optimizer_offload)".into()
        }
        Kind::LayeredSummon => {
            "Hand the LoRA weights to the rollout engine one module at a time (rollout.layered_summon)".into()
        }
        Kind::VerlDynamicBatch => {
            let budget = changes.get(1).map_or(String::new(), |c| c.value.to_string());
            format!("Pack the update's micro batches to {budget} tokens (use_dynamic_bsz, ppo_max_token_len_per_gpu)")
        }
    }
}

fn side_effect(kind: Kind) -> &'static str {
    match kind {
        Kind::HalveMicroBatch => "same effective batch; more optimizer micro-steps, slower per sample",
        Kind::Checkpointing => "recomputes each layer in backward: roughly 20-30 % slower",
        Kind::EightBitOptimizer => "needs bitsandbytes; optimizer state quantized (usually no quality loss)",
        Kind::Qlora => "needs bitsandbytes; 4-bit base weights cost some accuracy and speed",
        Kind::ShortenSequence => "longer samples are truncated",
        Kind::ChunkedLoss => "needs liger-kernel; numerically equivalent",
        Kind::LowerVllmFraction => "smaller KV cache: fewer concurrent generations",
        Kind::VllmSleep => "vLLM weights and cache are offloaded between generations: slower steps",
        Kind::ExpandableSegments => "none in practice; incompatible with vLLM sleep mode",
        Kind::VerlParamOffload => "parameters are copied to and from CPU around each phase: slower steps",
        Kind::VerlOptimizerOffload => "optimizer state is copied to and from CPU around each update: slower updates",
        Kind::LayeredSummon => {
            "one gather per module: a slower hand-over; the engine loads the base weights from the checkpoint (load_format safetensors)"
        }
        Kind::VerlDynamicBatch => {
            "micro batches hold whole sequences up to the budget: the same updates, in fewer, fuller micro batches"
        }
    }
}

fn applicability(kind: Kind) -> Applicability {
    match kind {
        Kind::ExpandableSegments
        | Kind::HalveMicroBatch
        | Kind::VerlParamOffload
        | Kind::VerlOptimizerOffload
        | Kind::LayeredSummon
        | Kind::VerlDynamicBatch => Applicability::Safe,
        _ => Applicability::Unsafe,
    }
}

/// The edits for `changes`: each written value replaced where a file sets it (spelled in
/// that file's language: a launch's config is edited in that config;
/// the allocator setting is text inside the variable's value), each field the file does
/// not set added as a top-level key where the format has one; none when a field can be
/// neither.
fn fixes(kind: Kind, plan: &Plan, changes: &[Change], title: &str) -> Vec<Fix> {
    let mut edits = Vec::new();
    let mut added = String::new();
    for change in changes {
        let span = match change.field {
            "micro_batch_size" => plan.micro_batch_size.as_ref().and_then(|s| s.value_span()),
            "gradient_accumulation" => plan.gradient_accumulation.as_ref().and_then(|s| s.value_span()),
            "gradient_checkpointing" => plan.gradient_checkpointing.as_ref().and_then(|s| s.value_span()),
            // LitGPT's optimizer may be a class_path mapping whose init_args a scalar would drop.
            "optimizer" if plan.framework != Framework::Litgpt => plan.optimizer.as_ref().and_then(|s| s.value_span()),
            "quantization" if plan.framework == Framework::Litgpt => {
                plan.quantization.as_ref().and_then(|s| s.value_span())
            }
            "max_seq_length" => plan.max_seq_length.as_ref().and_then(|s| s.value_span()),
            "vllm_gpu_memory_utilization" => {
                plan.rl.as_ref().and_then(|r| r.vllm.as_ref()).and_then(|v| v.gpu_memory_utilization.value_span())
            }
            "vllm_enable_sleep_mode" => {
                plan.rl.as_ref().and_then(|r| r.vllm.as_ref()).and_then(|v| v.enable_sleep_mode.value_span())
            }
            "allocator" => plan.allocator.iter().find(|a| a.verbatim).map(|a| a.value_span),
            "verl_param_offload" => plan.verl.as_ref().and_then(|v| v.param_offload.value_span()),
            "verl_optimizer_offload" => plan.verl.as_ref().and_then(|v| v.optimizer_offload.value_span()),
            "verl_layered_summon" => plan.verl.as_ref().and_then(|v| v.layered_summon.value_span()),
            "verl_load_format" => plan.verl.as_ref().and_then(|v| v.load_format.value_span()),
            "verl_dynamic_bsz" => plan.verl.as_ref().and_then(|v| v.dynamic_bsz.value_span()),
            "verl_max_token_len" => plan.verl.as_ref().and_then(|v| v.max_token_len.value_span()),
            _ => None,
        };
        match (span, plan.insertion.as_ref().and_then(|i| i.line(change.field, &change.value))) {
            (Some(span), _) if change.field == "allocator" => edits.push(Edit::replace(span, change.value.to_string())),
            (Some(span), _) => match Edit::set(span, &change.value, plan.language_at(span)) {
                Some(edit) => edits.push(edit),
                None => return Vec::new(),
            },
            (None, Some(line)) => added.push_str(&line),
            (None, None) => return Vec::new(),
        }
    }
    if let (Some(insertion), false) = (&plan.insertion, added.is_empty()) {
        let lead = if insertion.needs_newline { "\n" } else { "" };
        edits.push(Edit::insert(insertion.offset, format!("{lead}{added}")));
    }
    if edits.is_empty() {
        return Vec::new();
    }
    vec![Fix { title: title.to_string(), applicability: applicability(kind), edits }]
}

fn core_of(plan: &Plan, arch: &Architecture, gpu: Option<&Gpu>, context: &Context) -> Core {
    phases::evaluate(&super::peak_rank(plan, arch, gpu, context).0)
}

/// Every single change that lowers the device peak, largest saving first; the sequence
/// lever sets the length `solve` found.
pub(super) fn levers(
    plan: &Plan,
    arch: &Architecture,
    gpu: Option<&Gpu>,
    context: &Context,
    base: &Core,
    solve: Option<&Solve>,
) -> Vec<Lever> {
    let fitting = Fitting {
        seq: solve.map(|s| s.max_seq_length),
        vllm_fraction: gpu.and_then(|g| fitting_vllm_fraction(plan, base, g)),
    };
    let mut out: Vec<Lever> = KINDS
        .into_iter()
        .filter_map(|kind| {
            let (changed, changes) = apply(kind, plan, fitting)?;
            let after = core_of(&changed, arch, gpu, context);
            let saves = base.peak.device_bytes.checked_sub(after.peak.device_bytes).filter(|s| *s > 0)?;
            let title = title(kind, &changes, gpu);
            Some(Lever {
                fixes: fixes(kind, plan, &changes, &title),
                title,
                saves_bytes: saves,
                phase: base.peak.phase,
                side_effect: side_effect(kind).to_string(),
                changes,
            })
        })
        .collect();
    out.sort_by_key(|l| std::cmp::Reverse(l.saves_bytes));
    out
}

/// What the solver found for the levers that set a value: the sequence length that fits, and
/// the vLLM fraction that fits (the one `vllm-memory-overcommit` suggests).
#[derive(Clone, Copy)]
struct Fitting {
    seq: Option<u64>,
    vllm_fraction: Option<f64>,
}

/// The largest colocated vLLM fraction at which the run fits `gpu` with the verdict's headroom.
fn fitting_vllm_fraction(plan: &Plan, core: &Core, gpu: &Gpu) -> Option<f64> {
    let vllm = plan.rl.as_ref()?.vllm.as_ref()?;
    if vllm.mode.value != VllmMode::Colocate {
        return None;
    }
    let (fraction, of_free) = (vllm.gpu_memory_utilization.value, vllm.fraction_of_free);
    VllmClaim::of(&core.components, core.peak.device_bytes, gpu.memory_bytes, fraction, of_free)?
        .fitting_fraction(gpu.memory_bytes)
}

/// The verdict's own test: the solver's "fits" is [`judge`]'s `fits`, never `tight`.
fn fits_with_headroom(core: &Core, gpu: &Gpu) -> bool {
    judge(core.peak.device_bytes, gpu.memory_bytes).verdict == Verdict::Fits
}

/// Largest value in `1..=limit` (on a `step` grid) for which `fits` holds, assuming monotonicity.
fn largest_fitting(limit: u64, step: u64, fits: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0u64, limit / step);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid * step) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo * step
}

const MAX_MICRO_BATCH: u64 = 1024;
const SEQ_STEP: u64 = 128;

pub(super) fn solve(plan: &Plan, arch: &Architecture, gpu: &Gpu, context: &Context) -> Solve {
    let fits = |p: &Plan| fits_with_headroom(&core_of(p, arch, Some(gpu), context), gpu);
    let max_micro_batch = largest_fitting(MAX_MICRO_BATCH, 1, |b| {
        let mut p = plan.clone();
        p.micro_batch_size = Some(derived(b, "solver"));
        fits(&p)
    });
    let max_seq_length = largest_fitting(arch.block_size.max(SEQ_STEP), SEQ_STEP, |s| {
        let mut p = plan.clone();
        p.max_seq_length = Some(derived(s, "solver"));
        fits(&p)
    });
    let (smallest_fitting_combination, combination_fits) =
        smallest_combination(plan, arch, gpu, context, max_seq_length);
    Solve { max_micro_batch, max_seq_length, smallest_fitting_combination, combination_fits }
}

/// The fewest levers (then the most headroom) that fit with 10 % headroom.
fn smallest_combination(
    plan: &Plan,
    arch: &Architecture,
    gpu: &Gpu,
    context: &Context,
    fitting_seq: u64,
) -> (Vec<String>, bool) {
    let core = core_of(plan, arch, Some(gpu), context);
    if fits_with_headroom(&core, gpu) {
        return (Vec::new(), true);
    }
    let fitting = Fitting { seq: Some(fitting_seq), vllm_fraction: fitting_vllm_fraction(plan, &core, gpu) };
    let apply = |kind, plan: &Plan| apply(kind, plan, fitting);
    let kinds: Vec<Kind> = KINDS.into_iter().filter(|k| apply(*k, plan).is_some()).collect();
    let mut best: Option<(u32, u64, Vec<String>)> = None;
    for mask in 1u32..(1 << kinds.len()) {
        let size = mask.count_ones();
        if best.as_ref().is_some_and(|(n, _, _)| size > *n) {
            continue;
        }
        let mut p = plan.clone();
        let mut titles = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            if mask & (1 << i) != 0 {
                if let Some((next, changes)) = apply(*kind, &p) {
                    titles.push(title(*kind, &changes, Some(gpu)));
                    p = next;
                }
            }
        }
        let core = core_of(&p, arch, Some(gpu), context);
        if !fits_with_headroom(&core, gpu) {
            continue;
        }
        let headroom = gpu.memory_bytes.saturating_sub(core.peak.device_bytes);
        let better = match &best {
            None => true,
            Some((n, h, _)) => size < *n || (size == *n && headroom > *h),
        };
        if better {
            best = Some((size, headroom, titles));
        }
    }
    match best {
        Some((_, _, titles)) => (titles, true),
        None => (Vec::new(), false),
    }
}
