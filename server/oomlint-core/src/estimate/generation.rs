//! RL extras: the frozen reference model and its forward, the vLLM reservation and Hugging
//! Face `generate`'s KV cache.

use super::activations::vocab;
use super::setup::Setup;
use super::weights::{self, quantized_bytes_per_param};
use super::{Component, Phase, Provenance};
use crate::plan::{Origin, RlAlgorithm, Sourced, VllmMode, WeightSync};

/// A frozen copy of the base model for KL or DPO/KTO reference log-probabilities, loaded with the
/// policy's `model_init_kwargs` (its load dtype and quantization; TRL `dpo_trainer.py`
/// `DPOTrainer.__init__` "Reference model": `create_model_from_path(ref_model_path, **ref_model_init_kwargs)`).
pub(super) fn reference_model(s: &Setup) -> Option<Component> {
    if !s.reference_model || s.is_peft() {
        return None;
    }
    let c = &s.counts;
    let bytes = match s.quantization {
        Some(q) => {
            c.block_linear as f64 * quantized_bytes_per_param(q).0
                + ((c.total - c.block_linear) * s.compute_bytes) as f64
        }
        None => (c.total * s.param_bytes) as f64,
    };
    Some(Component {
        name: "reference-model",
        bytes: (bytes / s.shard_params as f64) as u64,
        phase: Phase::Forward,
        live_in: Phase::ALL.to_vec(),
        formula: format!("frozen copy of {} params in the load dtype", c.total),
        provenance: Provenance::Exact,
    })
}

/// The reference forward of DPO and KTO (TRL `dpo_trainer.py` `DPOTrainer._compute_loss`,
/// `kto_trainer.py` `KTOTrainer._compute_loss`): under `torch.no_grad()`, *after* the policy's
/// forward, through the reference copy or the policy with its adapters disabled
/// (`use_adapter`). Nothing is saved for backward, but its logits for the whole batch (`ref_outputs`
/// is referenced until the loss returns) sit on top of the policy's saved activations and logits;
/// `selective_log_softmax` then loops over sequences, adding one sequence's log-softmax. They
/// are freed before backward. With TRL's fused LM head (1.15 on) no vocabulary-sized logits
/// exist: the measured DPO runs of `tests/gpu` (TRL 1.16, H200: `dpo-*-lora-*` rows) peak in
/// backward within 2–6 % of the estimate without a reference term, so none is added.
pub(super) fn reference_forward(s: &Setup) -> Option<Component> {
    if !s.reference_forward || s.fused_head {
        return None;
    }
    let v = vocab(s);
    let beta = s.compute_bytes;
    let logits = s.tokens().saturating_mul(v * beta);
    let row = s.seq_len.saturating_mul(v * beta);
    Some(Component {
        name: "reference-forward",
        bytes: logits.saturating_add(row),
        phase: Phase::Forward,
        live_in: vec![Phase::Forward],
        formula: format!(
            "reference logits T × β·V = {} × {beta} × {v} + one sequence's log-softmax {} × β·V, freed before backward",
            s.tokens(),
            s.seq_len
        ),
        provenance: Provenance::Derived,
    })
}

/// vLLM colocated in the training process: a slab of `util × total` (vLLM's worker:
/// `requested_memory = total_memory × gpu_memory_utilization`, `v1/worker/gpu_worker.py`; the
/// weights, the profiled activations, CUDA graphs and the KV cache share it, and the KV cache is a
/// torch allocation, so the slab shows in `max_memory_reserved`). TRL's colocate mode passes its
/// `vllm_gpu_memory_utilization` straight to `LLM(...)`. Unsloth
/// (`fraction_of_free`, `fast_inference=True`) budgets `util × free` at load time, before
/// any weights are on the GPU, and vLLM holds the base weights the trainer then shares
/// (`unsloth-zoo` `vllm_utils.py` `load_vllm`, `convert_vllm_to_huggingface`): the slab
/// beyond the shared weights (`shared`, the weights component's bytes) is what vLLM adds.
/// Unsloth passes vLLM `util × free / total` (`approximate_vllm_memory_usage`'s
/// `actual_gpu_memory_utilization`), so vLLM's `total × fraction` is again `util × free`.
pub(super) fn vllm_reservation(s: &Setup, shared: u64, used_before_load: u64) -> Option<Component> {
    let rl = s.rl.as_ref()?;
    let vllm = rl.vllm.as_ref()?;
    if vllm.mode.value != VllmMode::Colocate {
        return None;
    }
    let total = s.gpu_capacity?;
    let util = vllm.gpu_memory_utilization.value.clamp(0.0, 1.0);
    let (bytes, formula) = if vllm.fraction_of_free {
        // The base weights are not on the GPU yet when Unsloth measures free memory: vLLM loads them.
        let free = total.saturating_sub(used_before_load.saturating_sub(shared));
        let budget = (util * free as f64) as u64;
        (
            budget.saturating_sub(shared),
            format!(
                "{util} × free memory at load ({}), less the base weights shared with training ({})",
                super::format_bytes(free),
                super::format_bytes(shared)
            ),
        )
    } else {
        ((util * total as f64) as u64, format!("{util} × total memory ({})", super::format_bytes(total)))
    };
    let sleep = vllm.enable_sleep_mode.value;
    Some(Component {
        name: "vllm-reservation",
        bytes,
        phase: Phase::Generation,
        live_in: if sleep { vec![Phase::Generation] } else { Phase::ALL.to_vec() },
        formula: if sleep { format!("{formula}; released outside generation (sleep mode)") } else { formula },
        provenance: Provenance::Derived,
    })
}

/// One micro batch of the no-grad log-prob passes (verl `dp_actor.py` `compute_log_prob` under
/// `torch.no_grad()`): nothing is saved for backward; the head's 16-bit logits of every token
/// (`logits_rmpad`, divided by the temperature in place) with one fp32 log-sum-exp and log-prob
/// each, and one layer's outputs at a time (hidden states 2β·h, MLP 3β·I). The actor's pass also
/// takes the entropy (`calculate_entropy = not is_lora`); eager `entropy_from_logits` holds its
/// softmax and the product `pd * logits` at once (two more `[T, V]`).
pub(super) fn log_prob_forward(s: &Setup) -> Option<Component> {
    let (tokens, eager_entropy) = s.log_prob_pass?;
    // An earlier pipeline stage computes no logits.
    let v = if s.holds_output_layer() { vocab(s) } else { 0 };
    let beta = s.compute_bytes;
    let a = &s.arch;
    let mlp = a.expert_intermediate_size().max(a.intermediate_size) * a.n_expert_per_token.max(1);
    let layer = 2 * beta * a.n_embd + 3 * beta * mlp;
    let copies = 1 + if eager_entropy { 2 } else { 0 };
    let per_token = copies * beta * v + 8 + layer;
    Some(Component {
        name: "log-prob-forward",
        bytes: tokens.saturating_mul(per_token),
        phase: Phase::LogProbs,
        live_in: vec![Phase::LogProbs],
        formula: format!(
            "{tokens} tokens × ({copies} × β·V {} {} + fp32 log-sum-exp and log-prob 8 + one layer's outputs {layer}), no grad",
            beta * v,
            if eager_entropy { "(logits, eager entropy's softmax and product)" } else { "(logits)" },
        ),
        provenance: Provenance::Derived,
    })
}

/// What verl's `rollout_mode` (`fsdp_workers.py`) gathers whole on each GPU to hand the actor's
/// weights to the colocated rollout engine, in the actor's parameter dtype (verl loads the actor
/// in fp32): every parameter at once (LoRA under FSDP1 without `layered_summon`:
/// `FSDP.summon_full_params` over the root in `fsdp_utils.py` `collect_lora_params`), the largest
/// top-level module (with `layered_summon`: a decoder layer, the embedding or the head), or the
/// largest single tensor (`.full_tensor()` per parameter as the engine loads it). The engine is
/// asleep while the actor gathers (its weights are woken after), the gradients are freed, and
/// offloaded parameters are loaded back for it.
pub(super) fn weight_sync_gather(s: &Setup) -> Option<Component> {
    let sync = s.weight_sync.as_ref()?;
    let c = &s.counts;
    let b = s.param_bytes;
    let layer = (c.block_linear + c.small).div_ceil(s.arch.n_layer.max(1));
    let (params, what) = match sync.value {
        WeightSync::WholeModel => (
            c.total,
            format!("every parameter unsharded at once ({}: FSDP.summon_full_params over the model)", describe(sync)),
        ),
        WeightSync::Layered => (
            layer.max(c.embedding).max(c.head),
            format!("the largest top-level module unsharded ({}: one at a time)", describe(sync)),
        ),
        WeightSync::PerTensor => (
            c.largest_linear.max(c.embedding).max(c.head),
            format!("the largest tensor gathered whole ({})", describe(sync)),
        ),
    };
    Some(Component {
        name: "weight-sync-gather",
        bytes: params.saturating_mul(b),
        phase: Phase::WeightSync,
        live_in: vec![Phase::WeightSync],
        formula: format!("{params} params × {b} B: {what}, handing the actor's weights to the rollout engine"),
        provenance: Provenance::Derived,
    })
}

/// Where a weight-sync setting comes from, for a formula.
fn describe(sync: &Sourced<WeightSync>) -> String {
    match &sync.origin {
        Origin::Derived { from } => from.clone(),
        Origin::Default { of } => format!("{of} by default"),
        _ => "rollout.layered_summon: false".into(),
    }
}

/// Hugging Face `generate` without vLLM: the KV cache of one generation batch.
pub(super) fn generate_kv_cache(s: &Setup) -> Option<Component> {
    let rl = s.rl.as_ref()?;
    if rl.vllm.is_some() || s.algorithm != Some(RlAlgorithm::Grpo) {
        return None;
    }
    let a = &s.arch;
    let attention_layers = a.attention_layer_count();
    let prompt = rl.prompt_length.value;
    let length = prompt + rl.max_completion_length.value;
    let batch = s.micro_batch;
    let per_token = 2 * attention_layers * weights::kv_width(a) * s.compute_bytes;
    Some(Component {
        name: "kv-cache",
        bytes: batch.saturating_mul(length).saturating_mul(per_token),
        phase: Phase::Generation,
        live_in: vec![Phase::Generation],
        formula: format!(
            "{batch} sequences × {length} tokens × 2 (K, V) × {attention_layers} layers × kv {} × {} B",
            weights::kv_width(a),
            s.compute_bytes
        ),
        provenance: Provenance::Derived,
    })
}
