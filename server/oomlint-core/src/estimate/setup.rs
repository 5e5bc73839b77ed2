//! The plan resolved into the numbers the memory model needs, with each assumption recorded.

use super::buckets::Buckets;
use super::context::{Behaviour, Context, Implementation, TrlLoss};
use super::megatron::{self, Stage};
use super::tensor_parallel;
use super::weights::{self, ParamCounts};
use crate::catalog::{Architecture, Gpu, HfProjections, MlpKind};
use crate::format::facts::{self, Framework::*};
use crate::plan::{
    Attention, Checkpointing, Dtype, Framework, LoraTargets, LossImpl, Method, Optimizer, Plan, Precision,
    Quantization, RlAlgorithm, RlPlan, Sharding, Sourced, TpLayout, WeightSync,
};
use crate::versions::Version;

/// Everything the model needs, resolved from the plan with defaults.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub(crate) implementation: Implementation,
    pub(crate) arch: Architecture,
    pub(crate) counts: ParamCounts,
    pub(crate) method: Method,
    pub(crate) quantization: Option<Quantization>,
    /// Storage bytes of the (unquantized) parameters.
    pub(crate) param_bytes: u64,
    /// Bytes of activations and logits (the compute dtype).
    pub(crate) compute_bytes: u64,
    /// Whether the 16-bit compute dtype is fp16 (else bf16, or 32-bit).
    pub(crate) compute_fp16: bool,
    /// Bytes of the layers' activations: the compute dtype, or 4 where Unsloth forces float32
    /// ([`unsloth_forces_float32`]).
    pub(crate) activation_bytes: u64,
    /// Storage bytes of the trainable parameters (PEFT keeps adapters in fp32).
    pub(crate) trainable_bytes: u64,
    /// Whether fp32 master weights are kept next to 16-bit compute copies (mixed precision).
    pub(crate) mixed: bool,
    /// Whether the forward runs under `torch.autocast`: Trainer's `bf16`/`fp16` always turn it
    /// on (transformers `training_args.py` → accelerate `mixed_precision`), even for 16-bit weights.
    pub(crate) autocast: bool,
    pub(crate) micro_batch: u64,
    pub(crate) seq_len: u64,
    pub(crate) grad_accumulation: u64,
    pub(crate) world: u64,
    pub(crate) checkpointing: Checkpointing,
    pub(crate) attention: Attention,
    pub(crate) optimizer: Optimizer,
    pub(crate) loss: LossImpl,
    /// TRL's fused LM head: only label tokens are projected, in tiles (TRL ≥ 1.15).
    pub(crate) fused_head: bool,
    pub(crate) sharding: Sharding,
    /// Ranks the parameters, gradients and optimizer state are divided by.
    pub(crate) shard_params: u64,
    pub(crate) shard_grads: u64,
    pub(crate) shard_optimizer: u64,
    /// DeepSpeed ZeRO's buffer sizes (read only under ZeRO).
    pub(crate) buckets: Buckets,
    pub(crate) lora_rank: u64,
    pub(crate) lora_dropout: bool,
    pub(crate) lora_targets: LoraTargets,
    pub(crate) trainable: u64,
    pub(crate) rl: Option<RlPlan>,
    pub(crate) algorithm: Option<RlAlgorithm>,
    pub(crate) reference_model: bool,
    /// A no-grad reference forward over the batch each step (DPO, KTO without precomputed log-probs).
    pub(crate) reference_forward: bool,
    /// Rows of the output head: the vocabulary, or 1 for a reward model's score head.
    pub(crate) head_rows: u64,
    pub(crate) expandable_segments: bool,
    pub(crate) gpu_capacity: Option<u64>,
    /// The tokens of a micro batch depend on the data: batches padded to their longest sample
    /// (TRL's and Unsloth's collators without packing), or holding only their real tokens (verl's
    /// `use_remove_padding`, `use_dynamic_bsz`). The peak at `seq_len` is reached only by a batch
    /// whose samples are that long.
    pub(crate) length_from_data: bool,
    /// What the framework releases and the batch order keep alive.
    pub(crate) behaviour: Behaviour,
    pub(crate) missing: Vec<String>,
    /// Whether one GPU is assumed where more would shard (the world size is set at launch).
    pub(crate) one_gpu_assumed: bool,
    /// verl's manual offloads between phases (`verl/workers/fsdp_workers.py`
    /// `offload_fsdp_model_to_cpu`, `offload_fsdp_optimizer`): the actor's parameters, its
    /// optimizer state, the reference's parameters, each on the CPU outside the phases that use it.
    pub(crate) phase_offloads: [bool; 3],
    /// What handing the actor's weights to the colocated rollout engine gathers whole.
    pub(crate) weight_sync: Option<Sourced<WeightSync>>,
    /// A no-grad log-prob pass between generation and the update (verl's old log-probs and
    /// reference): (tokens of one micro batch, whether it also takes the entropy eagerly).
    pub(crate) log_prob_pass: Option<(u64, bool)>,
    /// FSDP's mixed precision casts each unit's parameters to the compute dtype when it gathers
    /// them (verl: `MixedPrecision(param_dtype=bf16)` over fp32 shards, `fsdp_workers.py`
    /// `_build_model_optimizer`; accelerate's FSDP over the fp32 shards it upcast): the layers
    /// run on the gathered 16-bit copy, so autocast makes no weight copies and the gathered
    /// units are 16-bit.
    pub(crate) params_cast_per_unit: bool,
    /// Ranks each sequence is split over; `seq_len` is one rank's share.
    pub(crate) sequence_parallel: u64,
    /// Ranks of one tensor-parallel group (1: none); `arch` and `counts` are one rank's share
    /// of the model (`tensor_parallel.rs`).
    pub(crate) tensor_parallel: u64,
    pub(crate) tp_layout: Option<TpLayout>,
    /// Data-parallel ranks, `world / tensor_parallel`.
    pub(crate) data_parallel: u64,
    /// Ranks FSDP and ZeRO shard over: every data-parallel rank, or the shard group the file
    /// sizes (hybrid sharding replicates it over the others).
    pub(crate) shard_group: u64,
    /// Megatron's pipeline stages (1: none); `counts` are `stage`'s and `arch` the layers whose
    /// activations it holds at once (`megatron.rs`).
    pub(crate) pipeline_parallel: u64,
    /// The pipeline stage described when there are several.
    pub(crate) stage: Stage,
    /// Megatron's expert-parallel ranks (1: none); `counts` hold `1/expert_parallel` of the
    /// routed experts.
    pub(crate) expert_parallel: u64,
    /// Megatron's routed-expert parameters among one rank's trainable ones, and the
    /// expert-data-parallel ranks its distributed optimizer shards their state over.
    pub(crate) expert_trainable: u64,
    pub(crate) expert_data_parallel: u64,
    /// Parameters and trainable parameters of the whole model (what the estimate reports;
    /// `counts` and `trainable` are one tensor-parallel rank's).
    pub(crate) model_parameters: u64,
    pub(crate) model_trainable: u64,
    /// How the run treats a mixture of experts' routed experts (both true for dense models).
    pub(crate) experts: ExpertHandling,
}

/// Whether a 4/8-bit load quantizes the routed experts and whether LoRA adapts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExpertHandling {
    pub(crate) quantized: bool,
    pub(crate) adapted: bool,
}

impl Setup {
    /// The tensor-parallel ranks Megatron's sequence parallelism splits the hidden states
    /// between the tensor-parallel regions over (1 without it).
    pub(crate) fn sequence_parallel_split(&self) -> u64 {
        match self.tp_layout {
            Some(TpLayout::Megatron { sequence_parallel: true }) => self.tensor_parallel.max(1),
            _ => 1,
        }
    }

    /// Whether this rank computes the logits: every rank but those of a pipeline's earlier
    /// stages.
    pub(crate) fn holds_output_layer(&self) -> bool {
        self.pipeline_parallel <= 1 || self.stage == Stage::Last
    }

    pub(crate) fn tokens(&self) -> u64 {
        self.micro_batch * self.seq_len
    }

    pub(crate) fn is_peft(&self) -> bool {
        matches!(self.method, Method::Lora | Method::Qlora | Method::Adapter | Method::AdapterV2)
    }

    /// The setup of a rank of the first pipeline stage (of any rank without pipeline
    /// parallelism).
    pub(crate) fn resolve(plan: &Plan, arch: &Architecture, gpu: Option<&Gpu>, context: &Context) -> Self {
        Self::resolve_stage(plan, arch, gpu, context, Stage::First)
    }

    /// The setup of a rank of pipeline stage `stage`.
    pub(crate) fn resolve_stage(
        plan: &Plan,
        arch: &Architecture,
        gpu: Option<&Gpu>,
        context: &Context,
        stage: Stage,
    ) -> Self {
        let implementation = Implementation::of(plan.framework);
        let mut missing = Vec::new();
        let quantization = plan.quantization.as_ref().and_then(|q| q.value);
        let method = match &plan.method {
            Some(m) => m.value,
            None if quantization.is_some() => Method::Qlora,
            None if plan.lora.is_some() => Method::Lora,
            None => {
                missing.push("training method not set; assumed full fine-tuning".to_string());
                Method::Full
            }
        };
        let quantization = match (method, quantization) {
            (Method::Qlora, None) => Some(Quantization::Nf4 { double_quant: true }),
            (_, q) => q,
        };
        let (param_bytes, compute_bytes, mixed) = precision_bytes(plan, implementation, gpu, &mut missing);
        let autocast = match plan.precision.as_ref().map(|p| p.value) {
            Some(Precision::Mixed(_)) => true,
            Some(Precision::True(_)) => false,
            None => mixed,
        };
        let compute_fp16 = match plan.precision.as_ref().map(|p| p.value) {
            Some(Precision::True(d) | Precision::Mixed(d)) => d == Dtype::F16,
            None => gpu.is_some_and(|g| !g.bf16),
        };
        let trainable_bytes = match (implementation, method) {
            // TRL casts every trainable parameter of a 4/8-bit model to bf16 and does not call peft's
            // `prepare_model_for_kbit_training` (`sft_trainer.py:908-911`, `dpo_trainer.py:729`,
            // `grpo_trainer.py:541`).
            (Implementation::Hf, Method::Lora | Method::Qlora)
                if plan.framework == Framework::Trl && quantization.is_some() =>
            {
                2
            }
            // PEFT upcasts adapters to fp32 (`autocast_adapter_dtype`); Unsloth keeps them in fp32 too.
            (Implementation::Hf | Implementation::Unsloth, Method::Lora | Method::Qlora) => 4,
            _ => param_bytes,
        };
        // Unsloth's full fine-tuning of a float16 model (a GPU without bf16, or `dtype=float16`)
        // casts every trainable parameter to float32 ("Float16 full finetuning uses more memory
        // since we upcast weights to float32": `unsloth_zoo/training_utils.py`
        // `prepare_model_for_training`, mixed_precision_dtype float32); a bfloat16 model stays in
        // bfloat16 (`float32_mixed_precision` defaults to False there).
        let (param_bytes, trainable_bytes) = if implementation == Implementation::Unsloth
            && method == Method::Full
            && unsloth_loads_float16(plan, gpu)
        {
            (4, 4)
        } else {
            (param_bytes, trainable_bytes)
        };
        // Every plan builder sets it (from the file or the framework's default).
        let micro_batch = match &plan.micro_batch_size {
            Some(m) => m.value,
            None => {
                missing.push("micro batch size not in the plan; assumed 1".to_string());
                1
            }
        };
        // Unsloth stretches the context to `max_seq_length` with linear RoPE scaling when it
        // is longer than the model's (`unsloth/models/llama.py` `from_pretrained`: `factor =
        // max_seq_length / model_max_seq_length`), so its batches are not capped at the context.
        let longest = if implementation == Implementation::Unsloth { u64::MAX } else { arch.block_size.max(1) };
        let seq_len = match &plan.max_seq_length {
            Some(s) => s.value.min(longest).max(1),
            None => {
                let assumed = default_seq_len(plan, arch);
                missing.push(format!("sequence length not set; assumed {assumed} tokens"));
                assumed
            }
        };
        // Batches padded to their longest sample (TRL's and Unsloth's collators without packing)
        // or holding only their real tokens reach the maximum only with a sample that long; a
        // stated longest sample (`sample-tokens`) sizes them instead.
        let padded_to_longest = matches!(plan.framework, Framework::Unsloth | Framework::Trl)
            && plan.rl.is_none()
            && plan.packing.as_ref().is_none_or(|p| !p.value);
        let data_lengths = padded_to_longest || unpadded(plan).is_some();
        let stated = context.sample_tokens.as_ref().filter(|_| data_lengths);
        let seq_len = stated.map_or(seq_len, |(n, _)| seq_len.min((*n).max(1)));
        // Sequence (Ulysses) or context parallelism: each rank holds its share of every sequence.
        let sequence_parallel = plan.sequence_parallel.as_ref().map_or(1, |n| n.value.clamp(1, seq_len));
        let seq_len = seq_len.div_ceil(sequence_parallel);
        let grad_accumulation = plan.gradient_accumulation.as_ref().map_or(1, |g| g.value.max(1));
        let world = plan.world_size();
        // Tensor parallelism needs a whole group: the world is at least its size. FSDP and ZeRO
        // shard over the data-parallel ranks only, the world over the tensor-parallel size:
        // accelerate's FSDP mesh is `dp_shard_cp` (`parallelism_config.py`
        // `ParallelismConfig.fsdp_dim_names`: the data-parallel shard ranks with the context-
        // parallel ones, never the `tp` dimension), Axolotl fills `dp_shard_size` with
        // `world // tp // cp` and FSDP shards over `dp_shard × cp` (`utils/distributed.py`
        // `_get_parallel_config_kwargs`), Megatron's distributed optimizer over the data-parallel
        // group with context parallelism (`parallel_state.get_data_parallel_group(
        // with_context_parallel=True)`). Sequence- and context-parallel ranks shard too.
        let tp = tensor_parallel::size(plan, world);
        let tensor_parallel = tp.map_or(1, |(n, _)| n);
        let size = |s: &Option<Sourced<u64>>| s.as_ref().map_or(1, |n| n.value.max(1));
        let (pipeline_parallel, expert_parallel) = (size(&plan.pipeline_parallel), size(&plan.expert_parallel));
        let world = world.max(tensor_parallel * pipeline_parallel);
        let data_parallel = (world / (tensor_parallel * pipeline_parallel)).max(1);
        let shard_group = plan.shard_group.as_ref().map_or(data_parallel, |g| g.value.clamp(1, data_parallel));
        let sharding = plan.sharding.as_ref().map_or(Sharding::None, |s| s.value);
        let checkpointing = match &plan.gradient_checkpointing {
            Some(c) => c.value,
            // LitGPT wraps every block in activation checkpointing whenever it uses FSDP.
            None if implementation == Implementation::Litgpt && world > 1 => Checkpointing::Full,
            None => Checkpointing::None,
        };
        // Every plan builder sets attention, optimizer and loss (from the file or its
        // framework's facts); a plan without them gets the plainest choice, and says so.
        let attention = match &plan.attention {
            Some(a) => a.value,
            None => {
                missing.push("attention implementation not in the plan; assumed sdpa".to_string());
                Attention::Sdpa
            }
        };
        let optimizer = match &plan.optimizer {
            Some(o) => o.value.clone(),
            None => {
                missing.push("optimizer not in the plan; assumed AdamW (two fp32 moments)".to_string());
                Optimizer::AdamW
            }
        };
        // LitGPT swaps the optimizer for bitsandbytes PagedAdamW whenever it quantizes.
        let optimizer = if implementation == Implementation::Litgpt && quantization.is_some() {
            Optimizer::PagedAdamW
        } else {
            optimizer
        };
        let loss = match &plan.loss {
            Some(l) => l.value,
            None => {
                missing.push("loss implementation not in the plan; assumed fp32 logits of the whole batch".to_string());
                LossImpl::Full
            }
        };
        let behaviour = context.behaviour(plan.framework);
        let (loss, fused_head) = trl_loss(plan.framework, loss, behaviour.trl_loss);
        let (shard_params, shard_grads, shard_optimizer) = shard_factors(sharding, shard_group, implementation);
        // The launch sets the world size unless the file states it; sharding divides by it,
        // so one GPU (the most memory per GPU) is an assumption the estimate states.
        // LitGPT refuses to quantize on more than one device, so a quantized run has one.
        let single = implementation == Implementation::Litgpt && quantization.is_some();
        let mut one_gpu_assumed = false;
        if plan.stated_world_size().is_none() && !single {
            let sharded = match shard_factors(sharding, 2, implementation) {
                (1, 1, 1) => None,
                (1, 1, _) => Some("optimizer state"),
                (1, _, _) => Some("gradients and optimizer state"),
                _ => Some("parameters, gradients and optimizer state"),
            };
            // `tp_plan="auto"` without `tp_size` splits the block linears over every process.
            let sharded = sharded.or_else(|| tensor_parallel::spans_the_world(plan).then_some("block linears"));
            match (sharded, tensor_parallel) {
                (Some(sharded), n) => {
                    one_gpu_assumed = true;
                    let assumed = match n {
                        1 => "one GPU".to_string(),
                        n => format!("{n} GPUs (one tensor-parallel group)"),
                    };
                    missing.push(format!(
                        "world size not in the file (set at launch); assumed {assumed}, which shards nothing (more GPUs divide the {sharded})"
                    ));
                }
                (None, 1) => {}
                (None, n) => missing.push(format!(
                    "world size not in the file (set at launch); assumed {n} GPUs (one tensor-parallel group)"
                )),
            }
        }
        let (lora_rank, lora_dropout, lora_targets) = match &plan.lora {
            Some(l) => (l.rank.value, l.dropout.value > 0.0, l.targets.value.clone()),
            None if matches!(method, Method::Lora | Method::Qlora) => {
                missing.push("adapter shape not in the plan; its parameters are not counted".to_string());
                (1, false, LoraTargets::default())
            }
            // Full fine-tuning trains no adapter.
            None => (1, false, LoraTargets::default()),
        };
        let arch = &bounded(arch);
        let algorithm = plan.algorithm.as_ref().map(|a| a.value);
        let reward = algorithm == Some(RlAlgorithm::Reward);
        let (counts, head_rows) = weights::counts_and_head_rows(arch, implementation, reward);
        // The fused LM head is attached by SFT, DPO and GRPO (`TrlLoss::FusedHead`); ORPO, CPO
        // and KTO read `outputs.logits`, and a reward model's score head has no vocabulary.
        let fused_head = fused_head
            && !matches!(
                algorithm,
                Some(RlAlgorithm::Orpo | RlAlgorithm::Cpo | RlAlgorithm::Kto | RlAlgorithm::Reward)
            );
        let expandable_segments = plan.expandable_segments();
        let reference_model = plan.reference_model.as_ref().is_some_and(|r| r.value);
        let reference_forward = plan.reference_forward.as_ref().is_some_and(|r| r.value);
        let forced_float32 = unsloth_forces_float32(plan, implementation, arch, gpu);
        let length_from_data = data_lengths && stated.is_none();
        if let Some(what) = unpadded(plan).filter(|_| stated.is_none()) {
            missing.push(format!(
                "sample lengths: {what}, and the responses' lengths are not in the script; assumed every prompt and response reaches its maximum ({seq_len} tokens per sequence, or the packed budget; `# oomlint: sample-tokens=N` states the longest sample)"
            ));
        }
        missing.extend(openrlhf_assumptions(plan));
        if let Some((tokens, from)) = stated {
            missing.push(format!(
                "sample lengths: the longest sample holds {tokens} tokens, as {from} states; batches are sized at {} tokens",
                seq_len.min(MAX_SEQ_LEN)
            ));
        } else if padded_to_longest {
            missing.push(format!(
                "sample lengths: batches are padded to their longest sample (no packing), and the dataset's lengths are not in the file; assumed a batch reaches {} tokens (`# oomlint: sample-tokens=N` states the longest sample)",
                seq_len.min(MAX_SEQ_LEN)
            ));
        }
        // accelerate holds trainable parameters in fp32 under FSDP when mixed precision is on: it
        // upcasts them before sharding ("FSDP upcast of low precision parameters to fp32",
        // `fsdp2_prepare_model` in `utils/fsdp_utils.py`, `Accelerator.prepare_model` for FSDP1),
        // and FSDP's mixed-precision policy gathers each unit in the 16-bit dtype. Frozen
        // parameters (LoRA's base) and quantized ones keep their dtype.
        let fsdp_upcast = implementation == Implementation::Hf
            && matches!(sharding, Sharding::Fsdp { .. })
            && matches!(plan.precision.as_ref().map(|p| p.value), Some(Precision::Mixed(_)))
            && quantization.is_none()
            && method == Method::Full
            && param_bytes < 4;
        let (param_bytes, trainable_bytes, mixed) =
            if fsdp_upcast { (4, 4, true) } else { (param_bytes, trainable_bytes, mixed) };
        let mut setup = Setup {
            implementation,
            arch: arch.clone(),
            counts,
            method,
            quantization,
            param_bytes,
            compute_bytes,
            compute_fp16,
            activation_bytes: if forced_float32 { 4 } else { compute_bytes },
            trainable_bytes,
            mixed,
            autocast,
            micro_batch: micro_batch.saturating_mul(sequences_per_example(plan)).clamp(1, MAX_MICRO_BATCH),
            seq_len: seq_len.min(MAX_SEQ_LEN),
            grad_accumulation,
            world,
            checkpointing,
            attention,
            optimizer,
            loss,
            fused_head,
            sharding,
            shard_params,
            shard_grads,
            shard_optimizer,
            buckets: Buckets::resolve(
                &plan.zero_buckets.unwrap_or_else(crate::format::deepspeed::unread_buckets),
                arch.n_embd,
            ),
            lora_rank: lora_rank.max(1),
            lora_dropout,
            lora_targets,
            trainable: 0,
            rl: plan.rl.clone(),
            algorithm,
            reference_model,
            reference_forward,
            head_rows,
            expandable_segments,
            gpu_capacity: gpu.map(|g| g.memory_bytes),
            length_from_data,
            behaviour,
            missing,
            one_gpu_assumed,
            phase_offloads: plan.rl_phases.as_ref().map_or([false; 3], |p| p.offloads),
            weight_sync: plan.rl_phases.as_ref().and_then(|p| p.weight_sync.clone()),
            log_prob_pass: plan.rl_phases.as_ref().and_then(|p| {
                Some((p.log_prob_tokens.as_ref()?.value.clamp(1, MAX_SEQ_LEN), p.log_prob_entropy == Some(true)))
            }),
            sequence_parallel,
            experts: unsloth_experts(implementation, arch, context),
            tensor_parallel: 1,
            tp_layout: None,
            data_parallel,
            shard_group,
            pipeline_parallel,
            stage,
            expert_parallel,
            expert_trainable: 0,
            expert_data_parallel: 1,
            model_parameters: 0,
            model_trainable: 0,
            params_cast_per_unit: fsdp_upcast
                || plan.framework == Framework::Verl && matches!(sharding, Sharding::Fsdp { .. }),
        };
        setup.trainable = trainable_parameters(&setup);
        setup.model_parameters = setup.counts.total;
        setup.model_trainable = setup.trainable;
        if let Some((n, layout)) = tp {
            let (arch, counts, head_rows) = tensor_parallel::split(&setup.arch, implementation, reward, n, layout);
            (setup.arch, setup.counts, setup.head_rows) = (arch, counts, head_rows);
            setup.tensor_parallel = n;
            setup.tp_layout = Some(layout);
            setup.trainable = trainable_parameters(&setup);
        }
        let expert_tp = plan.expert_tensor_parallel.as_ref().map_or(setup.tensor_parallel, |n| n.value.max(1));
        if pipeline_parallel > 1 || expert_parallel > 1 || expert_tp != setup.tensor_parallel {
            megatron_rank(&mut setup, expert_tp, reward);
        }
        setup
    }
}

/// One Megatron rank beyond its tensor-parallel slice (`megatron.rs`): its pipeline stage's
/// layers with the embedding (the first stage) or the output layer (the last: a copy of the
/// embedding where the two are tied, `share_embeddings_and_output_weights`), `1/ep` of the
/// routed experts, and the activations of the micro-batches 1F1B keeps in flight there.
fn megatron_rank(setup: &mut Setup, expert_tp: u64, reward: bool) {
    let (pp, expert_parallel, micro_batches) =
        (setup.pipeline_parallel, setup.expert_parallel, setup.grad_accumulation);
    let (stage, in_flight) = megatron::stage(&setup.arch, pp, micro_batches, setup.stage);
    let (mut counts, _) = weights::counts_and_head_rows(&stage, setup.implementation, reward);
    match setup.stage {
        _ if pp <= 1 => {}
        Stage::First => {
            counts.total -= counts.head;
            counts.head = 0;
        }
        Stage::Last if counts.head == 0 => {
            counts.head = counts.embedding;
            counts.embedding = 0;
        }
        Stage::Last => {
            counts.total -= counts.embedding;
            counts.embedding = 0;
        }
    }
    // `stage` splits each expert over the tensor-parallel ranks; Megatron over `expert_tp`.
    let routed = weights::routed_expert_parameters(&stage);
    let local = (routed * setup.tensor_parallel).div_ceil(expert_parallel * expert_tp);
    counts.block_linear = counts.block_linear - routed + local;
    counts.total = counts.total - routed + local;
    setup.counts = counts;
    setup.arch = stage;
    setup.trainable = trainable_parameters(setup);
    if setup.method == Method::Full {
        setup.expert_trainable = local.min(setup.trainable);
    }
    // Expert tensor parallelism defaults to the tensor-parallel size (`parallel_state.py`
    // `initialize_model_parallel`: an unset `expert_tensor_parallel_size` is
    // `tensor_model_parallel_size`).
    setup.expert_data_parallel = (setup.world / (expert_parallel * expert_tp * pp)).max(1);
    setup.arch = in_flight;
}

/// Unsloth sets `UNSLOTH_FORCE_FLOAT32` for some families (`unsloth_zoo/model_lists.py`
/// `FORCE_FLOAT32`: Gemma 3, Gemma 4, gpt-oss, Qwen3-MoE, …) when the run would be float16 (a GPU
/// without bf16, or `dtype = torch.float16`; `unsloth/models/loader.py` `from_pretrained`). The
/// weights are then cast to float16 (`unsloth_zoo/patching_utils.py` `patch_model_and_tokenizer`)
/// and Trainer runs without autocast (`unsloth/models/rl.py`: "Switching to float32 training").
/// Only Gemma 3's patched layers keep a float32 residual stream (`unsloth_zoo/temporary_patches/gemma.py`:
/// the scaled embedding returns float32, RMSNorm, MLP and attention compute in float32): 4-byte
/// activations. The other families' activations stay in the float16 of their weights.
fn unsloth_forces_float32(plan: &Plan, implementation: Implementation, arch: &Architecture, gpu: Option<&Gpu>) -> bool {
    if implementation != Implementation::Unsloth {
        return false;
    }
    let family = arch.family.to_ascii_lowercase();
    if !(family == "gemma-3" || family == "gemma3") {
        return false;
    }
    unsloth_loads_float16(plan, gpu) || gpu.is_some_and(|g| !g.bf16)
}

/// Whether Unsloth loads the model in float16 (`unsloth/models/vision.py` `from_pretrained`):
/// `dtype=None` is bfloat16 where the GPU has it, else float16, and an asked bfloat16 on a GPU
/// without it "will change to float16"; float32 stays float32.
fn unsloth_loads_float16(plan: &Plan, gpu: Option<&Gpu>) -> bool {
    let no_bf16 = gpu.is_some_and(|g| !g.bf16);
    match plan.load_dtype.as_ref().map(|d| d.value) {
        Some(Dtype::F16) => true,
        Some(Dtype::F32) => false,
        _ => no_bf16,
    }
}

/// Unsloth's handling of routed experts by release, where the experts are fused 3-D parameters
/// (`transformers` 5 for every mixture of experts; gpt-oss, Llama 4, DBRX and Granite's MoE in
/// every release) rather than one `nn.Linear` per expert:
///
/// * bitsandbytes replaces `nn.Linear` only, so a 4-bit load leaves fused experts in 16 bits
///   (bitsandbytes issue #1849) until unsloth-zoo 2026.6.2 quantizes them itself
///   (`temporary_patches/moe_utils_bnb4bit.py`, "[MoE] Quantisation support", merged 2026-06-04);
/// * PEFT's `target_modules` adapt modules, not parameters: Unsloth passes the fused experts as
///   `target_parameters` from the release after 2026.2.1 (`unsloth/models/_utils.py`
///   `get_moe_target_parameters`, merged minutes after the 2026.2.1 version bump: 2026.3.1 is
///   the first release that surely has it), and finds Gemma 4's (`experts.*` beside its dense
///   MLP) from 2026.4.5 (`_resolve_moe_parameter_name`);
/// * gpt-oss loads as Unsloth's pre-quantized checkpoint with one 4-bit `Linear` per expert
///   (`gate_up_projs.<i>`), which plain names do not match until 2026.7.2
///   (`get_moe_target_modules`).
///
/// Without pins the newest releases are assumed: experts quantized and adapted.
fn unsloth_experts(implementation: Implementation, arch: &Architecture, context: &Context) -> ExpertHandling {
    let all = ExpertHandling { quantized: true, adapted: true };
    if implementation != Implementation::Unsloth || arch.mlp != MlpKind::Moe {
        return all;
    }
    let at_least = |v: &Option<Version>, parts: &[u64]| v.as_ref().is_none_or(|v| *v >= Version::release(parts));
    let family = arch.family.to_ascii_lowercase();
    if family == "gpt-oss" {
        return ExpertHandling { quantized: true, adapted: at_least(&context.unsloth, &[2026, 7, 2]) };
    }
    let fused_always = matches!(family.as_str(), "llama-4" | "dbrx") || family.starts_with("granite");
    if !fused_always && !at_least(&context.transformers, &[5, 0]) {
        return all;
    }
    let adapted_from: &[u64] = if family == "gemma-4" { &[2026, 4, 5] } else { &[2026, 3, 1] };
    ExpertHandling {
        quantized: at_least(&context.unsloth, &[2026, 6, 2]),
        adapted: at_least(&context.unsloth, adapted_from),
    }
}

/// verl removes padding (`use_remove_padding`) or packs micro batches by tokens
/// (`use_dynamic_bsz`): a micro batch holds its samples' real tokens, which the script does not
/// say. The estimate takes every prompt and response at its maximum length (GRPO responses often
/// stop well short of it).
fn unpadded(plan: &Plan) -> Option<&'static str> {
    let verl = plan.verl.as_ref()?;
    if verl.dynamic_bsz.value == Some(true) {
        Some("use_dynamic_bsz packs micro batches up to ppo_max_token_len_per_gpu")
    } else if plan.padding_free.as_ref().is_some_and(|p| p.value) {
        Some("use_remove_padding keeps only the real tokens of a micro batch")
    } else {
        None
    }
}

/// What the estimate of an OpenRLHF run leaves out or assumes: one GPU of the actor's group
/// only (with the reference when it is colocated), and packed micro batches at their budget.
fn openrlhf_assumptions(plan: &Plan) -> Vec<String> {
    if plan.framework != Framework::Openrlhf {
        return Vec::new();
    }
    let mut out = Vec::new();
    if plan.openrlhf.is_some() {
        out.push(
            "OpenRLHF: one GPU of the actor's group; the critic and reward models (on their own GPUs, or beside the actor with colocate_all) and DeepSpeed's sleep offload are not counted"
                .to_string(),
        );
    }
    if plan.packing.as_ref().is_some_and(|p| p.value) {
        out.push(
            "sample lengths: packing_samples packs a micro batch's samples without padding, and their lengths are not in the script; assumed every sample at the maximum length"
                .to_string(),
        );
    }
    out
}

const MAX_MICRO_BATCH: u64 = 1 << 16;
const MAX_SEQ_LEN: u64 = 1 << 22;

/// The architecture with every dimension capped, so that no product of them overflows.
fn bounded(arch: &Architecture) -> Architecture {
    let mut a = arch.clone();
    a.n_layer = a.n_layer.min(1 << 10);
    a.n_mamba_layers = a.n_mamba_layers.min(a.n_layer);
    a.n_embd = a.n_embd.min(1 << 16);
    a.n_head = a.n_head.min(1 << 10);
    a.n_query_groups = a.n_query_groups.min(a.n_head.max(1));
    a.head_size = a.head_size.min(1 << 10);
    a.intermediate_size = a.intermediate_size.min(1 << 20);
    a.moe_intermediate_size = a.moe_intermediate_size.map(|w| w.min(1 << 20));
    a.shared_expert_intermediate_size = a.shared_expert_intermediate_size.map(|w| w.min(1 << 20));
    a.n_expert = a.n_expert.min(1 << 10);
    a.n_expert_per_token = a.n_expert_per_token.min(a.n_expert.max(1));
    a.vocab_size = a.vocab_size.min(1 << 22);
    a.padded_vocab_size = a.padded_vocab_size.min(1 << 22);
    if let Some(m) = a.mamba.as_mut() {
        m.d_state = m.d_state.min(1 << 12);
        m.n_heads = m.n_heads.min(1 << 10);
        // Mamba-1 runs one head of the whole inner width.
        m.head_dim = m.head_dim.min(1 << 16);
        m.n_groups = m.n_groups.min(1 << 6);
        m.dt_rank = m.dt_rank.min(1 << 16);
    }
    a
}

fn default_seq_len(plan: &Plan, arch: &Architecture) -> u64 {
    if let Some(rl) = &plan.rl {
        return rl.prompt_length.value + rl.max_completion_length.value;
    }
    match plan.framework {
        Framework::Litgpt => arch.block_size.max(1),
        _ => facts::count(TrlSft, "max_length").min(arch.block_size.max(1)),
    }
}

/// DPO, ORPO, CPO and reward modelling run each example's chosen and rejected sequences in
/// one concatenated forward of 2 × micro batch sequences, padded to the longer of the two
/// (TRL `dpo_trainer.py` `_compute_loss`: "batch is [chosen, rejected]"; `orpo_trainer.py` and
/// `cpo_trainer.py` `concatenated_forward`; `reward_trainer.py` `compute_loss`, which chunks
/// the scores in two; LLaMA-Factory likewise). KTO is unpaired: one sequence per example.
fn sequences_per_example(plan: &Plan) -> u64 {
    plan.algorithm.as_ref().map_or(1, |a| a.value.sequences_per_example())
}

/// The loss TRL runs for the file's `loss_type` in this release: (loss, fused LM head). The
/// reader maps `loss_type` unset or `chunked_nll` to [`LossImpl::TrlChunkedNll`], `nll` to
/// [`LossImpl::Full`]; DPO and GRPO read as [`LossImpl::Full`].
fn trl_loss(framework: Framework, loss: LossImpl, release: TrlLoss) -> (LossImpl, bool) {
    if framework != Framework::Trl || !matches!(loss, LossImpl::Full | LossImpl::TrlChunkedNll) {
        return (loss, false);
    }
    match release {
        TrlLoss::FullLogits => (LossImpl::Full, false),
        TrlLoss::ChunkedByDefault => (loss, false),
        TrlLoss::FusedHead => (loss, true),
    }
}

/// (parameter bytes, compute bytes, mixed precision).
fn precision_bytes(
    plan: &Plan,
    implementation: Implementation,
    gpu: Option<&Gpu>,
    missing: &mut Vec<String>,
) -> (u64, u64, bool) {
    let precision = plan.precision.as_ref().map(|p| p.value);
    let half = if gpu.is_none_or(|g| g.bf16) { Dtype::Bf16 } else { Dtype::F16 };
    let load = plan.load_dtype.as_ref().map(|d| d.value).filter(|d| *d != Dtype::Auto);
    match implementation {
        Implementation::Litgpt => match precision {
            Some(Precision::True(d)) => {
                let b = d.bytes().unwrap_or(2);
                (b, b, false)
            }
            Some(Precision::Mixed(d)) => (4, d.bytes().unwrap_or(2), true),
            None => {
                missing.push("precision not set; LitGPT picks bf16-mixed on bf16 GPUs".to_string());
                (4, 2, true)
            }
        },
        Implementation::Hf | Implementation::Unsloth => {
            let compute = match precision {
                Some(Precision::True(d)) | Some(Precision::Mixed(d)) => d.bytes().unwrap_or(2),
                None => half.bytes().unwrap_or(2),
            };
            let params = match load {
                Some(d) => d.bytes().unwrap_or(2),
                // Unsloth's `dtype=None` loads the GPU's 16-bit type, whatever the trainer's
                // precision: without `fp16`/`bf16` the Trainer runs no autocast and computes in it.
                None if implementation == Implementation::Unsloth => half.bytes().unwrap_or(2),
                None => {
                    missing.push("load dtype not set; assumed the checkpoint's 16-bit dtype".to_string());
                    2
                }
            };
            (params, compute.min(params), params > compute)
        }
    }
}

/// Ranks that divide (parameters, gradients, optimizer state).
fn shard_factors(sharding: Sharding, world: u64, implementation: Implementation) -> (u64, u64, u64) {
    let n = world.max(1);
    match sharding {
        Sharding::None if implementation == Implementation::Litgpt && n > 1 => (n, n, n),
        Sharding::None => (1, 1, 1),
        Sharding::Zero { stage, .. } => match stage {
            0 => (1, 1, 1),
            1 => (1, 1, n),
            2 => (1, n, n),
            _ => (n, n, n),
        },
        Sharding::Fsdp { full_shard: true, .. } => (n, n, n),
        Sharding::Fsdp { full_shard: false, .. } => (1, n, n),
        Sharding::Megatron { distributed_optimizer: true } => (1, 1, n),
        Sharding::Megatron { distributed_optimizer: false } => (1, 1, 1),
    }
}

/// LoRA: `r·(d_in + d_out)` per targeted module; adapters: LitGPT's prefix and gates.
fn trainable_parameters(s: &Setup) -> u64 {
    let a = &s.arch;
    let h = a.n_embd;
    match s.method {
        Method::Full | Method::Pretrain => s.counts.total,
        Method::Lora | Method::Qlora => lora_parameters(s),
        Method::Adapter => adapter_v1(a),
        Method::AdapterV2 => {
            let per_layer_out = weights::q_width(a) + 2 * weights::kv_width(a) + h + mlp_out_features(a);
            adapter_v1(a) + 2 * a.n_layer * per_layer_out + 2 * weights::vocab_rows(a) + s.counts.small
        }
    }
}

/// LitGPT adapter: a 10-token prefix and one gate per head in every layer from the third on.
fn adapter_v1(a: &Architecture) -> u64 {
    const PROMPT: u64 = 10;
    const START_LAYER: u64 = 2;
    a.n_layer.saturating_sub(START_LAYER) * (PROMPT * a.n_embd + a.n_head)
}

fn mlp_out_features(a: &Architecture) -> u64 {
    match a.mlp {
        MlpKind::Gelu => a.intermediate_size + a.n_embd,
        _ => 2 * a.intermediate_size + a.n_embd,
    }
}

/// `r·(d_in + d_out)` summed over every LoRA-adapted linear in the model.
fn lora_parameters(s: &Setup) -> u64 {
    let a = &s.arch;
    let t = &s.lora_targets;
    let h = a.n_embd;
    let q = weights::q_width(a);
    let kv = weights::kv_width(a);
    let gated = a.gated_mlp();
    let (i, experts) = match a.mlp {
        MlpKind::Moe if s.experts.adapted && !t.shared_expert_only => (a.expert_intermediate_size(), a.n_expert.max(1)),
        // Experts left unadapted (or targets naming the shared expert only): only the shared
        // (or dense) MLP beside them takes adapters.
        MlpKind::Moe => (a.shared_expert_intermediate_size.unwrap_or(0), 1),
        _ => (a.intermediate_size, 1),
    };
    let width = |on: bool, d_in: u64, d_out: u64| if on { d_in + d_out } else { 0 };
    // PEFT adapts Hugging Face's fused projections (`qkv_proj`, `gate_up_proj`) as one module each.
    let layout = if s.implementation == Implementation::Hf { a.hf_projections } else { HfProjections::Separate };
    let qkv = if layout.fused_qkv() {
        width(t.query || t.key || t.value, h, q + 2 * kv)
    } else {
        width(t.query, h, q) + width(t.key, h, kv) + width(t.value, h, kv)
    };
    let per_attention = qkv + width(t.output, q, h);
    let gate_up = if layout.fused_gate_up() && gated {
        width(t.mlp_gate || t.mlp_up, h, 2 * i)
    } else {
        width(t.mlp_gate && gated, h, i) + width(t.mlp_up, h, i)
    };
    let per_mlp = gate_up + width(t.mlp_down, i, h);
    let attention_layers = a.attention_layer_count();
    let head = width(t.lm_head, h, weights::vocab_rows(a));
    s.lora_rank * (attention_layers * per_attention + a.mlp_layer_count() * experts * per_mlp + head)
}
