//! Names the Hugging Face stack gives the same things in every trainer format: `optim` values
//! (transformers `OptimizerNames`), PEFT `target_modules`, and `attn_implementation` values.
//! TRL, Axolotl, LLaMA-Factory and Python scripts all hand them to transformers/PEFT, so one
//! mapping serves them all.
//!
//! Sources: transformers `training_args.py` (`OptimizerNames`), PEFT `tuners/tuners_utils.py`
//! (`check_target_module_exists`: a string is a full-match regex, a list matches name suffixes),
//! transformers `modeling_utils.py` (attention implementations, hub kernels `org/name`).

use crate::plan::{Attention, LoraTargets, Optimizer};

/// A transformers `optim` name (or an Axolotl custom optimizer) as its state family.
pub(crate) fn optimizer_kind(name: &str) -> Optimizer {
    match name.trim().to_ascii_lowercase().as_str() {
        "adamw_torch_fused" | "adamw_torch_npu_fused" | "adamw_apex_fused" => Optimizer::AdamWFused,
        "adamw_torch" | "adamw_hf" | "adamw_torch_xla" | "adamw_anyprecision" | "optimi_adamw" | "adam" | "adamw" => {
            Optimizer::AdamW
        }
        "adamw_bnb_8bit" | "adamw_8bit" | "adamw_torch_8bit" | "ao_adamw_8bit" => Optimizer::AdamW8bit,
        "paged_adamw_32bit" | "paged_adamw" => Optimizer::PagedAdamW,
        "paged_adamw_8bit" => Optimizer::PagedAdamW8bit,
        "adafactor" => Optimizer::Adafactor,
        "sgd" => Optimizer::Sgd,
        "lion_8bit" | "paged_lion_8bit" => Optimizer::Lion8bit,
        "lion_32bit" | "paged_lion_32bit" => Optimizer::Lion,
        _ => Optimizer::Other(name.to_string()),
    }
}

/// The module names a PEFT target matches: the last path segment of a name, or every
/// `x_proj` a regex pattern spells out (`self_attn.(q|k|v|o)_proj` gives four).
fn module_leaves(pattern: &str) -> Vec<String> {
    let lower = pattern.to_ascii_lowercase();
    let mut leaves = Vec::new();
    for (at, _) in lower.match_indices("_proj") {
        let before = &lower[..at];
        if let Some(group) = before.strip_suffix(')') {
            if let Some(open) = group.rfind('(') {
                leaves.extend(group[open + 1..].split('|').map(|alt| format!("{alt}_proj")));
            }
        } else {
            let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            leaves.push(format!("{}_proj", &before[start..]));
        }
    }
    if leaves.is_empty() {
        let leaf = lower.rsplit(['.', '*', '|', '(', ')', '$', '^', '\\']).find(|s| !s.is_empty());
        leaves.push(leaf.unwrap_or(&lower).to_string());
    }
    leaves
}

/// PEFT target module names (or regex patterns) as framework-neutral targets; `all-linear`
/// covers every linear layer but the head.
pub(crate) fn lora_targets(names: &[String]) -> LoraTargets {
    let mut t = LoraTargets { names: names.to_vec(), ..LoraTargets::default() };
    // PEFT matches a dotted name against the end of a module's path: `shared_expert.gate_proj`
    // adapts the shared expert only, and `vision_adapter.mlp.fc1` the vision tower only, whose
    // adapters the decoder's count leaves out.
    let (mut mlp_shared, mut mlp_any) = (false, false);
    for name in names {
        let lower = name.to_ascii_lowercase();
        if matches!(lower.as_str(), "all-linear" | "all_linear" | "all") {
            t = LoraTargets { names: names.to_vec(), ..LoraTargets::all_linear() };
            mlp_any = true;
            continue;
        }
        if lower.contains("vision") || lower.contains("visual") {
            continue;
        }
        let mut names_mlp = false;
        for leaf in module_leaves(name) {
            match leaf.as_str() {
                "q_proj" | "query" | "q" | "wq" => t.query = true,
                "k_proj" | "key" | "k" | "wk" => t.key = true,
                "v_proj" | "value" | "v" | "wv" => t.value = true,
                "qkv_proj" | "c_attn" | "query_key_value" | "wqkv" | "w_pack" => {
                    (t.query, t.key, t.value) = (true, true, true);
                }
                "o_proj" | "out_proj" | "wo" | "dense" => t.output = true,
                // GPT-2 names both the attention output and the MLP output `c_proj`.
                "c_proj" => (t.output, t.mlp_down, names_mlp) = (true, true, true),
                "gate_proj" | "w1" => (t.mlp_gate, names_mlp) = (true, true),
                "up_proj" | "w3" | "c_fc" | "fc1" | "dense_h_to_4h" => (t.mlp_up, names_mlp) = (true, true),
                "gate_up_proj" => (t.mlp_gate, t.mlp_up, names_mlp) = (true, true, true),
                "down_proj" | "w2" | "fc2" | "dense_4h_to_h" => (t.mlp_down, names_mlp) = (true, true),
                "lm_head" => t.lm_head = true,
                _ => {}
            }
        }
        if names_mlp {
            if lower.contains("shared_expert") {
                mlp_shared = true;
            } else {
                mlp_any = true;
            }
        }
    }
    t.shared_expert_only = mlp_shared && !mlp_any;
    t
}

/// `attn_implementation` values; memory-efficient kernels (xformers, SageAttention, hub
/// kernels like `kernels-community/vllm-flash-attn3`) count as flash attention.
pub(crate) fn attention_kind(name: &str) -> Option<Attention> {
    Some(match name.trim().to_ascii_lowercase().as_str() {
        "eager" => Attention::Eager,
        "sdpa" | "fp8" => Attention::Sdpa,
        "flex_attention" => Attention::Flex,
        "flash_attention_2" | "flash_attention_3" | "xformers" | "sage" => Attention::Flash,
        other if other.contains('/') || other.starts_with("paged|") => Attention::Flash,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lora_target_names_and_patterns() {
        let t = lora_targets(&names(&["gate_proj", "up_proj", "down_proj", "model.layers.*.self_attn.q_proj"]));
        assert!(t.mlp_gate && t.mlp_up && t.mlp_down && t.query && !t.key);
        let regex =
            lora_targets(&names(&[r"model.language_model.layers.[\d]+.(mlp|self_attn).(up|down|gate|q|k|v|o)_proj"]));
        assert!(regex.query && regex.key && regex.value && regex.output && regex.mlp_gate && regex.mlp_down);
        let layers = lora_targets(&names(&[r".*\.layers\.(3|7)\.self_attn\.(q|k)_proj|.*\.mlp\.(gate|up)_proj"]));
        assert!(layers.query && layers.key && !layers.value && layers.mlp_gate && layers.mlp_up && !layers.mlp_down);
        assert!(lora_targets(&names(&["shared_expert.gate_up_proj"])).mlp_up);
        let shared = lora_targets(&names(&["q_proj", "shared_expert.gate_proj", "shared_expert.down_proj"]));
        assert!(shared.shared_expert_only && shared.mlp_gate && shared.mlp_down);
        assert!(!lora_targets(&names(&["shared_expert.gate_proj", "up_proj"])).shared_expert_only);
        // An unqualified name after a qualified one of the same leaf adapts every expert too.
        assert!(!lora_targets(&names(&["shared_expert.gate_proj", "gate_proj"])).shared_expert_only);
        assert!(!lora_targets(&names(&["gate_proj", "up_proj"])).shared_expert_only);
        // The vision tower's adapters are not the decoder's MLP.
        let vision = lora_targets(&names(&["q_proj", "vision_adapter.mlp.fc1", "vision_adapter.mlp.fc2"]));
        assert!(vision.query && !vision.mlp_up && !vision.mlp_down);
        assert_eq!(lora_targets(&names(&["all-linear"])).names, vec!["all-linear".to_string()]);
        assert!(lora_targets(&names(&["all"])).mlp_down);
        let fused = lora_targets(&names(&["Wqkv", "query_key_value"]));
        assert!(fused.query && fused.key && fused.value && !fused.output);
        let gpt2 = lora_targets(&names(&["c_attn", "c_proj", "c_fc"]));
        assert!(gpt2.query && gpt2.output && gpt2.mlp_up && gpt2.mlp_down && !gpt2.mlp_gate);
    }

    #[test]
    fn optimizer_names() {
        assert_eq!(optimizer_kind("adamw_bnb_8bit"), Optimizer::AdamW8bit);
        assert_eq!(optimizer_kind("adamw_apex_fused"), Optimizer::AdamWFused);
        assert_eq!(optimizer_kind("ADAMW_TORCH"), Optimizer::AdamW);
        assert_eq!(optimizer_kind("paged_adamw_8bit"), Optimizer::PagedAdamW8bit);
        assert_eq!(optimizer_kind("muon"), Optimizer::Other("muon".into()));
    }

    #[test]
    fn attention_names() {
        assert_eq!(attention_kind("kernels-community/vllm-flash-attn3"), Some(Attention::Flash));
        assert_eq!(attention_kind("flash_attention_2"), Some(Attention::Flash));
        assert_eq!(attention_kind("paged|flash_attention_2"), Some(Attention::Flash));
        assert_eq!(attention_kind("sdpa"), Some(Attention::Sdpa));
        assert_eq!(attention_kind("flash"), None);
    }
}

/// What a model is when it is not a decoder language model, from its loader's class (or
/// Unsloth's `auto_model=`) and its name: oomlint's estimate models a causal language
/// model's training step (its weights, LoRA, optimizer, activations per token and the
/// logits over the vocabulary), which does not describe these. None for anything else.
pub(crate) fn not_a_decoder(class: Option<&str>, name: &str) -> Option<&'static str> {
    if let Some(class) = class {
        let heads: [(&str, &str); 9] = [
            ("SequenceClassification", "a sequence-classification model (a classifier head, no language-model logits)"),
            ("TokenClassification", "a token-classification model (a classifier head, no language-model logits)"),
            ("QuestionAnswering", "a question-answering model (a span head, no language-model logits)"),
            ("MultipleChoice", "a multiple-choice model (a classifier head, no language-model logits)"),
            ("MaskedLM", "a masked-language model (a bidirectional encoder)"),
            ("SpeechSeq2Seq", "a speech encoder-decoder model"),
            ("CTC", "a speech-recognition encoder"),
            ("AudioClassification", "an audio-classification model"),
            ("Seq2SeqLM", "an encoder-decoder model"),
        ];
        if let Some((_, what)) = heads.iter().find(|(part, _)| class.contains(part)) {
            return Some(what);
        }
        let families: [(&str, &str); 3] = [
            ("Whisper", "a speech encoder-decoder model (Whisper)"),
            ("Csm", "a speech model (Sesame CSM: a backbone and an audio decoder)"),
            ("SentenceTransformer", "a sentence-transformers embedding model"),
        ];
        if let Some((_, what)) = families.iter().find(|(prefix, _)| class.starts_with(prefix)) {
            return Some(what);
        }
    }
    let leaf = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    let tokens: Vec<&str> = leaf.split(['-', '_', '.']).collect();
    let any = |test: &dyn Fn(&str) -> bool| tokens.iter().any(|t| test(t));
    if any(&|t| t.starts_with("whisper")) {
        Some("a speech encoder-decoder model (Whisper)")
    } else if any(&|t| t == "csm") {
        Some("a speech model (Sesame CSM: a backbone and an audio decoder)")
    } else if any(&|t| t.starts_with("diffusion")) {
        Some("a diffusion model (DiffusionGemma denoises blocks of tokens, not the next token)")
    } else if any(&|t| ["snac", "xcodec", "xcodec2", "bicodec", "wavtokenizer", "encodec"].contains(&t)) {
        Some("an audio codec")
    } else if any(&|t| {
        t.starts_with("embedding")
            || t.ends_with("embedding")
            || t.contains("minilm")
            || t.contains("mpnet")
            || ["e5", "gte", "bge"].contains(&t)
    }) {
        Some("an embedding model")
    } else if any(&|t| t.ends_with("bert") || t.ends_with("berta") || t == "electra") {
        Some("a BERT-style bidirectional encoder")
    } else {
        None
    }
}

#[cfg(test)]
mod decoder_tests {
    use super::not_a_decoder;

    #[test]
    fn encoders_speech_and_embedding_models_are_named() {
        assert!(not_a_decoder(None, "org/ModernBERT-large").is_some_and(|w| w.contains("BERT")));
        assert!(not_a_decoder(Some("AutoModelForSpeechSeq2Seq"), "org/some-asr").is_some_and(|w| w.contains("speech")));
        assert!(not_a_decoder(Some("AutoModelForSequenceClassification"), "org/Llama-3-8B").is_some());
        assert!(not_a_decoder(Some("FastModel"), "openai/whisper-large-v3").is_some());
        assert!(not_a_decoder(None, "org/embeddinggemma-300m").is_some_and(|w| w.contains("embedding")));
        assert_eq!(not_a_decoder(Some("AutoModelForCausalLM"), "org/Llama-3.2-1B"), None);
        assert_eq!(not_a_decoder(None, "org/orpheus-3b-0.1-ft"), None, "a Llama decoder that speaks in codec tokens");
        assert!(not_a_decoder(None, "unsloth/diffusiongemma-26B-A4B-it").is_some_and(|w| w.contains("diffusion")));
        assert_eq!(not_a_decoder(Some("Qwen2VLForConditionalGeneration"), "Qwen/Qwen2-VL-7B-Instruct"), None);
        assert_eq!(
            not_a_decoder(None, "org/Liberty-7B"),
            None,
            "a name that only contains the letters of an encoder's"
        );
        assert!(not_a_decoder(None, "intfloat/multilingual-e5-large").is_some());
    }
}
