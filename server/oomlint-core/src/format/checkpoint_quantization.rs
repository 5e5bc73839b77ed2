//! A pre-quantized checkpoint loads quantized whatever the config says: transformers reads the
//! `quantization_config` of its config.json (`PreTrainedModel.from_pretrained` →
//! `AutoHfQuantizer.from_config`, `transformers/quantizers/auto.py`) and builds bitsandbytes,
//! GPTQ, AWQ or FP8 linears. oomlint knows it from a local checkpoint's `quant_method`, else
//! from the names the hubs' quantized uploads carry (`…-bnb-4bit`, `…-bnb-nf4`, `…-AWQ`, `…-GPTQ-Int4`,
//! `…-GPTQ-Int8`, `…-FP8`). A quantization the file asks for itself is kept.

use crate::catalog::Architecture;
use crate::plan::{Plan, Quantization, Sourced};

/// Sets the plan's quantization to what the checkpoint stores, when the file sets none.
pub(crate) fn apply(plan: &mut Plan, arch: Option<&Architecture>) {
    if plan.quantization.as_ref().is_some_and(|q| q.value.is_some()) {
        return;
    }
    let Some(model) = plan.model.as_ref() else { return };
    let stored = match arch.and_then(|a| a.checkpoint_quantization.as_deref()) {
        Some(method) => {
            from_quant_method(method).map(|q| (q, format!("the checkpoint's quantization_config ({method})")))
        }
        None => {
            from_name(&model.value.name).map(|(q, kind)| (q, format!("a pre-quantized {kind} checkpoint, by its name")))
        }
    };
    if let Some((quantization, why)) = stored {
        plan.quantization = Some(Sourced::derived(Some(quantization), why));
    }
}

/// `quantization_config.quant_method` → what the weights are stored as.
fn from_quant_method(method: &str) -> Option<Quantization> {
    match method.to_ascii_lowercase().as_str() {
        "bitsandbytes" => Some(Quantization::Nf4 { double_quant: true }),
        "gptq" => Some(Quantization::Gptq { bits: 4 }),
        "awq" => Some(Quantization::Awq),
        "fp8" | "fbgemm_fp8" => Some(Quantization::Fp8),
        _ => None,
    }
}

/// The quantization a hub name announces, and its kind in words.
fn from_name(name: &str) -> Option<(Quantization, &'static str)> {
    let name = name.trim_end_matches('/').to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or_default();
    let words: Vec<&str> = name.split(['-', '_', '.']).collect();
    let has = |word: &str| words.contains(&word);
    if name.contains("bnb-4bit") || name.contains("bnb_4bit") {
        Some((Quantization::Nf4 { double_quant: true }, "bitsandbytes 4-bit"))
    } else if name.contains("bnb-nf4") {
        // axolotl-quants' uploads name the data type, not whether the scales are quantized too.
        Some((Quantization::Nf4 { double_quant: false }, "bitsandbytes NF4"))
    } else if has("awq") {
        Some((Quantization::Awq, "AWQ 4-bit"))
    } else if has("gptq") {
        let eight = has("int8") || has("8bit");
        Some((Quantization::Gptq { bits: if eight { 8 } else { 4 } }, if eight { "GPTQ 8-bit" } else { "GPTQ 4-bit" }))
    } else if has("fp8") {
        Some((Quantization::Fp8, "FP8"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::from_name;
    use crate::plan::Quantization;

    #[test]
    fn hub_names_announce_how_weights_are_stored() {
        let q = |name: &str| from_name(name).map(|(q, _)| q);
        assert_eq!(q("unsloth/Qwen2.5-7B-Instruct-bnb-4bit"), Some(Quantization::Nf4 { double_quant: true }));
        assert_eq!(q("unsloth/llama-3-8b-Instruct-unsloth-bnb-4bit"), Some(Quantization::Nf4 { double_quant: true }));
        assert_eq!(q("Qwen/Qwen2.5-7B-Instruct-AWQ"), Some(Quantization::Awq));
        assert_eq!(q("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"), Some(Quantization::Gptq { bits: 4 }));
        assert_eq!(q("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8"), Some(Quantization::Gptq { bits: 8 }));
        assert_eq!(q("TheBloke/Llama-2-7B-GPTQ"), Some(Quantization::Gptq { bits: 4 }));
        assert_eq!(q("Qwen/Qwen3-8B-FP8"), Some(Quantization::Fp8));
        assert_eq!(
            q("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16"),
            Some(Quantization::Nf4 { double_quant: false })
        );
        for plain in ["Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B", "gptqmodel-fan/awqward-7b", "org/fp8x-1b"]
        {
            assert_eq!(q(plain), None, "{plain}");
        }
    }
}
