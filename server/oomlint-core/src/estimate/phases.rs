//! Components assembled into phases; the peak is the largest phase, not the sum of all parts.

use super::context::Implementation;
use super::setup::Setup;
use super::weights::{self, quantized_bytes_per_param};
use super::{activations, fsdp, generation, optimizer, views, zero, Component, Peak, Phase, PhaseTotal, Provenance};
use crate::plan::Sharding;

/// The estimate without verdict or levers (what the lever search re-evaluates).
#[derive(Debug, Clone)]
pub(super) struct Core {
    pub(crate) components: Vec<Component>,
    pub(crate) phases: Vec<PhaseTotal>,
    pub(crate) peak: Peak,
    pub(crate) band: (f64, f64),
}

/// Components that live outside the PyTorch caching allocator.
pub(super) fn outside_allocator(name: &str) -> bool {
    matches!(name, "optimizer-paged" | "cuda-context" | "nccl" | "paged-optimizer-resident" | "allocator-overhead")
}

pub(super) fn evaluate(s: &Setup) -> Core {
    let weights = weights_component(s);
    let weights_bytes = weights.bytes;
    let mut components = vec![weights];
    components.extend(optimizer::components(s));
    components.push(activations::activations_component(s));
    // What the GPU holds when the loss first runs: no gradients or optimizer state yet.
    let resident = components
        .iter()
        .filter(|c| {
            c.live_in.contains(&Phase::Forward) && !matches!(c.name, "gradients" | "optimizer" | "optimizer-paged")
        })
        .fold(0u64, |acc, c| acc.saturating_add(c.bytes));
    // An earlier pipeline stage hands its hidden states on: the logits are the last stage's.
    if s.holds_output_layer() {
        components.push(activations::logits_component(s, resident));
        components.extend(activations::fused_head_tile(s));
        components.extend(activations::retained_logits(s));
    }
    components.extend(activations::retained_4bit_inputs(s));
    components.extend(activations::checkpoint_bypassing_inputs(s));
    components.push(activations::backward_temporaries(s, resident));
    components.extend(dequantization_buffer(s));
    components.extend(autocast_weight_copies(s));
    components.extend(stable_embedding_gradient(s));
    components.extend(sharding_buffers(s));
    components.extend(zero::stage3_buffers(s));
    components.extend(generation::reference_model(s));
    components.extend(generation::reference_forward(s));
    let before_vllm: u64 =
        components.iter().filter(|c| c.name == "weights").map(|c| c.bytes).sum::<u64>() + views::CUDA_CONTEXT_BYTES;
    components.extend(generation::vllm_reservation(s, weights_bytes, before_vllm));
    components.extend(generation::generate_kv_cache(s));
    components.extend(generation::log_prob_forward(s));
    components.extend(generation::weight_sync_gather(s));
    components.retain(|c| c.bytes > 0 || c.name == "weights");
    offload_between_phases(s, &mut components);

    // Generation and the end of backward are evaluated only where a component belongs to them.
    let occasional =
        |p: Phase| matches!(p, Phase::Generation | Phase::LogProbs | Phase::BackwardEnd | Phase::WeightSync);
    let phases: Vec<PhaseTotal> = Phase::ALL
        .into_iter()
        .filter(|p| !occasional(*p) || components.iter().any(|c| c.phase == *p))
        .map(|phase| PhaseTotal {
            phase,
            allocated_bytes: components
                .iter()
                .filter(|c| !outside_allocator(c.name) && c.live_in.contains(&phase))
                .fold(0u64, |acc, c| acc.saturating_add(c.bytes)),
        })
        .collect();
    let top = phases
        .iter()
        .copied()
        .max_by_key(|p| p.allocated_bytes)
        .unwrap_or(PhaseTotal { phase: Phase::Forward, allocated_bytes: 0 });
    let paged: u64 = components.iter().filter(|c| c.name == "optimizer-paged").map(|c| c.bytes).sum();
    components.retain(|c| c.name != "optimizer-paged");
    // vLLM's pool is one block sized up front (`gpu_memory_utilization`): the caching allocator
    // holds no free fragments inside it, so the fragmentation share applies to the rest only.
    let pool: u64 = components
        .iter()
        .filter(|c| c.name == "vllm-reservation" && c.live_in.contains(&top.phase))
        .map(|c| c.bytes)
        .sum();
    let overhead = views::allocator_overhead(s, top.allocated_bytes.saturating_sub(pool), top.phase);
    let reserved = top.allocated_bytes.saturating_add(overhead.bytes);
    components.push(overhead);
    let outside = views::outside_allocator(s, paged);
    let device = outside.iter().fold(reserved, |acc, c| acc.saturating_add(c.bytes));
    components.extend(outside);
    let band = data_band(s, views::band(s), &components, top);
    Core {
        components,
        phases,
        peak: Peak {
            phase: top.phase,
            allocated_bytes: top.allocated_bytes,
            reserved_bytes: reserved,
            device_bytes: device,
        },
        band,
    }
}

/// verl loads an offloaded part back only for the phases that use it: the actor's parameters
/// for its update and its own log-prob pass (`fsdp_workers.py` `compute_log_prob`:
/// `load_fsdp_model_to_gpu`), its gradients and optimizer state for the update (`update_actor`
/// loads both before `update_policy`; `update_policy` ends with `zero_grad()`), the
/// reference's parameters for its log-prob pass. The actor's and the reference's passes run one
/// after the other; both weights are counted in the log-prob phase, an upper bound for it.
fn offload_between_phases(s: &Setup, components: &mut [Component]) {
    let [params, optimizer, reference] = s.phase_offloads;
    let training = [Phase::Forward, Phase::Backward, Phase::BackwardEnd, Phase::OptimizerStep];
    // `rollout_mode` loads the parameters back to hand them to the rollout engine.
    let with_log_probs =
        [Phase::WeightSync, Phase::LogProbs, Phase::Forward, Phase::Backward, Phase::BackwardEnd, Phase::OptimizerStep];
    for c in components.iter_mut() {
        let keep: &[Phase] = match c.name {
            "weights" if params => &with_log_probs,
            "gradients" if params => &training,
            // `update_actor` loads the optimizer state before `update_policy` and offloads it after.
            "optimizer" if optimizer => &training,
            "reference-model" if reference => {
                c.phase = Phase::LogProbs;
                &[Phase::LogProbs]
            }
            _ => continue,
        };
        c.live_in.retain(|p| keep.contains(p));
        c.formula.push_str("; on the CPU outside the phases that use it (verl offload)");
    }
}

/// Components whose bytes grow with the tokens of the batch.
fn scales_with_tokens(name: &str) -> bool {
    matches!(
        name,
        "activations"
            | "backward-temporaries"
            | "logits-loss"
            | "logits-retained"
            | "lm-head-tile"
            | "quantized-linear-inputs"
            | "retained-4bit-inputs"
            | "reference-forward"
            | "kv-cache"
    )
}

/// Where batches are padded to their longest sample, a run whose samples are short peaks
/// lower than the estimate at the maximum length: the band's low end reaches down to the
/// peak phase without its token-sized parts.
fn data_band(s: &Setup, band: (f64, f64), components: &[Component], top: PhaseTotal) -> (f64, f64) {
    if !s.length_from_data || top.allocated_bytes == 0 {
        return band;
    }
    let scaled: u64 = components
        .iter()
        .filter(|c| scales_with_tokens(c.name) && !outside_allocator(c.name) && c.live_in.contains(&top.phase))
        .map(|c| c.bytes)
        .sum();
    let fixed = top.allocated_bytes.saturating_sub(scaled) as f64 / top.allocated_bytes as f64;
    (band.0.min(fixed * (1.0 + band.0) - 1.0), band.1)
}

/// Linear parameters that 4/8-bit quantization replaces: every block linear, and in LitGPT
/// also `lm_head` (Fabric's bitsandbytes plugin converts every `nn.Linear`; transformers
/// keeps `lm_head` in 16 bits).
/// Experts that stay fused 3-D parameters are not `nn.Linear` modules and keep the load dtype
/// ([`Setup::experts`]).
fn quantized_linear_params(s: &Setup) -> u64 {
    let unquantized = if s.experts.quantized { 0 } else { weights::routed_expert_parameters(&s.arch) };
    match s.implementation {
        Implementation::Litgpt => s.counts.block_linear + s.counts.head,
        _ => s.counts.block_linear.saturating_sub(unquantized),
    }
}

/// The base weights: quantized block linears plus 16-bit embedding, head and norms.
fn weights_component(s: &Setup) -> Component {
    let c = &s.counts;
    let b = s.param_bytes as f64;
    let (bytes, formula, provenance) = match s.quantization {
        Some(q) => {
            let (per, why) = quantized_bytes_per_param(q);
            let linear = quantized_linear_params(s);
            let kept = c.total - linear;
            (
                linear as f64 * per + kept as f64 * s.compute_bytes as f64,
                format!(
                    "{linear} quantized linear params × {why} + {kept} embedding/norm/unquantized params × {} B",
                    s.compute_bytes
                ),
                Provenance::Exact,
            )
        }
        None => (c.total as f64 * b, format!("{} params × {} B", c.total, s.param_bytes), Provenance::Exact),
    };
    let formula = match s.tensor_parallel {
        1 => formula,
        tp => format!("{formula}, one of {tp} tensor-parallel ranks' slice"),
    };
    if zero::params_offloaded(s) {
        let kept = zero::persistent(s);
        return Component {
            name: "weights",
            bytes: kept * s.param_bytes,
            phase: Phase::Forward,
            live_in: Phase::ALL.to_vec(),
            formula: format!(
                "{kept} params under stage3_param_persistence_threshold × {} B; the partitions of the other {} are \
                 offloaded (offload_param)",
                s.param_bytes,
                c.total - kept
            ),
            provenance: Provenance::Derived,
        };
    }
    Component {
        name: "weights",
        bytes: (bytes / s.shard_params as f64) as u64,
        phase: Phase::Forward,
        live_in: Phase::ALL.to_vec(),
        formula: if s.shard_params > 1 { format!("({formula}) / {} ranks", s.shard_params) } else { formula },
        provenance,
    }
}

/// bitsandbytes dequantizes one weight matrix at a time into the dtype it was quantized from.
/// Fabric's `BitsandbytesPrecision` (LitGPT) quantizes from fp16 (`quantize`: `.to(dtype=torch.half)`),
/// so with another compute dtype `MatMul4Bit` casts the fp16 matrix to a second copy.
fn dequantization_buffer(s: &Setup) -> Option<Component> {
    s.quantization?;
    let litgpt = s.implementation == Implementation::Litgpt;
    let largest = if litgpt { s.counts.largest_linear.max(s.counts.head) } else { s.counts.largest_linear };
    let cast = litgpt && !s.compute_fp16;
    let per_param = if cast { 2 + s.compute_bytes } else { s.compute_bytes };
    Some(Component {
        name: "dequantization-buffer",
        bytes: largest * per_param,
        phase: Phase::Backward,
        live_in: vec![Phase::Forward, Phase::Backward],
        formula: format!(
            "largest quantized matrix ({largest} params{}) × {per_param} B{}",
            if litgpt { ", lm_head included" } else { "" },
            if cast { " (dequantized fp16 and its cast to the compute dtype)" } else { "" }
        ),
        provenance: Provenance::Derived,
    })
}

/// LitGPT (0.5.0 on) swaps the embedding for bitsandbytes' `StableEmbedding` after building the
/// optimizer: the new weight requires grad but is in no parameter group, so its gradient is
/// never cleared.
fn stable_embedding_gradient(s: &Setup) -> Option<Component> {
    if s.implementation != Implementation::Litgpt || s.quantization.is_none() || !s.behaviour.stable_embedding {
        return None;
    }
    Some(Component {
        name: "embedding-gradient",
        bytes: s.counts.embedding * s.compute_bytes,
        phase: Phase::Backward,
        live_in: Phase::STEP.to_vec(),
        formula: format!(
            "{} embedding params × {} B: StableEmbedding's gradient, outside the optimizer",
            s.counts.embedding, s.compute_bytes
        ),
        provenance: Provenance::Derived,
    })
}

/// Under autocast with 32-bit parameters every linear runs on a 16-bit copy of its weight,
/// which the matmul keeps for the input gradient (frozen) or the autocast cache keeps (trainable).
fn autocast_weight_copies(s: &Setup) -> Option<Component> {
    if s.params_cast_per_unit || !s.mixed || s.param_bytes <= s.compute_bytes || s.quantization.is_some() {
        return None;
    }
    let linear = s.counts.block_linear + s.counts.head;
    Some(Component {
        name: "autocast-weight-copies",
        bytes: linear * s.compute_bytes / s.shard_params,
        phase: Phase::Forward,
        live_in: vec![Phase::Forward, Phase::Backward],
        formula: format!("{linear} linear params × {} B cast copies kept until backward", s.compute_bytes),
        provenance: Provenance::Derived,
    })
}

/// Gathered parameters and communication buckets of sharded training (over the data-parallel
/// ranks: a tensor-parallel group alone shards nothing).
fn sharding_buffers(s: &Setup) -> Vec<Component> {
    if s.shard_group <= 1 {
        return Vec::new();
    }
    let a = &s.arch;
    let h = a.n_embd;
    let total = s.counts.total;
    let param_bytes = s.param_bytes;
    match (s.implementation, s.sharding) {
        (Implementation::Litgpt, _) => fsdp::litgpt_rank_buffers(s),
        (_, Sharding::Zero { stage: 3.., .. }) => Vec::new(),
        (_, Sharding::Fsdp { full_shard: true, .. }) => {
            let block = (total - s.counts.embedding - s.counts.head) / a.n_layer.max(1);
            // Gathered in the compute dtype where FSDP's mixed precision casts the shards.
            let (bytes, cast) = if s.params_cast_per_unit {
                (s.compute_bytes, " (FSDP MixedPrecision param_dtype)")
            } else {
                (param_bytes, "")
            };
            let gathered = 2 * block * bytes + (s.counts.embedding + s.counts.head) * bytes;
            let mut live_in = vec![Phase::Forward, Phase::Backward];
            if s.log_prob_pass.is_some() {
                live_in.push(Phase::LogProbs);
            }
            let mut out = vec![Component {
                name: "gathered-parameters",
                bytes: gathered,
                phase: Phase::Forward,
                live_in,
                formula: format!("two gathered blocks ({block} params each) + embedding and head, × {bytes} B{cast}"),
                provenance: Provenance::Derived,
            }];
            out.extend(fsdp::hf_backward_end(s, bytes));
            out
        }
        (_, Sharding::Zero { .. }) => vec![Component {
            name: "communication-buckets",
            bytes: 2 * h * h * 2,
            phase: Phase::Backward,
            live_in: vec![Phase::Backward, Phase::OptimizerStep],
            formula: "reduce + all-gather buckets of h² elements each (HF \"auto\"), 2 B".into(),
            provenance: Provenance::Heuristic,
        }],
        _ => Vec::new(),
    }
}
