//! The frameworks' defaults, one row each: the key, the value, the releases it holds for,
//! and the framework source it mirrors. Only the plan builders of `format/` read this
//! table; rules and the estimator read the plan they build (a test in this module fails
//! when a rule or the estimator defaults one of these keys on its own).

use super::Reader;
use crate::plan::Sourced;
use crate::HashMap;
use std::sync::OnceLock;

/// One default of one framework.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fact {
    pub(crate) framework: Framework,
    pub(crate) key: &'static str,
    pub(crate) value: Value,
    /// The releases the value holds for.
    pub(crate) releases: &'static str,
    /// File and symbol in the framework's repository.
    pub(crate) source: &'static str,
}

/// A default: a number, a boolean, a string, a list of strings, or Python's `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Number(f64),
    Flag(bool),
    Text(&'static str),
    Texts(&'static [&'static str]),
    None,
}

/// As Python writes it, for the notes of default origins.
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Number(n) => write!(f, "{n}"),
            Value::Flag(b) => f.write_str(if *b { "True" } else { "False" }),
            Value::Text(t) => write!(f, "{t:?}"),
            Value::Texts(t) => write!(f, "{t:?}"),
            Value::None => f.write_str("None"),
        }
    }
}

/// Whose default a fact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Framework {
    Transformers,
    /// Every TRL config class (`SFTConfig`, `DPOConfig`, `GRPOConfig`, …).
    Trl,
    TrlSft,
    TrlDpo,
    TrlGrpo,
    /// `ORPOConfig` (`trl.experimental.orpo` since 0.29).
    TrlOrpo,
    TrlKto,
    /// `CPOConfig` (`trl.experimental.cpo` since 0.29), SimPO included.
    TrlCpo,
    TrlReward,
    TrlModel,
    /// PEFT's `LoraConfig`.
    Peft,
    /// Unsloth's loaders and `get_peft_model`.
    Unsloth,
    LlamaFactory,
    LitgptFinetune,
    LitgptPretrain,
    Axolotl,
    Accelerate,
    Deepspeed,
}

const fn fact(
    framework: Framework,
    key: &'static str,
    value: f64,
    releases: &'static str,
    source: &'static str,
) -> Fact {
    Fact { framework, key, value: Value::Number(value), releases, source }
}

const fn fact_of(
    framework: Framework,
    key: &'static str,
    value: Value,
    releases: &'static str,
    source: &'static str,
) -> Fact {
    Fact { framework, key, value, releases, source }
}

use Framework::*;

/// Every default a plan builder applies.
pub(crate) const FACTS: &[Fact] = &[
    fact(
        Transformers,
        "per_device_train_batch_size",
        8.0,
        "all",
        "transformers/training_args.py TrainingArguments.per_device_train_batch_size",
    ),
    fact(
        Transformers,
        "gradient_accumulation_steps",
        1.0,
        "all",
        "transformers/training_args.py TrainingArguments.gradient_accumulation_steps",
    ),
    fact_of(Transformers, "fp16", Value::Flag(false), "all", "transformers/training_args.py TrainingArguments.fp16"),
    fact_of(Transformers, "bf16", Value::Flag(false), "all", "transformers/training_args.py TrainingArguments.bf16"),
    fact_of(
        Transformers,
        "fp16_full_eval",
        Value::Flag(false),
        "all",
        "transformers/training_args.py TrainingArguments.fp16_full_eval",
    ),
    fact_of(
        Transformers,
        "bf16_full_eval",
        Value::Flag(false),
        "all",
        "transformers/training_args.py TrainingArguments.bf16_full_eval",
    ),
    fact(Transformers, "max_grad_norm", 1.0, "all", "transformers/training_args.py TrainingArguments.max_grad_norm"),
    fact_of(
        Transformers,
        "auto_find_batch_size",
        Value::Flag(false),
        "all",
        "transformers/training_args.py TrainingArguments.auto_find_batch_size",
    ),
    fact(
        Transformers,
        "per_device_eval_batch_size",
        8.0,
        "all",
        "transformers/training_args.py TrainingArguments.per_device_eval_batch_size",
    ),
    fact_of(
        Transformers,
        "eval_strategy",
        Value::Text("no"),
        "all",
        "transformers/training_args.py TrainingArguments.eval_strategy",
    ),
    fact_of(
        Transformers,
        "save_strategy",
        Value::Text("steps"),
        "all",
        "transformers/training_args.py TrainingArguments.save_strategy",
    ),
    fact(Transformers, "logging_steps", 500.0, "all", "transformers/training_args.py TrainingArguments.logging_steps"),
    fact_of(
        Transformers,
        "eval_steps",
        Value::None,
        "all",
        "transformers/training_args.py TrainingArguments.eval_steps (None: logging_steps)",
    ),
    fact(Transformers, "save_steps", 500.0, "all", "transformers/training_args.py TrainingArguments.save_steps"),
    fact_of(
        Transformers,
        "load_best_model_at_end",
        Value::Flag(false),
        "all",
        "transformers/training_args.py TrainingArguments.load_best_model_at_end",
    ),
    fact_of(
        Transformers,
        "lr_scheduler_type",
        Value::Text("linear"),
        "all",
        "transformers/training_args.py TrainingArguments.lr_scheduler_type",
    ),
    fact(
        Transformers,
        "dataloader_num_workers",
        0.0,
        "all",
        "transformers/training_args.py TrainingArguments.dataloader_num_workers",
    ),
    fact_of(
        Transformers,
        "dataloader_prefetch_factor",
        Value::None,
        "all",
        "transformers/training_args.py TrainingArguments.dataloader_prefetch_factor",
    ),
    fact_of(
        Trl,
        "bf16",
        Value::None,
        ">= 0.19",
        "trl/trainer/sft_config.py SFTConfig.bf16 (None: bf16 unless fp16, in __post_init__)",
    ),
    fact(Trl, "logging_steps", 10.0, "1.10", "trl/trainer/sft_config.py SFTConfig.logging_steps"),
    fact(TrlSft, "max_length", 1024.0, ">= 0.20", "trl/trainer/sft_config.py SFTConfig.max_length"),
    fact_of(TrlSft, "packing", Value::Flag(false), "all", "trl/trainer/sft_config.py SFTConfig.packing"),
    fact_of(TrlSft, "padding_free", Value::Flag(false), "all", "trl/trainer/sft_config.py SFTConfig.padding_free"),
    fact(TrlDpo, "max_length", 1024.0, ">= 0.20", "trl/trainer/dpo_config.py DPOConfig.max_length"),
    fact_of(TrlDpo, "loss_type", Value::Texts(&["sigmoid"]), "1.10", "trl/trainer/dpo_config.py DPOConfig.loss_type"),
    fact_of(
        TrlDpo,
        "precompute_ref_log_probs",
        Value::Flag(false),
        "all",
        "trl/trainer/dpo_config.py DPOConfig.precompute_ref_log_probs",
    ),
    fact(TrlOrpo, "max_length", 1024.0, ">= 0.20", "trl/experimental/orpo/orpo_config.py ORPOConfig.max_length"),
    fact(TrlKto, "max_length", 1024.0, ">= 0.20", "trl/trainer/kto_config.py KTOConfig.max_length"),
    fact_of(
        TrlKto,
        "precompute_ref_log_probs",
        Value::Flag(false),
        "all",
        "trl/trainer/kto_config.py KTOConfig.precompute_ref_log_probs",
    ),
    fact(TrlCpo, "max_length", 1024.0, ">= 0.20", "trl/experimental/cpo/cpo_config.py CPOConfig.max_length"),
    fact(TrlReward, "max_length", 1024.0, ">= 0.20", "trl/trainer/reward_config.py RewardConfig.max_length"),
    fact(TrlGrpo, "num_generations", 8.0, ">= 0.14", "trl/trainer/grpo_config.py GRPOConfig.num_generations"),
    fact_of(
        TrlGrpo,
        "num_generations_eval",
        Value::None,
        "1.10",
        "trl/trainer/grpo_config.py GRPOConfig.num_generations_eval (None: num_generations)",
    ),
    fact(
        TrlGrpo,
        "vllm_gpu_memory_utilization",
        0.3,
        ">= 0.18 (0.9 before)",
        "trl/trainer/grpo_config.py GRPOConfig.vllm_gpu_memory_utilization",
    ),
    fact(TrlGrpo, "beta", 0.0, ">= 0.19 (0.04 before)", "trl/trainer/grpo_config.py GRPOConfig.beta"),
    fact_of(
        TrlGrpo,
        "sync_ref_model",
        Value::Flag(false),
        "all",
        "trl/trainer/grpo_config.py GRPOConfig.sync_ref_model",
    ),
    fact_of(TrlGrpo, "use_vllm", Value::Flag(false), "all", "trl/trainer/grpo_config.py GRPOConfig.use_vllm"),
    fact_of(
        TrlGrpo,
        "vllm_mode",
        Value::Text("colocate"),
        ">= 1.0 (server before)",
        "trl/trainer/grpo_config.py GRPOConfig.vllm_mode",
    ),
    fact(
        TrlGrpo,
        "vllm_tensor_parallel_size",
        1.0,
        "all",
        "trl/trainer/grpo_config.py GRPOConfig.vllm_tensor_parallel_size",
    ),
    fact_of(
        TrlGrpo,
        "vllm_enable_sleep_mode",
        Value::Flag(false),
        "all",
        "trl/trainer/grpo_config.py GRPOConfig.vllm_enable_sleep_mode",
    ),
    fact(
        TrlGrpo,
        "max_completion_length",
        512.0,
        ">= 1.10 (256 up to 1.9)",
        "trl/trainer/grpo_config.py GRPOConfig.max_completion_length",
    ),
    fact(
        TrlGrpo,
        "max_prompt_length",
        512.0,
        "< 0.28 (removed since)",
        "trl/trainer/grpo_config.py GRPOConfig.max_prompt_length",
    ),
    fact_of(TrlModel, "use_peft", Value::Flag(false), "all", "trl/trainer/model_config.py ModelConfig.use_peft"),
    fact_of(
        TrlModel,
        "load_in_4bit",
        Value::Flag(false),
        "all",
        "trl/trainer/model_config.py ModelConfig.load_in_4bit",
    ),
    fact_of(
        TrlModel,
        "load_in_8bit",
        Value::Flag(false),
        "all",
        "trl/trainer/model_config.py ModelConfig.load_in_8bit",
    ),
    fact_of(TrlModel, "dtype", Value::Text("float32"), ">= 0.27", "trl/trainer/model_config.py ModelConfig.dtype"),
    fact(TrlModel, "lora_r", 16.0, "all", "trl/trainer/model_config.py ModelConfig.lora_r"),
    fact(TrlModel, "lora_alpha", 32.0, "all", "trl/trainer/model_config.py ModelConfig.lora_alpha"),
    fact(TrlModel, "lora_dropout", 0.05, "all", "trl/trainer/model_config.py ModelConfig.lora_dropout"),
    fact_of(Axolotl, "adapter", Value::None, ">= 0.18", "axolotl/utils/schemas/peft.py LoraConfig.adapter"),
    fact_of(
        Axolotl,
        "load_in_4bit",
        Value::Flag(false),
        ">= 0.18",
        "axolotl/utils/schemas/peft.py LoraConfig.load_in_4bit",
    ),
    fact_of(
        Axolotl,
        "load_in_8bit",
        Value::Flag(false),
        ">= 0.18",
        "axolotl/utils/schemas/peft.py LoraConfig.load_in_8bit",
    ),
    fact_of(Axolotl, "gptq", Value::None, ">= 0.18", "axolotl/utils/schemas/peft.py LoraConfig.gptq"),
    fact_of(Axolotl, "merge_lora", Value::None, ">= 0.18", "axolotl/utils/schemas/peft.py LoraConfig.merge_lora"),
    fact_of(Axolotl, "fp16", Value::None, ">= 0.18", "axolotl/utils/schemas/config.py AxolotlInputConfig.fp16"),
    fact_of(Axolotl, "bf16", Value::Text("auto"), ">= 0.18", "axolotl/utils/schemas/config.py AxolotlInputConfig.bf16"),
    fact_of(
        Axolotl,
        "fp16_full_eval",
        Value::Flag(false),
        ">= 0.18",
        "transformers/training_args.py TrainingArguments.fp16_full_eval (passed through)",
    ),
    fact_of(
        Axolotl,
        "bf16_full_eval",
        Value::Flag(false),
        ">= 0.18",
        "transformers/training_args.py TrainingArguments.bf16_full_eval (passed through)",
    ),
    fact_of(
        Axolotl,
        "gradient_checkpointing",
        Value::Flag(false),
        ">= 0.18",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.gradient_checkpointing",
    ),
    fact_of(
        Axolotl,
        "activation_offloading",
        Value::Flag(false),
        ">= 0.18",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.activation_offloading",
    ),
    fact_of(
        Axolotl,
        "batch_size",
        Value::None,
        ">= 0.18",
        "axolotl/utils/schemas/training.py HyperparametersConfig.batch_size",
    ),
    fact_of(
        Axolotl,
        "deepspeed",
        Value::None,
        ">= 0.18",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.deepspeed",
    ),
    fact_of(Axolotl, "fsdp", Value::None, ">= 0.18", "axolotl/utils/schemas/config.py AxolotlInputConfig.fsdp"),
    fact_of(
        Axolotl,
        "fsdp_version",
        Value::Number(1.0),
        ">= 0.18",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.fsdp_version (None: FSDP1)",
    ),
    fact_of(
        Axolotl,
        "optimizer",
        Value::Text("adamw_torch_fused"),
        ">= 0.18",
        "axolotl/utils/schemas/training.py HyperparametersConfig.optimizer",
    ),
    fact_of(
        Axolotl,
        "max_memory",
        Value::None,
        ">= 0.18",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.max_memory",
    ),
    fact_of(
        Axolotl,
        "gpu_memory_limit",
        Value::None,
        ">= 0.18",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.gpu_memory_limit",
    ),
    fact_of(Axolotl, "rl", Value::None, ">= 0.18", "axolotl/utils/schemas/config.py AxolotlInputConfig.rl"),
    fact_of(Axolotl, "trl.use_vllm", Value::Flag(false), ">= 0.18", "axolotl/utils/schemas/trl.py TRLConfig.use_vllm"),
    fact_of(
        Axolotl,
        "trl.vllm_enable_sleep_mode",
        Value::Flag(false),
        ">= 0.18",
        "axolotl/utils/schemas/trl.py TRLConfig.vllm_enable_sleep_mode",
    ),
    fact(
        Axolotl,
        "micro_batch_size",
        1.0,
        ">= 0.5",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.micro_batch_size",
    ),
    fact(
        Axolotl,
        "gradient_accumulation_steps",
        1.0,
        ">= 0.5",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.gradient_accumulation_steps",
    ),
    fact(
        LitgptFinetune,
        "train.micro_batch_size",
        1.0,
        "0.5",
        "litgpt/finetune/lora.py setup(train=TrainArgs(micro_batch_size=1))",
    ),
    fact(
        LitgptFinetune,
        "train.global_batch_size",
        16.0,
        "0.5",
        "litgpt/finetune/lora.py setup(train=TrainArgs(global_batch_size=16))",
    ),
    fact(
        LitgptPretrain,
        "train.micro_batch_size",
        4.0,
        "0.5",
        "litgpt/pretrain.py setup(train=TrainArgs(micro_batch_size=4))",
    ),
    fact(
        LitgptPretrain,
        "train.global_batch_size",
        512.0,
        "0.5",
        "litgpt/pretrain.py setup(train=TrainArgs(global_batch_size=512))",
    ),
    fact(
        LitgptFinetune,
        "train.lr_warmup_steps",
        100.0,
        "0.5",
        "litgpt/finetune/lora.py setup(train=TrainArgs(lr_warmup_steps=100))",
    ),
    fact(
        LitgptPretrain,
        "train.lr_warmup_steps",
        2000.0,
        "0.5",
        "litgpt/pretrain.py setup(train=TrainArgs(lr_warmup_steps=2000))",
    ),
    fact_of(LitgptFinetune, "resume", Value::Flag(false), "0.5", "litgpt/finetune/lora.py setup(resume=False)"),
    fact_of(LitgptPretrain, "resume", Value::Flag(false), "0.5", "litgpt/pretrain.py setup(resume=False)"),
    fact_of(
        LitgptPretrain,
        "initial_checkpoint_dir",
        Value::None,
        "0.5",
        "litgpt/pretrain.py setup(initial_checkpoint_dir=None)",
    ),
    fact(Peft, "r", 8.0, ">= 0.3", "peft/tuners/lora/config.py LoraConfig.r"),
    fact(Peft, "lora_alpha", 8.0, ">= 0.3", "peft/tuners/lora/config.py LoraConfig.lora_alpha"),
    fact(Peft, "lora_dropout", 0.0, ">= 0.3", "peft/tuners/lora/config.py LoraConfig.lora_dropout"),
    fact(Unsloth, "max_seq_length", 2048.0, ">= 2024.8", "unsloth/models/loader.py FastLanguageModel.from_pretrained(max_seq_length=2048)"),
    fact(
        Unsloth,
        "gpu_memory_utilization",
        0.5,
        ">= 2025.2",
        "unsloth/models/loader.py FastLanguageModel.from_pretrained(gpu_memory_utilization=0.5)",
    ),
    fact(
        Unsloth,
        "fused_ce_target_gb",
        1.0,
        "2025.8.5 to 2025.9.0",
        "unsloth/models/llama.py CausalLM_fast_forward unsloth_fused_ce_loss(target_gb=1)",
    ),
    fact(
        Unsloth,
        "fused_ce_free_share",
        0.5,
        ">= 2025.9.1",
        "unsloth_zoo/fused_losses/cross_entropy_loss.py _get_chunk_multiplier (free_gb * 0.5)",
    ),
    fact(
        Unsloth,
        "fused_ce_target_cap_gb",
        4.0,
        ">= 2026.7.1",
        "unsloth_zoo/fused_losses/cross_entropy_loss.py _get_chunk_multiplier (min(free_gb, 4.0))",
    ),
    fact(Unsloth, "r", 16.0, ">= 2024.8", "unsloth/models/llama.py FastLlamaModel.get_peft_model(r=16)"),
    fact(Unsloth, "lora_alpha", 16.0, ">= 2024.8", "unsloth/models/llama.py FastLlamaModel.get_peft_model(lora_alpha=16)"),
    fact(Unsloth, "lora_dropout", 0.0, ">= 2024.8", "unsloth/models/llama.py FastLlamaModel.get_peft_model(lora_dropout=0.0)"),
    fact(Axolotl, "sequence_len", 512.0, ">= 0.5", "axolotl/utils/schemas/config.py AxolotlInputConfig.sequence_len"),
    fact(Axolotl, "lora_dropout", 0.0, ">= 0.5", "axolotl/utils/schemas/peft.py LoraConfig.lora_dropout"),
    fact(
        Axolotl,
        "vllm.gpu_memory_utilization",
        0.9,
        ">= 0.8",
        "axolotl/utils/schemas/vllm.py VllmConfig.gpu_memory_utilization",
    ),
    fact(LlamaFactory, "cutoff_len", 2048.0, ">= 0.8", "llamafactory/hparams/data_args.py DataArguments.cutoff_len"),
    fact(LlamaFactory, "lora_rank", 8.0, ">= 0.8", "llamafactory/hparams/finetuning_args.py LoraArguments.lora_rank"),
    fact(
        LlamaFactory,
        "lora_dropout",
        0.0,
        ">= 0.8",
        "llamafactory/hparams/finetuning_args.py LoraArguments.lora_dropout",
    ),
    fact(LitgptFinetune, "devices", 1.0, "0.5", "litgpt/finetune/lora.py setup(devices=1)"),
    fact(LitgptFinetune, "num_nodes", 1.0, "0.5", "litgpt/finetune/lora.py setup(num_nodes=1)"),
    fact(LitgptPretrain, "num_nodes", 1.0, "0.5", "litgpt/pretrain.py setup(num_nodes=1)"),
    fact(Accelerate, "num_machines", 1.0, "1.15", "accelerate/commands/config/config_args.py ClusterConfig.num_machines"),
    fact(
        Accelerate,
        "parallelism_config_dp_replicate_size",
        1.0,
        ">= 1.10",
        "accelerate/commands/launch.py launch_command_parser --parallelism_config_dp_replicate_size (default 1)",
    ),
    fact(
        Accelerate,
        "parallelism_config_dp_shard_size",
        1.0,
        ">= 1.10",
        "accelerate/commands/launch.py launch_command_parser --parallelism_config_dp_shard_size (default 1)",
    ),
    fact(
        Accelerate,
        "parallelism_config_tp_size",
        1.0,
        ">= 1.10",
        "accelerate/commands/launch.py launch_command_parser --parallelism_config_tp_size (default 1)",
    ),
    fact(
        Accelerate,
        "parallelism_config_cp_size",
        1.0,
        ">= 1.10",
        "accelerate/commands/launch.py launch_command_parser --parallelism_config_cp_size (default 1)",
    ),
    fact(
        Accelerate,
        "parallelism_config_sp_size",
        1.0,
        ">= 1.12",
        "accelerate/commands/launch.py launch_command_parser --parallelism_config_sp_size (default 1)",
    ),
    fact_of(
        Accelerate,
        "parallelism_config_sp_backend",
        Value::Text("deepspeed"),
        ">= 1.12",
        "accelerate/commands/launch.py launch_command_parser --parallelism_config_sp_backend (default deepspeed)",
    ),
    fact(
        Deepspeed,
        "gradient_accumulation_steps",
        1.0,
        "edaa7221",
        "deepspeed/runtime/config.py DeepSpeedConfig._set_batch_related_parameters (1 when only the micro batch is given)",
    ),
    fact(LitgptFinetune, "lora_r", 8.0, "0.5", "litgpt/finetune/lora.py setup(lora_r=8)"),
    fact(LitgptFinetune, "lora_alpha", 16.0, "0.5", "litgpt/finetune/lora.py setup(lora_alpha=16)"),
    fact(LitgptFinetune, "lora_dropout", 0.05, "0.5", "litgpt/finetune/lora.py setup(lora_dropout=0.05)"),
    fact(
        Accelerate,
        "num_processes",
        -1.0,
        "1.15",
        "accelerate/commands/config/config_args.py ClusterConfig.num_processes (-1: given at launch; 1 with distributed_type NO)",
    ),
    fact(
        Deepspeed,
        "zero_optimization.stage",
        0.0,
        "edaa7221",
        "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.stage",
    ),
    fact(
        Deepspeed,
        "zero_optimization.reduce_bucket_size",
        5e8,
        "edaa7221",
        "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.reduce_bucket_size",
    ),
    fact(
        Deepspeed,
        "zero_optimization.stage3_prefetch_bucket_size",
        5e7,
        "edaa7221",
        "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.prefetch_bucket_size",
    ),
    fact(
        Deepspeed,
        "zero_optimization.stage3_max_live_parameters",
        1e9,
        "edaa7221",
        "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.max_live_parameters",
    ),
    fact(
        Deepspeed,
        "zero_optimization.stage3_param_persistence_threshold",
        1e5,
        "edaa7221",
        "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.param_persistence_threshold",
    ),
];

/// The row for `key` of `framework`.
///
/// # Panics
/// When the table has no such row: a plan builder asked for a default nobody wrote down.
pub(crate) fn get(framework: Framework, key: &str) -> &'static Fact {
    let index = row(framework, key).unwrap_or_else(|| panic!("no default for {framework:?} {key} in format::facts"));
    &FACTS[index]
}

/// Whether the table has a row for `key` of `framework`.
pub(crate) fn has(framework: Framework, key: &str) -> bool {
    row(framework, key).is_some()
}

/// The row index of `key` of `framework`: plan builders ask for hundreds of defaults per
/// file, so the table is indexed once (it is a constant).
fn row(framework: Framework, key: &str) -> Option<usize> {
    type Rows = HashMap<Framework, HashMap<&'static str, usize>>;
    static INDEX: OnceLock<Rows> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut rows = Rows::default();
        for (i, fact) in FACTS.iter().enumerate() {
            rows.entry(fact.framework).or_default().insert(fact.key, i);
        }
        rows
    });
    index.get(&framework)?.get(key).copied()
}

/// How a default is described in the plan ("key=value (source)"), made once per row.
fn description(index: usize) -> &'static str {
    static DESCRIPTIONS: OnceLock<Vec<String>> = OnceLock::new();
    let all =
        DESCRIPTIONS.get_or_init(|| FACTS.iter().map(|f| format!("{}={} ({})", f.key, f.value, f.source)).collect());
    &all[index]
}

/// A numeric default.
///
/// # Panics
/// When the row is missing or holds no number.
pub(crate) fn number(framework: Framework, key: &str) -> f64 {
    match get(framework, key).value {
        Value::Number(n) => n,
        other => panic!("{framework:?} {key} is {other:?}, not a number"),
    }
}

/// A count default (batch sizes, lengths, ranks).
pub(crate) fn count(framework: Framework, key: &str) -> u64 {
    number(framework, key) as u64
}

/// A boolean default.
///
/// # Panics
/// When the row is missing or holds no boolean.
pub(crate) fn flag(framework: Framework, key: &str) -> bool {
    match get(framework, key).value {
        Value::Flag(b) => b,
        other => panic!("{framework:?} {key} is {other:?}, not a boolean"),
    }
}

/// A string default.
///
/// # Panics
/// When the row is missing or holds no string.
pub(crate) fn text(framework: Framework, key: &str) -> &'static str {
    match get(framework, key).value {
        Value::Text(t) => t,
        other => panic!("{framework:?} {key} is {other:?}, not a string"),
    }
}

/// A list-of-strings default.
///
/// # Panics
/// When the row is missing or holds no list.
pub(crate) fn texts(framework: Framework, key: &str) -> &'static [&'static str] {
    match get(framework, key).value {
        Value::Texts(t) => t,
        other => panic!("{framework:?} {key} is {other:?}, not a list"),
    }
}

/// The default of `key` as a plan value, its origin naming the key, the value and the source.
pub(crate) fn default<T>(framework: Framework, key: &str, value: T) -> Sourced<T> {
    let index = row(framework, key).unwrap_or_else(|| panic!("no default for {framework:?} {key} in format::facts"));
    Sourced::default_of(value, description(index))
}

/// A count default whose origin the builder words itself, from the row's value (so the
/// text never disagrees with the table): `count_as(Axolotl, "sequence_len", |v| format!("sequence_len={v}"))`.
pub(crate) fn count_as(framework: Framework, key: &str, describe: impl FnOnce(u64) -> String) -> Sourced<u64> {
    let value = count(framework, key);
    Sourced::default_of(value, describe(value))
}

/// A numeric default worded by the builder, as [`count_as`].
pub(crate) fn number_as(framework: Framework, key: &str, describe: impl FnOnce(f64) -> String) -> Sourced<f64> {
    let value = number(framework, key);
    Sourced::default_of(value, describe(value))
}

/// Reads settings from a document, each with its framework's default when absent.
pub(crate) struct Settings<'r, 'a>(pub(crate) &'r Reader<'a>);

impl Settings<'_, '_> {
    /// A flag read as Python tests it ([`Reader::flag`]).
    pub(crate) fn flag(&self, framework: Framework, key: &str) -> Sourced<bool> {
        self.0.flag(key).unwrap_or_else(|| default(framework, key, flag(framework, key)))
    }

    /// A boolean read strictly ([`Reader::bool`]).
    pub(crate) fn bool(&self, framework: Framework, key: &str) -> Sourced<bool> {
        self.0.bool(key).unwrap_or_else(|| default(framework, key, flag(framework, key)))
    }

    pub(crate) fn count(&self, framework: Framework, key: &str) -> Sourced<u64> {
        self.0.u64(key).unwrap_or_else(|| default(framework, key, count(framework, key)))
    }

    pub(crate) fn number(&self, framework: Framework, key: &str) -> Sourced<f64> {
        self.0.f64(key).unwrap_or_else(|| default(framework, key, number(framework, key)))
    }

    pub(crate) fn text(&self, framework: Framework, key: &str) -> Sourced<String> {
        self.text_of(framework, &[key])
    }

    /// The first of `keys` the file sets (a key and its old names), else the first's default.
    pub(crate) fn text_of(&self, framework: Framework, keys: &[&str]) -> Sourced<String> {
        let key = keys.first().copied().unwrap_or_default();
        self.0.first(keys, |r, k| r.str(k)).unwrap_or_else(|| default(framework, key, text(framework, key).to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source of every rule, their shared helpers and the estimator.
    fn readers_of_the_plan() -> Vec<(&'static str, &'static str)> {
        let mut sources: Vec<(&str, &str)> = crate::rules::RULES.iter().map(|r| (r.name, r.source)).collect();
        sources.extend([
            ("rules/support.rs", include_str!("../rules/support.rs")),
            ("estimate/setup.rs", include_str!("../estimate/setup.rs")),
            ("estimate/activations.rs", include_str!("../estimate/activations.rs")),
            ("estimate/generation.rs", include_str!("../estimate/generation.rs")),
            ("estimate/levers.rs", include_str!("../estimate/levers.rs")),
            ("estimate/mod.rs", include_str!("../estimate/mod.rs")),
        ]);
        sources
    }

    #[test]
    fn rules_and_the_estimator_apply_no_default_of_their_own() {
        // A key read from the file and defaulted to a literal on the same line:
        // `set("per_device_train_batch_size").unwrap_or(8)`.
        let mut offenders = Vec::new();
        for (file, source) in readers_of_the_plan() {
            for (n, line) in source.lines().enumerate() {
                let defaults = ["unwrap_or(", "map_or("]
                    .iter()
                    .any(|d| line.split(d).skip(1).any(|rest| rest.starts_with(|c: char| c.is_ascii_digit())));
                if !defaults {
                    continue;
                }
                let reads_a_fact_key = FACTS.iter().any(|fact| {
                    let leaf = fact.key.rsplit('.').next().unwrap_or(fact.key);
                    [fact.key, leaf].iter().any(|key| reads_key(line, key))
                });
                if reads_a_fact_key {
                    offenders.push(format!("{file}:{}: {}", n + 1, line.trim()));
                }
            }
        }
        assert!(offenders.is_empty(), "read these defaults from the plan (format::facts):\n{}", offenders.join("\n"));
    }

    /// Whether `line` reads `key` from the file (not as an argument to this table's lookups).
    fn reads_key(line: &str, key: &str) -> bool {
        let quoted = format!("\"{key}\"");
        line.match_indices(&quoted).any(|(at, _)| !line[..at].trim_end().ends_with(','))
    }

    #[test]
    fn the_check_above_can_fail() {
        assert!(reads_key(
            "per_device: set(\"per_device_train_batch_size\").unwrap_or(8),",
            "per_device_train_batch_size"
        ));
        assert!(!reads_key("x.map_or(facts::count(TrlGrpo, \"num_generations\"), |v| v)", "num_generations"));
    }

    #[test]
    fn each_key_has_one_row_per_framework_and_a_source() {
        for (i, a) in FACTS.iter().enumerate() {
            assert!(a.source.contains('/') && !a.releases.is_empty(), "{a:?}");
            assert!(!FACTS[i + 1..].iter().any(|b| b.framework == a.framework && b.key == a.key), "{a:?} twice");
        }
    }
}
