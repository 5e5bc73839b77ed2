//! Parameter counts from the architecture's shapes, and the bytes a quantized parameter takes
//! (the weights component is assembled in `phases`).

use super::context::Implementation;
use crate::catalog::{Architecture, MlpKind};
use crate::plan::Quantization;

/// Parameter counts by kind of tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParamCounts {
    /// Token embedding rows × width.
    pub(crate) embedding: u64,
    /// Separate output head (0 when tied to the embedding).
    pub(crate) head: u64,
    /// Linear weights inside the decoder blocks (what 4-bit and 8-bit quantization replaces).
    pub(crate) block_linear: u64,
    /// Norm weights and biases (stay 16-bit).
    pub(crate) small: u64,
    /// The largest single linear weight in a block (the dequantization temporary).
    pub(crate) largest_linear: u64,
    pub(crate) total: u64,
}

/// Rows of the embedding and head: the padded vocabulary, which LitGPT builds and which is
/// the Hugging Face config's `vocab_size` (the tokenizer's own vocabulary is smaller).
pub(super) fn vocab_rows(arch: &Architecture) -> u64 {
    arch.padded_vocab_size.max(arch.vocab_size)
}

pub(super) fn q_width(arch: &Architecture) -> u64 {
    arch.n_head * arch.head_size
}

pub(super) fn kv_width(arch: &Architecture) -> u64 {
    arch.n_query_groups.max(1) * arch.head_size
}

/// Mamba-2 mixer inner width and `in_proj` output width, from the catalog's mixer dimensions
/// (every hybrid entry records them; a mixer without them contributes nothing).
pub(super) fn mamba_dims(arch: &Architecture) -> (u64, u64) {
    arch.mamba.map_or((0, 0), |m| (m.inner_size(), m.in_proj_size()))
}

/// Width of the query projection's output (with the output gate where `q_proj` makes one).
fn q_proj_width(arch: &Architecture) -> u64 {
    if arch.attn_output_gate {
        2 * q_width(arch)
    } else {
        q_width(arch)
    }
}

/// Parameters of one attention block's linears (`global`: a Gemma 4 full-attention layer).
fn attention_linear(arch: &Architecture, global: bool) -> u64 {
    match &arch.mla {
        Some(mla) => mla.linear_parameters(arch.n_embd, arch.n_head),
        None => arch.attention_linear_parameters(global),
    }
}

/// Parameters of one MLP (all experts for MoE).
fn mlp_linear(arch: &Architecture) -> u64 {
    let h = arch.n_embd;
    match arch.mlp {
        MlpKind::Gelu => 2 * h * arch.intermediate_size,
        MlpKind::Swiglu | MlpKind::Geglu => 3 * h * arch.intermediate_size,
        MlpKind::Moe => {
            let shared = arch.shared_expert_intermediate_size.map_or(0, |w| arch.expert_matrices() * h * w);
            let gate = if arch.shared_expert_gate { h } else { 0 };
            routed_experts_per_layer(arch) + h * arch.n_expert + shared + gate
        }
    }
}

/// The routed experts' linear parameters (every MoE layer's `n_expert` gated MLPs).
pub(super) fn routed_expert_parameters(arch: &Architecture) -> u64 {
    if arch.mlp != MlpKind::Moe {
        return 0;
    }
    let moe_layers = arch.mlp_layer_count().saturating_sub(arch.dense_mlp_layer_count());
    moe_layers * routed_experts_per_layer(arch)
}

/// One MoE layer's `n_expert` gated MLPs.
fn routed_experts_per_layer(arch: &Architecture) -> u64 {
    arch.n_expert * arch.expert_matrices() * arch.n_embd * arch.expert_intermediate_size()
}

pub(super) fn count(arch: &Architecture, implementation: Implementation) -> ParamCounts {
    let h = arch.n_embd;
    let rows = vocab_rows(arch);
    // The per-layer embedding table is an embedding too: loaded in the load dtype and never
    // quantized (bitsandbytes replaces `nn.Linear` only).
    let embedding = rows * h + arch.per_layer_embedding_parameters();
    let tied = arch.tie_word_embeddings && implementation != Implementation::Litgpt;
    let head = if tied { 0 } else { rows * h };
    let mamba_layers = arch.n_mamba_layers.min(arch.n_layer);
    let attention_layers = arch.attention_layer_count();
    let mamba_linear = arch.mamba.map_or(0, |m| m.linear_parameters(h));
    let dense_layers = arch.dense_mlp_layer_count();
    let global_layers = arch.global_attention_layer_count().min(attention_layers);
    let mlp_layers = arch.mlp_layer_count().min(arch.n_layer);
    let wide_layers = arch.double_wide_mlp_layer_count().min(mlp_layers.saturating_sub(dense_layers));
    let block_linear = (attention_layers - global_layers) * attention_linear(arch, false)
        + global_layers * attention_linear(arch, true)
        + mamba_layers * mamba_linear
        + mlp_layers.saturating_sub(dense_layers + wide_layers) * mlp_linear(arch)
        + wide_layers * 6 * h * arch.intermediate_size
        + dense_layers * 3 * h * arch.intermediate_size
        + arch.per_layer_linear_parameters();
    let bias = if arch.bias || arch.attn_bias { q_proj_width(arch) + 2 * kv_width(arch) } else { 0 };
    let latent_norms = arch.mla.map_or(0, |m| m.norm_parameters());
    // A vision or audio tower stays in 16-bit: quantizing loaders skip it. LitGPT converts the
    // text decoder alone (`litgpt/scripts/convert_hf_checkpoint.py` `copy_weights_gemma_3`:
    // "For Gemma3 models only the text component is supported").
    let tower = if implementation == Implementation::Litgpt { 0 } else { arch.tower_parameters };
    let small = arch.n_layer * (arch.block_norms() + bias)
        + attention_layers * (arch.qk_norms() + latent_norms)
        + arch.norm_parameters(h)
        + arch.per_layer_norm_parameters()
        + tower;
    let expert_width = arch.moe_intermediate_size.unwrap_or(arch.intermediate_size);
    let largest_linear = [
        h * (q_width(arch) + 2 * kv_width(arch)),
        h * if arch.mlp == MlpKind::Moe { expert_width } else { arch.intermediate_size },
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    let total = embedding + head + block_linear + small;
    ParamCounts { embedding, head, block_linear, small, largest_linear, total }
}

/// The parameter counts and the rows of the logits of `arch`. A reward model
/// (`AutoModelForSequenceClassification`, `num_labels=1`, TRL `reward_trainer.py`) replaces the
/// LM head by a score head of one row: the weights have no `V × h` head and the logits are one
/// score per token, pooled at the last one.
pub(super) fn counts_and_head_rows(
    arch: &Architecture,
    implementation: Implementation,
    reward: bool,
) -> (ParamCounts, u64) {
    let mut counts = count(arch, implementation);
    if !reward {
        return (counts, vocab_rows(arch));
    }
    counts.total = counts.total - counts.head + arch.n_embd;
    counts.head = arch.n_embd;
    (counts, 1)
}

/// Bytes per quantized parameter, with the quantization constants.
pub(super) fn quantized_bytes_per_param(q: Quantization) -> (f64, &'static str) {
    match q {
        // 4-bit codes + one fp32 absmax per 64-block; double quantization stores the absmax in
        // 8 bits with one fp32 constant per 256 blocks (QLoRA paper).
        Quantization::Nf4 { double_quant: false } | Quantization::Fp4 { double_quant: false } => {
            (0.5 + 4.0 / 64.0, "0.5 B + fp32 absmax per 64 (4.5 bits)")
        }
        Quantization::Nf4 { double_quant: true } | Quantization::Fp4 { double_quant: true } => {
            (0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0), "0.5 B + 8-bit absmax per 64 + fp32 per 256 blocks (4.127 bits)")
        }
        Quantization::Int8 => (1.0, "1 B (LLM.int8) + fp32 row statistics"),
        Quantization::Fp8 => (1.0, "1 B (fp8) + per-tensor scales"),
        // Packed codes + per group of 128: an fp16 scale and a zero point of the same width.
        Quantization::Gptq { bits: 8 } => {
            (1.0 + 2.0 / 128.0 + 1.0 / 128.0, "1 B (GPTQ int8) + fp16 scale and zero per 128")
        }
        Quantization::Gptq { .. } => {
            (0.5 + 2.0 / 128.0 + 0.5 / 128.0, "0.5 B (GPTQ int4) + fp16 scale and 4-bit zero per 128")
        }
        Quantization::Awq => (0.5 + 2.0 / 128.0 + 0.5 / 128.0, "0.5 B (AWQ int4) + fp16 scale and 4-bit zero per 128"),
    }
}
