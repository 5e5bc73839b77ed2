//! The normalized training plan: one typed view of any supported config format.
//!
//! Formats (`crate::format`) fill it from documents; the estimator and the rules read it.
//! Every field is [`Sourced`]: the value plus where it came from, so a hover, a message
//! or an edit can point at the key that set it or name the framework default it fell
//! back to.

use crate::alloc_conf::AllocConf;
use crate::span::Span;
use crate::syntax::{self, yaml, Language, Literal};
use serde::Serialize;
use std::borrow::Cow;

/// Where a plan value came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Origin {
    /// Set by the file: `key` is the key's span, `value` the value's span (the span
    /// an edit replaces). Both are byte ranges into the analysed text.
    File { key: Span, value: Span },
    /// The framework's default when the key is absent, e.g. "TRL 1.10 GRPOConfig" (most
    /// are rows of `format::facts`, described once: borrowed, not copied per file).
    Default { of: Cow<'static, str> },
    /// Derived from other fields; `from` explains how.
    Derived { from: String },
    /// Could not be known statically (e.g. `devices: auto`).
    Unknown { why: String },
    /// Set in another file the analysed one is read with (the config a launch script
    /// names, or the launch script that names the analysed config): `file` indexes
    /// [`Plan::linked_files`]; `key` and `value` are byte ranges of that file. No span of
    /// this file points at it.
    Linked { file: usize, key: Span, value: Span },
}

/// A plan value with its origin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub(crate) origin: Origin,
}

impl<T> Sourced<T> {
    pub(crate) fn file(value: T, key: Span, value_span: Span) -> Self {
        let origin = match (key.as_linked(), value_span.as_linked()) {
            (Some((file, key)), Some((_, value))) => Origin::Linked { file, key, value },
            (Some((file, key)), None) => Origin::Linked { file, key, value: key },
            _ => Origin::File { key, value: value_span },
        };
        Self { value, origin }
    }

    pub(crate) fn default_of(value: T, of: impl Into<Cow<'static, str>>) -> Self {
        Self { value, origin: Origin::Default { of: of.into() } }
    }

    pub fn derived(value: T, from: impl Into<String>) -> Self {
        Self { value, origin: Origin::Derived { from: from.into() } }
    }

    pub(crate) fn unknown(value: T, why: impl Into<String>) -> Self {
        Self { value, origin: Origin::Unknown { why: why.into() } }
    }

    /// The value's span when a file set it: this file's, or for a value set in a file the
    /// analysed one is read with, its [`Span::linked`] place there (where an edit of the value
    /// goes; a finding there lands on the word that names that file, `analysis.rs`).
    pub(crate) fn value_span(&self) -> Option<Span> {
        match self.origin {
            Origin::File { value, .. } => Some(value),
            Origin::Linked { file, value, .. } => Some(Span::linked(file, value)),
            _ => None,
        }
    }

    /// The key's span when a file set it (as [`Sourced::value_span`]).
    pub(crate) fn key_span(&self) -> Option<Span> {
        match self.origin {
            Origin::File { key, .. } => Some(key),
            Origin::Linked { file, key, .. } => Some(Span::linked(file, key)),
            _ => None,
        }
    }

    /// The key and its value when a file set them (a finding about the whole setting).
    pub(crate) fn entry_span(&self) -> Option<Span> {
        match self.origin {
            Origin::File { key, value } => Some(key.cover(value)),
            Origin::Linked { file, key, value } => Some(Span::linked(file, key.cover(value))),
            _ => None,
        }
    }

    pub(crate) fn is_from_file(&self) -> bool {
        matches!(self.origin, Origin::File { .. } | Origin::Linked { .. })
    }

    /// The value is a placeholder: the file computes it in a way oomlint does not follow.
    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self.origin, Origin::Unknown { .. })
    }

    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Sourced<U> {
        Sourced { value: f(self.value), origin: self.origin }
    }
}

impl<T: Copy> Sourced<Option<T>> {
    /// The value when the file sets one oomlint can follow: None for a null or for a value
    /// computed at run time.
    pub(crate) fn known_value(&self) -> Option<T> {
        self.value.filter(|_| !self.is_unknown())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Framework {
    Litgpt,
    Trl,
    Transformers,
    Axolotl,
    Llamafactory,
    Accelerate,
    Deepspeed,
    Unsloth,
    Verl,
    Openrlhf,
    /// Allocator settings from env files and shell scripts.
    Env,
    Oomlint,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    Full,
    Lora,
    /// LoRA over a 4-bit quantized base (the plan's `quantization` says which).
    Qlora,
    Adapter,
    AdapterV2,
    /// Pre-training from scratch (all parameters trainable).
    Pretrain,
}

/// Which linear layers carry LoRA adapters, in framework-neutral terms.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LoraTargets {
    pub query: bool,
    pub key: bool,
    pub value: bool,
    /// Attention output projection (`o_proj`, LitGPT `projection`).
    pub output: bool,
    pub mlp_gate: bool,
    pub mlp_up: bool,
    pub mlp_down: bool,
    pub lm_head: bool,
    /// Every MLP target names the shared expert (`shared_expert.gate_proj`): a mixture of
    /// experts' routed experts take no adapters.
    pub shared_expert_only: bool,
    /// Raw names the framework matches (for messages and unknown modules).
    pub names: Vec<String>,
}

impl LoraTargets {
    pub fn all_linear() -> Self {
        Self {
            query: true,
            key: true,
            value: true,
            output: true,
            mlp_gate: true,
            mlp_up: true,
            mlp_down: true,
            lm_head: false,
            shared_expert_only: false,
            names: vec!["all-linear".into()],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoraPlan {
    pub rank: Sourced<u64>,
    pub alpha: Sourced<f64>,
    pub dropout: Sourced<f64>,
    pub targets: Sourced<LoraTargets>,
}

/// Element type of tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dtype {
    F32,
    Bf16,
    F16,
    /// `auto`: the checkpoint's own dtype.
    Auto,
}

impl Dtype {
    pub(crate) fn bytes(self) -> Option<u64> {
        match self {
            Dtype::F32 => Some(4),
            Dtype::Bf16 | Dtype::F16 => Some(2),
            Dtype::Auto => None,
        }
    }
}

/// Training numerics: the parameter storage dtype and whether compute autocasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Parameters and compute in one dtype (LitGPT `bf16-true`).
    True(Dtype),
    /// fp32 parameters (master weights) with autocast compute in a 16-bit dtype.
    Mixed(Dtype),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quantization {
    Nf4 {
        double_quant: bool,
    },
    Fp4 {
        double_quant: bool,
    },
    /// bitsandbytes LLM.int8 weights.
    Int8,
    /// FP8 weights (Unsloth `load_in_fp8`, or a checkpoint stored in FP8).
    Fp8,
    /// A GPTQ checkpoint: `bits`-bit weights packed in int32, an fp16 scale and a packed zero
    /// point per group of 128 input features (optimum / GPTQModel `QuantLinear`).
    Gptq {
        bits: u8,
    },
    /// An AWQ checkpoint: 4-bit weights, an fp16 scale and a 4-bit zero point per group of 128
    /// (AutoAWQ `WQLinear_GEMM`).
    Awq,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Checkpointing {
    None,
    /// Recompute each block in backward; keep only block inputs.
    Full,
    /// Like `Full`, with the kept block inputs offloaded to CPU (Unsloth "unsloth", Axolotl `offload`).
    CpuOffload,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attention {
    Sdpa,
    Flash,
    Eager,
    Flex,
}

/// Optimizer family with the per-parameter state it keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    AdamW,
    AdamWFused,
    AdamW8bit,
    PagedAdamW,
    PagedAdamW8bit,
    Adafactor,
    Sgd,
    Lion8bit,
    Lion,
    /// Anything else, by the name the config used.
    Other(String),
}

/// How cross-entropy over the vocabulary is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossImpl {
    /// Full logits materialized, upcast to fp32 (HF default loss).
    Full,
    /// LitGPT `lm_head_chunk_size=128` with chunked cross-entropy.
    LitgptChunked,
    /// TRL `chunked_nll`.
    TrlChunkedNll,
    /// Liger fused linear cross-entropy.
    Liger,
    /// Unsloth's `fast_cross_entropy_loss` (before 2025.8.5): logits in the compute dtype, the
    /// Triton kernel writes their gradient in place.
    UnslothLogits,
    /// unsloth-zoo's `unsloth_fused_ce_loss`: the head and the loss run in row chunks whose
    /// fp32 logits fit a memory target.
    UnslothFused(CeChunkTarget),
    /// unsloth-zoo's compiled cross-entropy over whole logits (`compiler.py`
    /// `cross_entropy_replacement_3` before unsloth-zoo 2025.7.2), for a multimodal class whose
    /// forward takes the logits from its language model: the logits and their gradient in the
    /// residual stream's dtype, and the fp32 rows of one of `chunks` chunks at a time.
    UnslothWholeLogits { chunks: u64 },
    /// OpenRLHF's actor (`models/actor.py` `Actor.forward`): the logits of every token of the
    /// sequence are cast to fp32 (`output["logits"].to(torch.float32)`, the 16-bit ones freed),
    /// and `models/utils.py` `log_probs_from_logits` runs flash-attn's `cross_entropy_loss` on them,
    /// which saves them and allocates their fp32 gradient in backward (`inplace_backward` off).
    Fp32LogProbs,
    /// Log-probabilities of the sampled tokens, as RL actors take them (verl
    /// `workers/actor/dp_actor.py` `_forward_micro_batch` → `utils/torch_functional.py`
    /// `logprobs_from_logits`, flash-attn's Triton `cross_entropy_loss`): the 16-bit logits of every
    /// token that reaches the head are kept for backward, with one fp32 log-sum-exp and log-prob
    /// per token, and their gradient is written in place (`inplace_backward=True`).
    TokenLogProbs {
        /// verl's `use_fused_kernels`: the head and the log-prob run in chunks, no `[T, V]` logits.
        fused: bool,
        /// Extra 16-bit `[T, V]` tensors the entropy term adds to the update (`entropy_coeff != 0`
        /// or `calculate_entropy`): 0 without it; 1 for the logits' gradient, no longer written in
        /// place (`inplace_backward = False`); 2 when eager `entropy_from_logits` also keeps its softmax.
        entropy_copies: u8,
        /// Without `use_remove_padding` the response slice of the padded logits is copied
        /// (`logits[:, -response_length - 1 : -1]` reshaped by `logprobs_from_logits`): the
        /// tokens of the responses, per sequence.
        response_copy: Option<u64>,
    },
}

/// How `unsloth_fused_ce_loss` sizes its chunks (`unsloth_zoo/fused_losses/cross_entropy_loss.py`
/// `_get_chunk_multiplier`, `get_chunk_size`), by release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CeChunkTarget {
    /// A fixed target (`target_gb = 1`, unsloth 2025.8.5 to 2025.9.0).
    Fixed { mib: u64 },
    /// `percent` of the GPU's free memory at the first call, at most `cap_mib`; the chunk
    /// count is rounded to the nearest multiple of 4 (`round(n) * 4`) or, from 2026.7.1, up.
    ShareOfFree { percent: u64, cap_mib: Option<u64>, round_up: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Sharding {
    None,
    /// DeepSpeed ZeRO.
    Zero {
        stage: u8,
        offload_optimizer: bool,
        offload_params: bool,
    },
    /// PyTorch FSDP: `full_shard` shards params too, otherwise grads and optimizer state.
    Fsdp {
        full_shard: bool,
        offload_params: bool,
    },
    /// Megatron-core's data parallelism (`DistributedDataParallel` over a contiguous fp32
    /// gradient buffer): the 16-bit parameters and the gradients whole on every data-parallel
    /// rank, and with the distributed optimizer the fp32 main parameters and Adam moments
    /// sharded over them (`megatron/core/optimizer/distrib_optimizer.py`).
    Megatron {
        distributed_optimizer: bool,
    },
}

/// How a framework lays a model out over its tensor-parallel ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TpLayout {
    /// transformers' TP plan (`from_pretrained(tp_plan="auto")`, which accelerate's
    /// `ParallelismConfig(tp_size=…)` and Axolotl's `tensor_parallel_size` load through): the
    /// config's `base_model_tp_plan` makes `q_proj`/`k_proj`/`v_proj`/`gate_proj`/`up_proj`
    /// `colwise` and `o_proj`/`down_proj` `rowwise` (`models/llama/configuration_llama.py`);
    /// the embedding is not in the plan (replicated) and the model's `_tp_plan` makes `lm_head`
    /// `colwise_rep` / `colwise_gather_output`: its weight is split over the vocabulary and
    /// its logits gathered whole on every rank (`integrations/tensor_parallel.py`
    /// `ColwiseParallel(output_layouts=Replicate())`).
    Transformers,
    /// Megatron-core (verl's Megatron workers): column- and row-parallel linears in every
    /// block (`tensor_parallel/layers.py` `ColumnParallelLinear`, `RowParallelLinear`), a
    /// `VocabParallelEmbedding`, and a column-parallel output layer whose logits stay split
    /// over the vocabulary for the vocab-parallel cross-entropy and log-probs
    /// (`tensor_parallel/cross_entropy.py`, verl `utils/megatron/tensor_parallel.py`).
    Megatron {
        /// Megatron's sequence parallelism (`sequence_parallel`, verl's default with TP): the
        /// norms' and residual's activations are split over the same ranks along the sequence.
        sequence_parallel: bool,
    },
}

/// Tensor parallelism: each block's linears split over `size` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct TensorParallel {
    /// Ranks in one tensor-parallel group; None: every process of the launch
    /// (`from_pretrained(tp_plan="auto")` without `tp_size` builds its mesh over the world).
    pub(crate) size: Option<u64>,
    pub(crate) layout: TpLayout,
}

/// One of DeepSpeed ZeRO's sizes in elements, or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZeroSize {
    Elements(u64),
    /// `"auto"`: the Hugging Face Trainer fills it from the model's hidden size
    /// (`transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.trainer_config_finalize`).
    Auto,
}

/// The ZeRO buffer sizes that bound what one rank holds beyond its partitions
/// (`deepspeed/runtime/zero/config.py` `DeepSpeedZeroConfig`), each as the config writes it
/// or DeepSpeed's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ZeroBuckets {
    /// `reduce_bucket_size`: the gradient bucket reduced at once.
    pub(crate) reduce_bucket_size: ZeroSize,
    /// `stage3_prefetch_bucket_size`: parameters fetched ahead of use.
    pub(crate) prefetch_bucket_size: ZeroSize,
    /// `stage3_max_live_parameters`: gathered parameters kept before release.
    pub(crate) max_live_parameters: ZeroSize,
    /// `stage3_param_persistence_threshold`: smaller parameters stay gathered.
    pub(crate) param_persistence_threshold: ZeroSize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum VllmMode {
    Colocate,
    Server,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct VllmPlan {
    pub(crate) mode: Sourced<VllmMode>,
    /// Fraction of device memory vLLM reserves.
    pub(crate) gpu_memory_utilization: Sourced<f64>,
    /// Unsloth reads the fraction against *free* memory at load time; vLLM and TRL against total.
    pub(crate) fraction_of_free: bool,
    pub(crate) enable_sleep_mode: Sourced<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RlPlan {
    pub(crate) num_generations: Sourced<u64>,
    pub(crate) max_prompt_length: Option<Sourced<u64>>,
    /// The prompt length generation is sized for: `max_prompt_length`, else (TRL dropped the
    /// key in 0.28; the prompts' length depends on the dataset) an assumption from `format::facts`.
    #[serde(skip)]
    pub(crate) prompt_length: Sourced<u64>,
    pub(crate) max_completion_length: Sourced<u64>,
    pub(crate) generation_batch_size: Option<Sourced<u64>>,
    pub(crate) steps_per_generation: Option<Sourced<u64>>,
    /// KL coefficient; a reference model is kept when it is non-zero (and no PEFT).
    pub(crate) beta: Sourced<f64>,
    pub(crate) vllm: Option<VllmPlan>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RlAlgorithm {
    Sft,
    Dpo,
    Grpo,
    Orpo,
    Kto,
    /// CPO and SimPO: chosen and rejected concatenated, no reference model.
    Cpo,
    /// A reward model: a scalar score head over chosen and rejected (no vocabulary logits).
    Reward,
    Other,
}

impl RlAlgorithm {
    /// The sequences each example puts through the trained model's forward: chosen and
    /// rejected, concatenated into one batch, for the paired preference losses.
    pub(crate) fn sequences_per_example(self) -> u64 {
        match self {
            RlAlgorithm::Dpo | RlAlgorithm::Orpo | RlAlgorithm::Cpo | RlAlgorithm::Reward => 2,
            _ => 1,
        }
    }
}

/// A `PYTORCH_*ALLOC_CONF` assignment found in the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct AllocatorSetting {
    /// The variable name as written.
    pub(crate) variable: String,
    /// The value text after unquoting; `value_span` covers it in the file.
    pub(crate) value: String,
    pub(crate) key_span: Span,
    pub(crate) value_span: Span,
    /// Whether the value text maps byte for byte onto `value_span` (so edits can target it).
    pub(crate) verbatim: bool,
}

/// Reference to the model being trained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ModelRef {
    /// The string the config used (hub id, LitGPT name, or path).
    pub(crate) name: String,
    /// Whether it looks like a local directory (`./`, `/`, `checkpoints/`).
    pub(crate) is_path: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub(crate) framework: Framework,
    /// Script or sub-command, e.g. `finetune_lora`, `sft`, `grpo`.
    pub(crate) command: Option<String>,
    pub(crate) model: Option<Sourced<ModelRef>>,
    /// Why the run is not estimated although it names its model: the model is not a
    /// decoder language model (an encoder, an embedding or a speech model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_estimated: Option<String>,
    pub method: Option<Sourced<Method>>,
    pub(crate) algorithm: Option<Sourced<RlAlgorithm>>,
    pub lora: Option<LoraPlan>,
    /// Storage dtype the base weights are loaded in.
    pub load_dtype: Option<Sourced<Dtype>>,
    pub precision: Option<Sourced<Precision>>,
    pub quantization: Option<Sourced<Option<Quantization>>>,
    pub micro_batch_size: Option<Sourced<u64>>,
    pub gradient_accumulation: Option<Sourced<u64>>,
    pub(crate) global_batch_size: Option<Sourced<u64>>,
    pub devices: Option<Sourced<u64>>,
    pub(crate) num_nodes: Option<Sourced<u64>>,
    /// Tokens per sequence at the activation peak (truncation or pack length).
    pub max_seq_length: Option<Sourced<u64>>,
    pub(crate) packing: Option<Sourced<bool>>,
    pub(crate) padding_free: Option<Sourced<bool>>,
    pub gradient_checkpointing: Option<Sourced<Checkpointing>>,
    /// Ranks one sequence is split over (Ulysses sequence parallelism, context parallelism):
    /// each rank holds its 1/n of the tokens' activations and logits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sequence_parallel: Option<Sourced<u64>>,
    /// Tensor parallelism: ranks each block linear is split over, and how the framework
    /// splits the model (the embedding and head, the logits). The data-parallel ranks that
    /// shard the rest are the world over this size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tensor_parallel: Option<Sourced<TensorParallel>>,
    /// Ranks one FSDP shard group spans when the file sizes it (hybrid sharding: the rest of the
    /// data-parallel ranks hold replicas of the group): accelerate's `dp_shard_size × cp_size`
    /// (the `dp_shard_cp` mesh FSDP2 shards over), Axolotl's `dp_shard_size × context_parallel_size`.
    /// Without it FSDP shards over every data-parallel rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shard_group: Option<Sourced<u64>>,
    /// Megatron's pipeline stages (`pipeline_model_parallel_size`): each rank holds the layers of
    /// one stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pipeline_parallel: Option<Sourced<u64>>,
    /// Megatron's expert parallelism (`expert_model_parallel_size`): each rank holds its share of
    /// the routed experts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) expert_parallel: Option<Sourced<u64>>,
    /// Megatron's `expert_tensor_parallel_size` when the file sets it (else the tensor-parallel
    /// size): the ranks each routed expert is split over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) expert_tensor_parallel: Option<Sourced<u64>>,
    pub attention: Option<Sourced<Attention>>,
    pub optimizer: Option<Sourced<Optimizer>>,
    pub loss: Option<Sourced<LossImpl>>,
    pub(crate) sharding: Option<Sourced<Sharding>>,
    /// ZeRO's buffer sizes, when the DeepSpeed config is read.
    #[serde(skip)]
    pub(crate) zero_buckets: Option<ZeroBuckets>,
    pub(crate) rl: Option<RlPlan>,
    /// Whether a frozen reference model is kept on the GPU (DPO without PEFT, GRPO with beta > 0 and no PEFT).
    pub(crate) reference_model: Option<Sourced<bool>>,
    /// Whether each step runs a no-grad reference forward over the batch (DPO, KTO): through the
    /// reference copy, or the policy with its adapters disabled; false when the reference
    /// log-probabilities are precomputed.
    pub(crate) reference_forward: Option<Sourced<bool>>,
    /// The phases of a Ray-driven RL trainer beyond the update (verl).
    #[serde(skip)]
    pub(crate) rl_phases: Option<RlPhases>,
    pub(crate) allocator: Vec<AllocatorSetting>,
    /// `CUDA_VISIBLE_DEVICES` as written.
    pub(crate) visible_devices: Option<Sourced<String>>,
    /// The other files this plan was read with ([`Origin::Linked`] indexes them): the
    /// configs a launch script names, or the launch script that names this config.
    pub(crate) linked_files: Vec<LinkedFileRef>,
    /// What the launch of a launch script sets beyond the program's flags.
    #[serde(skip)]
    pub(crate) launch: Option<LaunchSettings>,
    /// Where a key the file does not set can be added (block YAML configs only).
    #[serde(skip)]
    pub(crate) insertion: Option<Insertion>,
    /// The language of the file, in which edits of its values are spelled.
    #[serde(skip)]
    pub(crate) language: Language,
    /// The trainer's own settings (TRL, transformers and LLaMA-Factory configs).
    #[serde(skip)]
    pub(crate) trainer: Option<TrainerSettings>,
    /// Axolotl's own settings.
    #[serde(skip)]
    pub(crate) axolotl: Option<AxolotlSettings>,
    /// LitGPT's own settings.
    #[serde(skip)]
    pub(crate) litgpt: Option<LitgptSettings>,
    /// The launcher's own settings (accelerate configs).
    #[serde(skip)]
    pub(crate) accelerate: Option<AccelerateSettings>,
    /// DeepSpeed's own settings (DeepSpeed configs).
    #[serde(skip)]
    pub(crate) deepspeed: Option<DeepspeedSettings>,
    /// The Unsloth loader's own settings (scripts that load with Unsloth).
    #[serde(skip)]
    pub(crate) unsloth: Option<UnslothSettings>,
    /// What verl's start-up validation and workers read (verl launch scripts).
    #[serde(skip)]
    pub(crate) verl: Option<VerlSettings>,
    /// What OpenRLHF's `train_ppo_ray` start-up asserts read (OpenRLHF launch scripts).
    #[serde(skip)]
    pub(crate) openrlhf: Option<OpenrlhfSettings>,
}

// The settings below are what the frameworks' start-up checks test (the rules read them);
// the estimate does not use them, and `oomlint plan` does not print them. Absent keys take
// the framework's default from `format::facts`; a `File` origin points at the key.

/// `TrainingArguments`, the TRL config class and TRL's `ModelConfig` as the trainer reads
/// them: TRL, transformers and LLaMA-Factory configs, and the config call of a script.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrainerSettings {
    /// Whether TRL's `ModelConfig` applies: a `trl` CLI config (a script loads its model itself).
    pub(crate) model_config: bool,
    /// `ModelConfig.model_name_or_path` as the config writes it (a script names its model
    /// in its loader call instead: see [`Plan::model`]).
    pub(crate) model_name_or_path: Option<Sourced<String>>,
    /// `ModelConfig.dtype` (also from the removed `torch_dtype` or `model_init_kwargs.dtype`);
    /// None when the file writes null.
    pub(crate) dtype: Sourced<Option<String>>,
    pub(crate) use_peft: Sourced<bool>,
    pub(crate) load_in_4bit: Sourced<bool>,
    pub(crate) load_in_8bit: Sourced<bool>,
    pub(crate) fp16: Sourced<bool>,
    /// After TRL's `bf16=None` → `not fp16`.
    pub(crate) bf16: Sourced<bool>,
    pub(crate) fp16_full_eval: Sourced<bool>,
    pub(crate) bf16_full_eval: Sourced<bool>,
    pub(crate) max_grad_norm: Sourced<f64>,
    pub(crate) auto_find_batch_size: Sourced<bool>,
    pub(crate) per_device_eval_batch_size: Sourced<u64>,
    /// `eval_strategy` (or its old name `evaluation_strategy`).
    pub(crate) eval_strategy: Sourced<String>,
    pub(crate) save_strategy: Sourced<String>,
    pub(crate) logging_steps: Sourced<f64>,
    /// `eval_steps`; `logging_steps` when unset.
    pub(crate) eval_steps: Sourced<f64>,
    pub(crate) save_steps: Sourced<f64>,
    pub(crate) load_best_model_at_end: Sourced<bool>,
    pub(crate) lr_scheduler_type: Sourced<String>,
    pub(crate) dataloader_num_workers: Sourced<u64>,
    pub(crate) dataloader_prefetch_factor: Sourced<Option<u64>>,
    /// An inline DeepSpeed config (`deepspeed: {…}`).
    pub(crate) deepspeed: Option<DeepspeedSettings>,
    pub(crate) sft: Option<SftSettings>,
    pub(crate) dpo: Option<DpoSettings>,
    pub(crate) grpo: Option<GrpoSettings>,
}

/// What `AxolotlInputConfig` (and its validators) reads beyond the plan's fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AxolotlSettings {
    pub(crate) adapter: Option<Sourced<String>>,
    pub(crate) load_in_4bit: Sourced<bool>,
    pub(crate) load_in_8bit: Sourced<bool>,
    pub(crate) gptq: Sourced<bool>,
    pub(crate) merge_lora: Sourced<bool>,
    pub(crate) fp16: Sourced<bool>,
    /// None: `auto` (the default).
    pub(crate) bf16: Sourced<Option<bool>>,
    /// Not Axolotl keys, but passed through to `TrainingArguments` when written.
    pub(crate) fp16_full_eval: Sourced<bool>,
    pub(crate) bf16_full_eval: Sourced<bool>,
    /// Whether checkpointing is on in any form (`true`, `offload`, …).
    pub(crate) gradient_checkpointing: Sourced<bool>,
    pub(crate) activation_offloading: Sourced<bool>,
    pub(crate) attn_implementation: Option<Sourced<String>>,
    /// The legacy attention flags the file turns on (`flash_attention`, …), in Axolotl's order
    /// (`LEGACY_ATTN_FLAG_TO_IMPL`); the value is the key.
    pub(crate) legacy_attention: Vec<Sourced<&'static str>>,
    pub(crate) batch_size: Sourced<Option<u64>>,
    /// The legacy top-level `beta`, which must match `trl.beta`.
    pub(crate) beta: Option<Sourced<f64>>,
    pub(crate) trl_beta: Option<Sourced<f64>>,
    /// Whether a DeepSpeed config is given.
    pub(crate) deepspeed: Sourced<bool>,
    /// Whether `fsdp` options are given.
    pub(crate) fsdp: Sourced<bool>,
    /// The FSDP version, when `fsdp_config` is present.
    pub(crate) fsdp_version: Option<Sourced<u64>>,
    pub(crate) optimizer: Sourced<String>,
    /// Whether `max_memory` is set (not null).
    pub(crate) max_memory: Sourced<bool>,
    /// Whether `gpu_memory_limit` is set (not null).
    pub(crate) gpu_memory_limit: Sourced<bool>,
    /// Whether `rl` is set.
    pub(crate) rl: Sourced<bool>,
    pub(crate) trl_use_vllm: Sourced<bool>,
    pub(crate) trl_vllm_enable_sleep_mode: Sourced<bool>,
}

/// What a LitGPT script's `setup` and `validate_args` check beyond the plan's fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LitgptSettings {
    /// The `train:` block's key, where findings about its defaulted values are reported.
    pub(crate) train_key: Option<Span>,
    /// `devices` when it is a number (also a numeric string); None for `auto` or absent.
    pub(crate) devices: Option<Sourced<i64>>,
    /// `num_nodes` when it is a number.
    pub(crate) num_nodes: Option<Sourced<i64>>,
    /// `quantize` when set (truthy), as written (`bnb.nf4`, …).
    pub(crate) quantize: Option<Sourced<String>>,
    /// `precision` as written; None inside for an explicit null.
    pub(crate) precision: Option<Sourced<Option<String>>>,
    /// The optimizer's class name or `class_path` (empty for a mapping without one).
    pub(crate) optimizer: Option<Sourced<String>>,
    /// Whether the optimizer is written as a mapping (`class_path: torch.optim.…`).
    pub(crate) optimizer_is_class: bool,
    /// Whether each argument `validate_args` checks is given a value (false: null).
    pub(crate) epochs: Option<Sourced<bool>>,
    pub(crate) max_tokens: Option<Sourced<bool>>,
    pub(crate) max_norm: Option<Sourced<bool>>,
    pub(crate) tie_embeddings: Option<Sourced<bool>>,
    pub(crate) max_new_tokens: Option<Sourced<bool>>,
    /// `train.lr_warmup_fraction`; None inside for an explicit null.
    pub(crate) lr_warmup_fraction: Option<Sourced<Option<f64>>>,
    /// `train.lr_warmup_steps`; None for an explicit null.
    pub(crate) lr_warmup_steps: Sourced<Option<f64>>,
    pub(crate) resume: Sourced<bool>,
    /// Whether `initial_checkpoint_dir` is given (pretrain).
    pub(crate) initial_checkpoint_dir: Sourced<bool>,
}

/// What `accelerate launch` and its plugins check in an accelerate config.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AccelerateSettings {
    /// The first key of the file, where a missing key is reported.
    pub(crate) first_key: Option<Span>,
    /// `distributed_type`; None inside for an explicit null.
    pub(crate) distributed_type: Option<Sourced<Option<String>>>,
    /// `num_processes` when an integer (-1, the default: given at launch); None for null.
    pub(crate) num_processes: Sourced<Option<i64>>,
    /// `mixed_precision` as written.
    pub(crate) mixed_precision: Option<Sourced<String>>,
    /// `deepspeed_config.deepspeed_config_file`, when given.
    pub(crate) deepspeed_config_file: Option<Sourced<String>>,
    /// The `deepspeed_config` keys a DeepSpeed config file overrides, as the file writes them.
    pub(crate) deepspeed_keys_owned_by_file: Vec<Sourced<&'static str>>,
    /// `fsdp_config.fsdp_version` as written.
    pub(crate) fsdp_version: Option<Sourced<String>>,
    pub(crate) fsdp_cpu_ram_efficient_loading: Sourced<bool>,
    /// `fsdp_config.fsdp_sync_module_states` when a boolean.
    pub(crate) fsdp_sync_module_states: Option<Sourced<bool>>,
    pub(crate) fsdp_state_dict_type: Option<Sourced<String>>,
    /// `fsdp_config.fsdp_reshard_after_forward` when written as a string or number (which
    /// accelerate parses with `str_to_bool`), not as a YAML boolean or null.
    pub(crate) fsdp_reshard_after_forward: Option<Sourced<String>>,
    /// The `parallelism_config` block (accelerate ≥ 1.10), when it holds a key.
    pub(crate) parallelism: Option<ParallelismSizes>,
}

/// The sizes of an accelerate config's `parallelism_config` block as the launcher passes them
/// to `ParallelismConfig` (`utils/launch.py` `prepare_extend_env_parallelism_config`: each
/// `PARALLELISM_CONFIG_*_SIZE` from the `--parallelism_config_*` argument, default 1).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParallelismSizes {
    /// The `parallelism_config` key, where a finding about defaulted sizes goes.
    pub(crate) key: Span,
    pub(crate) dp_replicate: Sourced<i64>,
    pub(crate) dp_shard: Sourced<i64>,
    pub(crate) tp: Sourced<i64>,
    pub(crate) cp: Sourced<i64>,
    /// `sp_size` (accelerate ≥ 1.12: DeepSpeed's ALST/Ulysses sequence parallelism).
    pub(crate) sp: Sourced<i64>,
    pub(crate) sp_backend: Sourced<String>,
}

/// The precision flags of a script's `FastLanguageModel.from_pretrained` /
/// `FastModel.from_pretrained` call as Unsloth reads them (`unsloth/models/loader.py`): each
/// argument's Python truthiness, else its default, after a `quantization_config` (a
/// `BitsAndBytesConfig` or a dict) with a true `load_in_4bit` or `load_in_8bit` replaced
/// those two flags. The plan's quantization derives from them.
#[derive(Debug, Clone, PartialEq)]
pub struct UnslothSettings {
    /// `FastLanguageModel`, with its own fast path (it hands 8-bit loads and full
    /// finetuning to `FastModel`); false for `FastModel` and `FastVisionModel`.
    pub language_model: bool,
    /// The loader's callee (`FastLanguageModel.from_pretrained`), where a default is reported.
    pub loader: Span,
    /// True by default.
    pub load_in_4bit: UnslothFlag,
    pub load_in_8bit: UnslothFlag,
    pub load_in_16bit: UnslothFlag,
    /// On for `True` and `"block"`.
    pub load_in_fp8: UnslothFlag,
    pub full_finetuning: UnslothFlag,
}

/// One flag of an Unsloth loader.
#[derive(Debug, Clone, PartialEq)]
pub struct UnslothFlag {
    /// On or off; None when the script computes it (the origin says why). A flag a
    /// `quantization_config` sets comes from that config's `load_in_4bit`/`load_in_8bit`.
    pub on: Sourced<Option<bool>>,
    /// The loader argument that sets it (the flag's keyword, or `quantization_config`'s),
    /// with its value when the value is written inside the call; None for a default.
    pub argument: Option<Span>,
}

/// A file read with the analysed one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct LinkedFileRef {
    /// The path as the leaf read it.
    pub(crate) path: String,
    /// The word of the analysed file that names it (a launch flag's value).
    #[serde(skip)]
    pub(crate) named_at: Option<Span>,
    /// Its text as read, which its byte ranges index; shared by the plan's clones.
    #[serde(skip)]
    pub(crate) text: std::sync::Arc<str>,
    /// Its language, in which edits of its values are spelled.
    #[serde(skip)]
    pub(crate) language: Language,
}

impl LinkedFileRef {
    pub(crate) fn new(path: &str, text: &str, language: Language, named_at: Option<Span>) -> Self {
        Self { path: path.to_string(), named_at, text: text.into(), language }
    }

    /// The 1-based line of byte `at` of this file.
    pub(crate) fn line_of(&self, at: usize) -> usize {
        crate::span::LineIndex::new(&self.text).line_of(at.min(self.text.len())) + 1
    }

    /// "`PATH` line N" for a place in this file.
    pub(crate) fn at(&self, local: Span) -> String {
        format!("`{}` line {}", self.path, self.line_of(local.start))
    }

    /// " (set in `PATH` line N)" for a place in this file.
    pub(crate) fn set_in(&self, local: Span) -> String {
        format!(" (set in {})", self.at(local))
    }
}

/// What a launch sets around its program: processes, visible GPUs, the launcher's config.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct LaunchSettings {
    /// The launcher: `accelerate launch`, `torchrun`, `deepspeed`.
    pub(crate) launcher: Option<&'static str>,
    /// Processes started on each machine, as the launch sets them.
    pub(crate) processes_per_node: Option<Sourced<u64>>,
    /// The GPUs each machine's processes see, as the same launch sets them.
    pub(crate) visible_gpus: Option<VisibleGpus>,
    /// The accelerate config's `mixed_precision` (`no`, `fp16`, `bf16`, `fp8`).
    pub(crate) accelerate_mixed_precision: Option<Sourced<String>>,
    /// The DeepSpeed file an accelerate config names, read.
    pub(crate) deepspeed: Option<DeepspeedSettings>,
    /// What `accelerate launch` runs with: its config file's keys under the launch flags that
    /// stand for them.
    pub(crate) accelerate: Option<AccelerateSettings>,
}

/// GPUs made visible to a launch, and by what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VisibleGpus {
    pub(crate) count: Sourced<u64>,
    /// `CUDA_VISIBLE_DEVICES` (the process sees exactly these), or a SLURM request
    /// (`--gres=gpu:N`, `--gpus-per-node`), which binds them only where the cluster constrains devices.
    pub(crate) by_cuda_visible_devices: bool,
}

/// What verl's `validate_config` (`verl/utils/config.py`), its actor config
/// (`verl/workers/config/actor.py`) and its FSDP workers (`verl/workers/fsdp_workers.py`) read, as
/// Hydra composes them. None inside: null in the config, or (origin `Unknown`) computed by the
/// script at run time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerlSettings {
    /// The module word of the command (`verl.trainer.main_ppo`), where findings about defaults go.
    pub(crate) command: Span,
    /// `trainer.use_legacy_worker_impl` (`auto` runs the FSDP workers of `fsdp_workers.py`).
    pub(crate) legacy_workers: Sourced<Option<String>>,
    /// `trainer.n_gpus_per_node × trainer.nnodes`.
    pub(crate) n_gpus: Sourced<Option<u64>>,
    pub(crate) train_batch_size: Sourced<Option<u64>>,
    /// `actor_rollout_ref.rollout.n`.
    pub(crate) rollout_n: Sourced<Option<u64>>,
    /// `actor_rollout_ref.actor.strategy`: `fsdp`, `fsdp2` or `megatron`.
    pub(crate) strategy: Sourced<Option<String>>,
    pub(crate) mini_batch: Sourced<Option<u64>>,
    /// The deprecated global `ppo_micro_batch_size`.
    pub(crate) micro_batch: Sourced<Option<u64>>,
    pub(crate) micro_per_gpu: Sourced<Option<u64>>,
    pub(crate) dynamic_bsz: Sourced<Option<bool>>,
    pub(crate) ulysses: Sourced<Option<u64>>,
    /// `actor_rollout_ref.model.use_remove_padding`.
    pub(crate) remove_padding: Sourced<Option<bool>>,
    /// The Megatron actor's tensor, pipeline, context and expert parallel sizes.
    pub(crate) megatron_sizes: [Option<Sourced<u64>>; 4],
    pub(crate) rollout_name: Sourced<Option<String>>,
    pub(crate) rollout_tp: Sourced<Option<u64>>,
    /// `need_reference_policy`: the KL loss or the in-reward KL.
    pub(crate) need_reference: Sourced<Option<bool>>,
    /// (`log_prob_micro_batch_size`, `…_per_gpu`) of the reference and of the rollout.
    pub(crate) log_prob_keys: [MicroBatchKeys; 2],
    pub(crate) param_offload: Sourced<Option<bool>>,
    pub(crate) optimizer_offload: Sourced<Option<bool>>,
    pub(crate) ref_param_offload: Sourced<Option<bool>>,
    /// The critic's `fsdp_config.param_offload` and `optimizer_offload`.
    pub(crate) critic_offloads: [Sourced<Option<bool>>; 2],
    /// `need_critic`: `critic.enable` when set, else `algorithm.adv_estimator` is `gae`.
    pub(crate) need_critic: Sourced<Option<bool>>,
    /// The critic's (`ppo_micro_batch_size`, `ppo_micro_batch_size_per_gpu`): the per-GPU key
    /// defaults to `${oc.select:.ppo_micro_batch_size,null}`, so it follows the global one.
    pub(crate) critic_micro_keys: MicroBatchKeys,
    /// The critic's `ppo_mini_batch_size` (the actor's unless set) and `use_dynamic_bsz`.
    pub(crate) critic_mini_batch: Sourced<Option<u64>>,
    pub(crate) critic_dynamic_bsz: Sourced<Option<bool>>,
    /// `critic.strategy` and the FSDP critic's (deprecated, still read) top-level
    /// `critic.ulysses_sequence_parallel_size`.
    pub(crate) critic_strategy: Sourced<Option<String>>,
    pub(crate) critic_ulysses: Sourced<Option<u64>>,
    /// `critic.model.use_remove_padding`.
    pub(crate) critic_remove_padding: Sourced<Option<bool>>,
    /// `critic.rollout_n` (the rollout's `n` unless set).
    pub(crate) critic_rollout_n: Sourced<Option<u64>>,
    /// `rollout.max_model_len` (null: prompt + response length) and `rollout.max_num_batched_tokens`,
    /// what verl's vLLM rollout passes to the engine (`explain` names them in its advice).
    pub(crate) max_model_len: Sourced<Option<u64>>,
    pub(crate) max_num_batched_tokens: Sourced<Option<u64>>,
    /// `rollout.gpu_memory_utilization`, and the data lengths, with their keys as written.
    pub(crate) gpu_memory_utilization: Sourced<Option<f64>>,
    pub(crate) max_prompt_length: Sourced<Option<u64>>,
    pub(crate) max_response_length: Sourced<Option<u64>>,
    /// Whether `validate_config` checks the reward model's micro-batch keys: `reward_model.enable`
    /// without `use_dynamic_bsz` and without `use_reward_loop`.
    pub(crate) reward_micro_checked: Sourced<Option<bool>>,
    /// `reward_model.micro_batch_size` and `reward_model.micro_batch_size_per_gpu`.
    pub(crate) reward_micro_keys: MicroBatchKeys,
    /// `actor_rollout_ref.rollout.val_kwargs.do_sample` and the rollout's `temperature`.
    pub(crate) val_do_sample: Sourced<Option<bool>>,
    pub(crate) rollout_temperature: Sourced<Option<f64>>,
    /// `actor_rollout_ref.model.lora_rank`, `rollout.layered_summon` and `rollout.load_format`:
    /// how `rollout_mode` collects LoRA weights for the engine.
    pub(crate) lora_rank: Sourced<Option<u64>>,
    pub(crate) layered_summon: Sourced<Option<bool>>,
    pub(crate) load_format: Sourced<Option<String>>,
    /// `actor.ppo_max_token_len_per_gpu`, the budget `use_dynamic_bsz` packs to.
    pub(crate) max_token_len: Sourced<Option<u64>>,
}

/// What a Ray-driven RL trainer does outside the actor's update: the no-grad log-prob passes
/// between generation and the update, and the parts it moves to the CPU outside the phases
/// that use them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RlPhases {
    /// Tokens of one micro batch of the no-grad log-prob passes (the actor's old log-probs and
    /// the reference's; the larger); None where the script computes them.
    pub(crate) log_prob_tokens: Option<Sourced<u64>>,
    /// The actor's old-log-prob pass also takes the entropy: `Some(eager)`, where an eager
    /// `entropy_from_logits` materializes its softmax and product (not compiled, not chunked).
    pub(crate) log_prob_entropy: Option<bool>,
    /// On the CPU outside the phases that use them: the actor's parameters (and gradients), its
    /// optimizer state, the reference's parameters.
    pub(crate) offloads: [bool; 3],
    /// What the hand-over of the actor's weights to the colocated rollout engine gathers on the
    /// GPU at once; None where it is not modelled.
    pub(crate) weight_sync: Option<Sourced<WeightSync>>,
}

/// What verl's `rollout_mode` (`fsdp_workers.py`) gathers on each GPU to hand the actor's
/// weights to the rollout engine (`verl/utils/fsdp_utils.py` `collect_lora_params`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WeightSync {
    /// LoRA under FSDP1 without `layered_summon`: `FSDP.summon_full_params` over the root
    /// unshards every parameter at once.
    WholeModel,
    /// LoRA under FSDP1 with `layered_summon`: one top-level module (a decoder layer, the
    /// embedding, the head) unsharded at a time.
    Layered,
    /// Full fine-tuning, or LoRA under FSDP2: one sharded tensor gathered whole at a time
    /// (`state_dict()` then `.full_tensor()` per parameter as the engine loads it).
    PerTensor,
}

/// One OpenRLHF flag as the release the script is written for spells it, with its value
/// (None inside: `None` in argparse, or computed by the script at run time).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpenrlhfFlag<T> {
    /// The flag without its dashes (`vllm.num_engines`, or `vllm_num_engines` in v0.8.0).
    pub(crate) flag: &'static str,
    pub(crate) value: Sourced<Option<T>>,
}

/// What the start-up asserts of OpenRLHF's `openrlhf/cli/train_ppo_ray.py` read (its
/// `__main__` block and `train`), after argparse's defaults.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpenrlhfSettings {
    /// The module word of the command, where findings about defaults go.
    pub(crate) command: Span,
    /// Whether the flags are the dotted groups of the newer releases (v0.8.0 and before: underscores).
    pub(crate) dotted: bool,
    pub(crate) actor_nodes: OpenrlhfFlag<u64>,
    pub(crate) actor_gpus: OpenrlhfFlag<u64>,
    pub(crate) vllm_engines: OpenrlhfFlag<u64>,
    pub(crate) vllm_tp: OpenrlhfFlag<u64>,
    pub(crate) colocate_all: OpenrlhfFlag<bool>,
    pub(crate) async_train: OpenrlhfFlag<bool>,
    pub(crate) packing: OpenrlhfFlag<bool>,
    pub(crate) n_samples: OpenrlhfFlag<u64>,
    pub(crate) estimator: OpenrlhfFlag<String>,
    pub(crate) rollout_batch: OpenrlhfFlag<u64>,
    pub(crate) rollout_micro: OpenrlhfFlag<u64>,
    pub(crate) ring_attn_size: OpenrlhfFlag<u64>,
    /// `--ds.tensor_parallel_size` (None in releases whose assert does not divide by it).
    pub(crate) ds_tp: Option<OpenrlhfFlag<u64>>,
    pub(crate) vllm_sleep: OpenrlhfFlag<bool>,
    pub(crate) partial_rollout: OpenrlhfFlag<bool>,
    /// `--rollout.vllm_generate_batch_size` (None: the rollout batch).
    pub(crate) generate_batch: OpenrlhfFlag<u64>,
    pub(crate) eval_dataset: OpenrlhfFlag<String>,
    pub(crate) remote_rm: OpenrlhfFlag<String>,
    pub(crate) agent: OpenrlhfFlag<String>,
    pub(crate) dynamic_filtering: OpenrlhfFlag<bool>,
    /// `--algo.dynamic_filtering_range LOW HIGH` (default `(0, 1)`).
    pub(crate) dynamic_filtering_range: OpenrlhfFlag<(f64, f64)>,
    pub(crate) max_images: OpenrlhfFlag<u64>,
    pub(crate) ref_nodes: OpenrlhfFlag<u64>,
    pub(crate) ref_gpus: OpenrlhfFlag<u64>,
    pub(crate) critic_nodes: OpenrlhfFlag<u64>,
    pub(crate) critic_gpus: OpenrlhfFlag<u64>,
    pub(crate) reward_nodes: OpenrlhfFlag<u64>,
    pub(crate) reward_gpus: OpenrlhfFlag<u64>,
    pub(crate) colocate_actor_ref: OpenrlhfFlag<bool>,
    pub(crate) colocate_critic_reward: OpenrlhfFlag<bool>,
    pub(crate) init_kl: OpenrlhfFlag<f64>,
}

impl<T> OpenrlhfFlag<T> {
    /// Whether argparse leaves the flag at its default of `None`: not written, not computed.
    pub(crate) fn unset(&self) -> bool {
        self.value.value.is_none() && matches!(self.value.origin, Origin::Default { .. })
    }
}

impl<T: std::fmt::Display> OpenrlhfFlag<T> {
    /// ` (--flag left at its default V)` when argparse's default decides the value, else nothing.
    pub(crate) fn default_note(&self) -> String {
        match (&self.value.value, &self.value.origin) {
            (Some(v), Origin::Default { .. }) => format!(" (`--{}` left at its default {v})", self.flag),
            _ => String::new(),
        }
    }
}

impl OpenrlhfFlag<String> {
    /// Whether the flag is known to be falsy in Python: unset, or written as an empty string.
    pub(crate) fn falsy(&self) -> bool {
        self.unset() || self.value.value.as_deref().is_some_and(str::is_empty)
    }
}

impl OpenrlhfSettings {
    /// Where a finding about `flag` goes: the flag in the script, else the command.
    pub(crate) fn span<T>(&self, flag: &OpenrlhfFlag<T>) -> Span {
        flag.value.entry_span().unwrap_or(self.command)
    }

    /// A related location naming `flag` (`--flag`) where the script sets it, else the command.
    pub(crate) fn related<T>(&self, flag: &OpenrlhfFlag<T>) -> (Span, String) {
        (self.span(flag), format!("--{}", flag.flag))
    }
}

/// A deprecated global micro batch and its per-GPU replacement, as verl reads them.
pub(crate) type MicroBatchKeys = (Sourced<Option<u64>>, Sourced<Option<u64>>);

impl VerlSettings {
    /// Where a finding about `field` goes: its value in the script, else the command.
    pub(crate) fn span<T>(&self, field: &Sourced<T>) -> Span {
        field.entry_span().unwrap_or(self.command)
    }
}

/// What DeepSpeed (and the HF Trainer's check of an inline config) reads beyond the plan's fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeepspeedSettings {
    /// The batch keys when written as numbers (None: absent or `"auto"`).
    pub(crate) train_batch_size: Option<Sourced<f64>>,
    pub(crate) train_micro_batch_size_per_gpu: Option<Sourced<f64>>,
    pub(crate) gradient_accumulation_steps: Option<Sourced<f64>>,
    pub(crate) gradient_clipping: Option<Sourced<f64>>,
    /// `fp16.enabled` / `bf16.enabled` when written as booleans or numbers (1.0 for true).
    pub(crate) fp16_enabled: Option<Sourced<f64>>,
    pub(crate) bf16_enabled: Option<Sourced<f64>>,
    /// `zero_optimization.stage` as written (0 by default).
    pub(crate) zero_stage: Sourced<i64>,
    /// `zero_optimization.offload_param.device`, and the key of the `offload_param` block.
    pub(crate) offload_param_device: Option<Sourced<String>>,
    pub(crate) offload_param_key: Option<Span>,
    pub(crate) offload_optimizer_ratio: Option<Sourced<f64>>,
}

/// `SFTConfig` settings beyond the plan's `packing` and `padding_free`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SftSettings {
    /// `max_length`; None when the file writes null (no truncation).
    pub(crate) max_length: Sourced<Option<u64>>,
    /// SFTConfig's default `max_length`, the value a fix restores.
    pub(crate) default_max_length: u64,
}

/// `DPOConfig` settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DpoSettings {
    /// `loss_type` as a list (one name is a list of one); None when the file writes null.
    pub(crate) loss_type: Sourced<Option<Vec<String>>>,
    /// `loss_weights`, when the file writes a list (each item's text).
    pub(crate) loss_weights: Option<Sourced<Vec<String>>>,
}

/// `GRPOConfig` settings beyond the plan's [`RlPlan`] (which describes the run: a script's
/// vLLM may come from its loader instead).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GrpoSettings {
    /// `num_generations_eval`; `num_generations` when unset.
    pub(crate) num_generations_eval: Sourced<u64>,
    pub(crate) sync_ref_model: Sourced<bool>,
    pub(crate) use_vllm: Sourced<bool>,
    pub(crate) vllm_mode: Sourced<String>,
    pub(crate) vllm_tensor_parallel_size: Sourced<u64>,
    pub(crate) vllm_enable_sleep_mode: Sourced<bool>,
}

/// A place to add a top-level key, and the key each settable plan field is written as in
/// this format (`gradient_accumulation` → `gradient_accumulation_steps`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Insertion {
    /// Where added keys go: the start of the line after the top-level mapping's last entry,
    /// or the end of a launch command's last word.
    pub(crate) offset: usize,
    /// The file has no line break after its last entry: the new line starts with one.
    pub(crate) needs_newline: bool,
    pub(crate) keys: &'static [(&'static str, &'static str)],
    pub(crate) style: InsertionStyle,
}

/// How an added key is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InsertionStyle {
    /// A `key: value` line of a YAML config.
    YamlLine,
    /// A ` --key value` flag at the end of a launch command (the program's flags override its
    /// config file's keys).
    Flag,
    /// A ` key=value` argument at the end of a launch command (LLaMA-Factory's overrides).
    Override,
}

impl Insertion {
    /// The text that sets `field`, when this format has a top-level key for it.
    pub(crate) fn line(&self, field: &str, value: &Literal) -> Option<String> {
        let key = self.keys.iter().find(|(f, _)| *f == field)?.1;
        Some(match self.style {
            InsertionStyle::YamlLine => format!("{key}: {}\n", yaml::spell(value)),
            InsertionStyle::Flag => format!(" --{key} {}", syntax::spell(value, Language::Shell)?),
            InsertionStyle::Override => format!(" {key}={}", syntax::spell(value, Language::Shell)?),
        })
    }
}

/// Where a finding about `span` goes in the analysed file: the span itself, or for a span in
/// one of `linked` the place of the analysed file that names that file.
pub(crate) fn place_in(span: Span, linked: &[LinkedFileRef]) -> Option<Span> {
    match span.as_linked() {
        Some((file, _)) => linked.get(file)?.named_at,
        None => Some(span),
    }
}

impl Framework {
    /// Whether configs of this framework describe a training run (and get an estimate).
    pub(crate) fn trains(self) -> bool {
        !matches!(self, Framework::Accelerate | Framework::Deepspeed | Framework::Env | Framework::Oomlint)
    }
}

/// The allocator variables in the order PyTorch looks for them: it reads the first one set
/// and ignores the others (`c10/core/AllocatorConfig.cpp`, torch >= 2.9).
pub(crate) const ALLOCATOR_VARIABLES: [&str; 3] =
    ["PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"];

impl Plan {
    /// Whether the run trains: an export, an inference (`chat`) config or a script that
    /// builds no trainer does not.
    pub(crate) fn trains(&self) -> bool {
        !matches!(self.command.as_deref(), Some("export" | "chat" | "inference"))
    }

    /// The allocator setting PyTorch reads: the first of [`ALLOCATOR_VARIABLES`] the file sets.
    pub(crate) fn effective_allocator(&self) -> Option<&AllocatorSetting> {
        ALLOCATOR_VARIABLES.iter().find_map(|name| self.allocator.iter().find(|s| s.variable == *name))
    }

    /// The allocator settings in effect, read by the parser that mirrors PyTorch's
    /// (`expandable_segments:true` is not `True`: PyTorch rejects it).
    fn allocator_config(&self) -> Option<AllocConf> {
        self.effective_allocator().map(|setting| crate::alloc_conf::parse(&setting.value))
    }

    /// Whether the allocator in effect grows segments in place.
    pub(crate) fn expandable_segments(&self) -> bool {
        self.allocator_config().is_some_and(|conf| conf.expandable_segments())
    }

    pub fn new(framework: Framework) -> Self {
        Self {
            framework,
            command: None,
            model: None,
            not_estimated: None,
            method: None,
            algorithm: None,
            lora: None,
            load_dtype: None,
            precision: None,
            quantization: None,
            micro_batch_size: None,
            gradient_accumulation: None,
            global_batch_size: None,
            devices: None,
            num_nodes: None,
            max_seq_length: None,
            packing: None,
            padding_free: None,
            gradient_checkpointing: None,
            sequence_parallel: None,
            tensor_parallel: None,
            shard_group: None,
            pipeline_parallel: None,
            expert_parallel: None,
            expert_tensor_parallel: None,
            attention: None,
            optimizer: None,
            loss: None,
            sharding: None,
            zero_buckets: None,
            rl: None,
            reference_model: None,
            reference_forward: None,
            rl_phases: None,
            allocator: Vec::new(),
            visible_devices: None,
            linked_files: Vec::new(),
            launch: None,
            insertion: None,
            language: Language::Yaml,
            trainer: None,
            axolotl: None,
            litgpt: None,
            accelerate: None,
            deepspeed: None,
            unsloth: None,
            verl: None,
            openrlhf: None,
        }
    }

    /// The language of the file `span` lies in: a linked file's, else the analysed file's.
    pub(crate) fn language_at(&self, span: Span) -> Language {
        span.as_linked().and_then(|(file, _)| self.linked_files.get(file)).map_or(self.language, |l| l.language)
    }

    /// Where a finding about `span` goes in the analysed file ([`place_in`] its linked files).
    pub(crate) fn place_span(&self, span: Span) -> Option<Span> {
        place_in(span, &self.linked_files)
    }

    /// Where a finding about `setting` lands in the analysed file: its value, or for a value
    /// set in a linked file, the word of this file that names that file; and the phrase
    /// saying where it was set (empty for this file).
    pub(crate) fn place<T>(&self, setting: &Sourced<T>) -> Option<(Span, String)> {
        match setting.origin {
            Origin::File { value, .. } => Some((value, String::new())),
            Origin::Linked { file, key, .. } => {
                let linked = self.linked_files.get(file)?;
                Some((linked.named_at?, linked.set_in(key)))
            }
            _ => None,
        }
    }

    /// Takes `gpus` as the world size (the user states it: `--gpus`, a `gpus` setting or
    /// modeline) when the file leaves it to the launch: `gpus` over the nodes the file
    /// states, else one node. False when the file states its own world size.
    pub(crate) fn assume_world_size(&mut self, gpus: u64, from: &str) -> bool {
        if self.stated_world_size().is_some() {
            return false;
        }
        let nodes = self.num_nodes.as_ref().filter(|n| n.is_from_file()).map(|n| n.value.max(1));
        match nodes {
            Some(nodes) if gpus.is_multiple_of(nodes) => {
                self.devices = Some(Sourced::derived(gpus / nodes, format!("{from} over {nodes} nodes")));
            }
            _ => {
                self.devices = Some(Sourced::derived(gpus, from.to_string()));
                self.num_nodes = Some(Sourced::derived(1, from.to_string()));
            }
        }
        true
    }

    /// Number of data-parallel ranks (devices × nodes), 1 when unknown.
    pub(crate) fn world_size(&self) -> u64 {
        let devices = self.devices.as_ref().map_or(1, |d| d.value.max(1));
        let nodes = self.num_nodes.as_ref().map_or(1, |n| n.value.max(1));
        devices * nodes
    }

    /// The world size (devices × nodes) when the file states it or it follows from what the
    /// file states (`num_processes`, `devices`, a DeepSpeed batch triple, accelerate's
    /// `distributed_type: NO`, a notebook's single process); None when the launch decides
    /// (`accelerate launch --num_processes`, `litgpt … --devices`, `devices: auto`).
    pub fn stated_world_size(&self) -> Option<u64> {
        let devices_stated = match &self.devices {
            Some(d) => match d.origin {
                Origin::File { .. } | Origin::Linked { .. } | Origin::Derived { .. } => true,
                // accelerate's only default is one process under `distributed_type: NO`.
                Origin::Default { .. } => self.framework == Framework::Accelerate,
                Origin::Unknown { .. } => false,
            },
            None => false,
        };
        let nodes_known = self.num_nodes.as_ref().is_none_or(|n| !matches!(n.origin, Origin::Unknown { .. }));
        let notebook = self.language == Language::Notebook;
        ((devices_stated && nodes_known) || notebook).then(|| self.world_size())
    }
}
