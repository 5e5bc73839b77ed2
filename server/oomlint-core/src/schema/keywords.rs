//! The keyword arguments each recognized call accepts, with their documentation (for
//! completion). Config classes take theirs from the embedded schema of their format —
//! the `TrainingArguments` fields and the TRL config's own, without the `ModelConfig`,
//! script and `accelerate launch` keys a TRL CLI YAML also takes. The other calls have no
//! schema: their keywords are tabled here from the framework's signature.

use super::{properties_at, PropertyDoc};
use crate::format::python::Callee;
use crate::format::Format;

/// The keyword arguments `callee` accepts (not deprecated ones), in the order shown.
pub fn keywords(callee: Callee) -> Vec<PropertyDoc> {
    let (table, source) = match callee {
        Callee::TrainingArguments => return config(Format::Transformers),
        Callee::SftConfig => return config(Format::TrlSft),
        Callee::GrpoConfig => return config(Format::TrlGrpo),
        Callee::DpoConfig => return config(Format::TrlDpo),
        Callee::UnslothFromPretrained => (UNSLOTH_FROM_PRETRAINED, "unsloth/models/loader.py"),
        Callee::UnslothGetPeftModel => (UNSLOTH_GET_PEFT_MODEL, "unsloth/models/llama.py"),
        Callee::HfFromPretrained => (HF_FROM_PRETRAINED, "transformers/modeling_utils.py"),
        Callee::LoraConfig => (LORA_CONFIG, "peft/tuners/lora/config.py"),
        Callee::GetPeftModel => (GET_PEFT_MODEL, "peft/mapping_func.py"),
        Callee::BitsAndBytesConfig => (BITS_AND_BYTES, "transformers/utils/quantization_config.py"),
        // No schema of their own: their `TrainingArguments` fields are the transformers schema's.
        Callee::PreferenceConfig(_) => return config(Format::Transformers),
        Callee::SftTrainer
        | Callee::GrpoTrainer
        | Callee::DpoTrainer
        | Callee::PreferenceTrainer(_)
        | Callee::Trainer
        | Callee::SentenceTransformer
        | Callee::PeftFromPretrained => return Vec::new(),
    };
    table
        .iter()
        .map(|&(name, default, description)| PropertyDoc {
            name: name.to_string(),
            title: None,
            description: Some(description.to_string()),
            default: serde_json::from_str(default).ok(),
            enum_values: Vec::new(),
            source: Some(source.to_string()),
            deprecated: false,
        })
        .collect()
}

/// A config class's own keyword arguments from its format's schema.
fn config(format: Format) -> Vec<PropertyDoc> {
    properties_at(format, &[])
        .into_iter()
        .filter(|p| !p.deprecated)
        .filter(|p| {
            p.source.as_deref().is_some_and(|s| {
                s == "transformers/training_args.py"
                    || (s.starts_with("trl/trainer/") && s != "trl/trainer/model_config.py")
            })
        })
        .collect()
}

/// (keyword, default as JSON, description).
type Table = &'static [(&'static str, &'static str, &'static str)];

/// `FastLanguageModel.from_pretrained` / `FastModel.from_pretrained`.
const UNSLOTH_FROM_PRETRAINED: Table = &[
    ("model_name", "\"unsloth/Llama-3.2-1B-Instruct\"", "Hub name or local path of the model."),
    ("max_seq_length", "2048", "Longest sequence the model is set up for; SFT's length when the config sets none."),
    ("dtype", "null", "Compute dtype; None picks bfloat16 where supported, else float16."),
    ("load_in_4bit", "true", "4-bit QLoRA weights (bitsandbytes NF4). True by default: turn it off for 8- or 16-bit."),
    ("load_in_8bit", "false", "8-bit LoRA weights; needs `load_in_4bit=False`."),
    ("load_in_16bit", "false", "16-bit LoRA weights; needs `load_in_4bit=False`."),
    ("load_in_fp8", "false", "FP8 LoRA weights (`True`, `\"block\"`); not with 4-, 8- or 16-bit loading."),
    ("full_finetuning", "false", "Train every parameter; turns 4-bit and 8-bit loading off."),
    ("fast_inference", "false", "Start vLLM in the process for generation; it shares the base weights."),
    (
        "gpu_memory_utilization",
        "0.5",
        "vLLM's share of the GPU memory free when it starts (with `fast_inference=True`).",
    ),
    ("max_lora_rank", "64", "Largest LoRA rank vLLM serves (with `fast_inference=True`)."),
    ("float8_kv_cache", "false", "FP8 KV cache in vLLM."),
    ("use_gradient_checkpointing", "\"unsloth\"", "`\"unsloth\"` offloads checkpointed activations to the CPU."),
    ("device_map", "\"sequential\"", "Device placement of the weights."),
    ("token", "null", "Hugging Face token for gated models."),
    ("trust_remote_code", "false", "Run the model repository's own code."),
    ("qat_scheme", "null", "Quantization-aware training scheme (with `full_finetuning=True`)."),
];

/// `FastLanguageModel.get_peft_model`.
const UNSLOTH_GET_PEFT_MODEL: Table = &[
    ("r", "16", "LoRA rank."),
    (
        "target_modules",
        "[\"q_proj\", \"k_proj\", \"v_proj\", \"o_proj\", \"gate_proj\", \"up_proj\", \"down_proj\"]",
        "Modules that get adapters.",
    ),
    ("lora_alpha", "16", "LoRA scaling numerator (scale = alpha / r)."),
    ("lora_dropout", "0.0", "Dropout on the adapter input; 0 keeps Unsloth's fast path."),
    ("bias", "\"none\"", "Which biases train."),
    ("use_gradient_checkpointing", "\"unsloth\"", "`\"unsloth\"` offloads checkpointed activations to the CPU."),
    ("random_state", "3407", "Seed of the adapter initialization."),
    ("use_rslora", "false", "Rank-stabilized LoRA (scale = alpha / sqrt(r))."),
    ("modules_to_save", "null", "Modules trained in full next to the adapters."),
    ("loftq_config", "{}", "LoftQ initialization."),
];

/// `AutoModelForCausalLM.from_pretrained` (the keywords oomlint reads, and the common ones).
const HF_FROM_PRETRAINED: Table = &[
    ("pretrained_model_name_or_path", "null", "Hub name or local path of the model."),
    ("dtype", "\"auto\"", "Load dtype (transformers 5; `torch_dtype` before), `\"auto\"` reads the checkpoint's."),
    ("torch_dtype", "null", "Old name of `dtype`."),
    ("quantization_config", "null", "A `BitsAndBytesConfig` (or another quantization config)."),
    ("attn_implementation", "null", "`\"eager\"`, `\"sdpa\"`, `\"flash_attention_2\"`, …"),
    ("device_map", "null", "Device placement of the weights (`\"auto\"` spreads them)."),
    ("trust_remote_code", "false", "Run the model repository's own code."),
    ("revision", "\"main\"", "Branch, tag or commit of the repository."),
    ("low_cpu_mem_usage", "null", "Load without a full copy in CPU memory."),
];

/// PEFT `LoraConfig`.
const LORA_CONFIG: Table = &[
    ("r", "8", "LoRA rank."),
    ("lora_alpha", "8", "LoRA scaling numerator (scale = alpha / r)."),
    ("lora_dropout", "0.0", "Dropout on the adapter input."),
    ("target_modules", "null", "Modules that get adapters (`\"all-linear\"` for every linear layer)."),
    ("bias", "\"none\"", "Which biases train."),
    ("task_type", "null", "`\"CAUSAL_LM\"` for language models."),
    ("use_rslora", "false", "Rank-stabilized LoRA (scale = alpha / sqrt(r))."),
    ("use_dora", "false", "Weight-decomposed LoRA (DoRA)."),
    ("modules_to_save", "null", "Modules trained in full next to the adapters."),
    ("init_lora_weights", "true", "Adapter initialization."),
    ("layers_to_transform", "null", "Only these layer indices get adapters."),
];

/// `peft.get_peft_model`.
const GET_PEFT_MODEL: Table = &[
    ("model", "null", "The model to wrap."),
    ("peft_config", "null", "The adapter configuration (`LoraConfig(...)`)."),
    ("adapter_name", "\"default\"", "Name of the adapter."),
    ("autocast_adapter_dtype", "true", "Keep float16/bfloat16 adapter weights in float32."),
];

/// transformers `BitsAndBytesConfig`.
const BITS_AND_BYTES: Table = &[
    ("load_in_4bit", "false", "4-bit weights (`bnb_4bit_quant_type`)."),
    ("load_in_8bit", "false", "8-bit LLM.int8() weights."),
    ("bnb_4bit_quant_type", "\"fp4\"", "`\"nf4\"` or `\"fp4\"`."),
    ("bnb_4bit_use_double_quant", "false", "Quantize the quantization constants too (saves ~0.4 bit per weight)."),
    ("bnb_4bit_compute_dtype", "null", "Dtype of the matmuls (float32 when unset)."),
    ("bnb_4bit_quant_storage", "null", "Storage dtype of the packed 4-bit weights."),
    ("llm_int8_threshold", "6.0", "Outlier threshold of LLM.int8()."),
    ("llm_int8_skip_modules", "null", "Modules left unquantized."),
    ("llm_int8_enable_fp32_cpu_offload", "false", "Offload parts to the CPU in float32."),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn names(callee: Callee) -> Vec<String> {
        keywords(callee).into_iter().map(|p| p.name).collect()
    }

    #[test]
    fn configs_take_their_own_fields_from_the_schema() {
        let sft = names(Callee::SftConfig);
        assert!(sft.iter().any(|n| n == "per_device_train_batch_size"), "TrainingArguments fields");
        assert!(sft.iter().any(|n| n == "packing"), "SFTConfig fields");
        assert!(!sft.iter().any(|n| n == "lora_r" || n == "model_name_or_path"), "ModelConfig keys are not kwargs");
        assert!(!sft.iter().any(|n| n == "max_seq_length"), "removed keys are not offered");
        assert!(names(Callee::GrpoConfig).iter().any(|n| n == "num_generations"));
        assert!(!names(Callee::TrainingArguments).iter().any(|n| n == "packing"));
    }

    #[test]
    fn tables_parse_their_defaults() {
        for callee in [
            Callee::UnslothFromPretrained,
            Callee::UnslothGetPeftModel,
            Callee::HfFromPretrained,
            Callee::LoraConfig,
            Callee::GetPeftModel,
            Callee::BitsAndBytesConfig,
        ] {
            let docs = keywords(callee);
            assert!(!docs.is_empty());
            assert!(docs.iter().all(|d| d.default.is_some()), "{callee:?}: a default is not JSON");
        }
        let four = keywords(Callee::UnslothFromPretrained).into_iter().find(|d| d.name == "load_in_4bit").unwrap();
        assert_eq!(four.default, Some(Value::Bool(true)));
    }
}
