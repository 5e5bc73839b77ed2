//! Model architectures, keyed by Hugging Face id, LitGPT name and aliases.

use serde::{Deserialize, Serialize};

/// Feed-forward block shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MlpKind {
    /// `fc -> gelu -> proj` (GPT-NeoX, Phi-1/2, Falcon).
    Gelu,
    /// `silu(gate) * up -> down` (Llama, Mistral, Qwen).
    Swiglu,
    /// `gelu(gate) * up -> down` (Gemma).
    Geglu,
    /// Mixture of experts with SwiGLU experts.
    Moe,
}

/// The architecture facts of one model, in LitGPT's `Config` terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Architecture {
    /// Canonical display name (the LitGPT name where one exists).
    pub name: String,
    pub hf_id: Option<String>,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub family: String,
    pub n_layer: u64,
    pub n_embd: u64,
    pub n_head: u64,
    pub n_query_groups: u64,
    pub head_size: u64,
    pub intermediate_size: u64,
    pub mlp: MlpKind,
    #[serde(default)]
    pub n_expert: u64,
    #[serde(default)]
    pub n_expert_per_token: u64,
    #[serde(default)]
    pub moe_intermediate_size: Option<u64>,
    pub vocab_size: u64,
    /// LitGPT pads the vocabulary (embedding and lm_head rows).
    pub padded_vocab_size: u64,
    /// Whether the Hugging Face checkpoint ties `lm_head` to the embedding.
    /// LitGPT never ties during fine-tuning.
    pub tie_word_embeddings: bool,
    pub bias: bool,
    #[serde(default)]
    pub attn_bias: bool,
    /// Maximum context (LitGPT `block_size` / HF `max_position_embeddings`).
    pub block_size: u64,
    #[serde(default)]
    pub sliding_window_size: Option<u64>,
    /// Layers that are Mamba2 mixers in hybrid models (Granite 4.0-H).
    #[serde(default)]
    pub n_mamba_layers: u64,
    /// Total parameter count as published or computed from the shapes.
    pub parameters: u64,
    /// Where these facts come from (repository file and commit, or config URL).
    pub source: String,
}
