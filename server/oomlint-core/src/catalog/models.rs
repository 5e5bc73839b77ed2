//! Model architectures, keyed by Hugging Face id, LitGPT name and aliases.
//!
//! The facts live in `server/oomlint-core/data/models.json`, generated from the tables in
//! `data/catalog/` (one row per model, each with its `source`); [`resolve_model`] maps the
//! names people write to an entry.
//!
//! # Name normalization
//! A query matches an entry's name, Hugging Face id or alias, compared case-insensitively,
//! in this order, stopping at the first hit:
//! 1. the whole query (`meta-llama/Llama-3.1-8B`), after trimming whitespace, a trailing
//!    `/` and a `https://huggingface.co/` or `hf://` prefix;
//! 2. the last two path components (`checkpoints/meta-llama/Llama-3.1-8B` →
//!    `meta-llama/Llama-3.1-8B`), then the bare last component, which any organization may
//!    publish under (`unsloth/Llama-3.2-1B-Instruct` → `Llama-3.2-1B-Instruct`);
//! 3. the bare name without packaging suffixes, removed repeatedly: `-bnb-4bit`,
//!    `-unsloth-bnb-4bit`, `-unsloth`, `-4bit`, `-8bit`, `-awq`, `-gptq`, `-gptq-int4`,
//!    `-gptq-int8`, `-int4`, `-int8`, `-fp8`, `-bf16`, `-fp16`, `-dequantized` (a 16-bit copy
//!    of a checkpoint stored quantized, such as `axolotl-ai-co/gpt-oss-120b-dequantized`),
//!    `-bnb-nf4`, `-linearized` (axolotl-quants' Llama 4 uploads, whose fused experts are
//!    stored as one linear per expert so that bitsandbytes quantizes them: the same shapes);
//! 4. that name without one chat-variant suffix: `-instruct`, `-it`, `-chat`, `-base`.
//!
//! No step removes or changes a size, so a query never resolves across sizes; anything
//! else is an [`UnknownModel`] with up to three similar known names.

use crate::similarity::{jaro_winkler, upper_bound, Word};
use crate::HashMap;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

/// How Hugging Face's modelling code packs the projections into `nn.Linear` modules, which
/// decides what PEFT's LoRA adapts (one adapter per module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HfProjections {
    /// `q_proj`, `k_proj`, `v_proj`, `o_proj`, `gate_proj`, `up_proj`, `down_proj` (Llama and most).
    #[default]
    Separate,
    /// One `query_key_value` (`modeling_gpt_neox.py`, `modeling_falcon.py`, `modeling_bloom.py`).
    FusedQkv,
    /// `qkv_proj` and `gate_up_proj` (`modeling_phi3.py`: Phi-3, Phi-3.5, Phi-4).
    FusedQkvGateUp,
}

impl HfProjections {
    pub(crate) fn fused_qkv(self) -> bool {
        self != HfProjections::Separate
    }

    pub(crate) fn fused_gate_up(self) -> bool {
        self == HfProjections::FusedQkvGateUp
    }

    fn is_separate(&self) -> bool {
        *self == HfProjections::Separate
    }
}

/// Feed-forward block shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MlpKind {
    /// `fc -> gelu -> proj` (GPT-NeoX, Phi-1/2, Falcon).
    Gelu,
    /// `silu(gate) * up -> down` (Llama, Mistral, Qwen).
    #[default]
    Swiglu,
    /// `gelu(gate) * up -> down` (Gemma).
    Geglu,
    /// Mixture of experts with SwiGLU experts.
    Moe,
}

/// Normalization layer kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum NormKind {
    /// Weight and bias per channel.
    LayerNorm,
    /// Weight per channel.
    #[default]
    RmsNorm,
}

/// What a non-attention layer of a hybrid model mixes tokens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MixerKind {
    /// Mamba-2 (`modeling_granitemoehybrid.py`, `modeling_nemotron_h.py`).
    #[default]
    Mamba2,
    /// Gated DeltaNet linear attention (`modeling_qwen3_next.py`, `modeling_qwen3_5.py`):
    /// `n_heads` value heads of `head_dim`, `n_groups` key heads of `d_state`.
    GatedDeltaNet,
    /// Gated short convolution (`modeling_lfm2.py`): `in_proj` to `3·inner`, a depthwise
    /// causal convolution over `inner = n_heads × head_dim` channels, `out_proj`.
    ShortConv,
    /// Mamba-1 as Jamba runs it (`modeling_jamba.py` `JambaMambaMixer`): `in_proj` to `2·inner`
    /// (x and the gate), a depthwise causal convolution over `inner`, `x_proj` to `dt_rank +
    /// 2·d_state`, `dt_proj` back to `inner` (biased), `A_log` of `inner × d_state`, `D`, and
    /// Jamba's RMSNorms over dt, B and C. One head of `inner` (`n_heads` 1).
    Mamba1,
}

impl MixerKind {
    fn is_mamba2(&self) -> bool {
        *self == MixerKind::Mamba2
    }
}

/// Dimensions of the non-attention mixer of hybrid models (Granite 4.0-H's Mamba-2, Qwen3.5's
/// Gated DeltaNet, LFM2's short convolution), in Mamba-2 terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MambaDims {
    #[serde(default, skip_serializing_if = "MixerKind::is_mamba2")]
    pub(crate) kind: MixerKind,
    /// SSM state size (`mamba_d_state`).
    pub d_state: u64,
    /// SSM heads (`mamba_n_heads`).
    pub n_heads: u64,
    /// Width of one head (`mamba_d_head`).
    pub head_dim: u64,
    /// B/C groups (`mamba_n_groups`).
    pub(crate) n_groups: u64,
    /// Causal convolution kernel width (`mamba_d_conv`).
    pub(crate) d_conv: u64,
    /// Inner width over model width (`mamba_expand`).
    pub(crate) expand: u64,
    /// Chunk length of the chunked scan (`mamba_chunk_size`).
    pub(crate) chunk_size: u64,
    #[serde(default)]
    pub(crate) conv_bias: bool,
    #[serde(default)]
    pub(crate) proj_bias: bool,
    /// Rank of Mamba-1's time-step projection (`mamba_dt_rank`); 0 for the other mixers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) dt_rank: u64,
}

impl MambaDims {
    /// Inner width of the mixer (`n_heads × head_dim`).
    pub(crate) fn inner_size(&self) -> u64 {
        self.n_heads.saturating_mul(self.head_dim)
    }

    /// Output width of the input projections. Mamba-2: gate and x (`2·inner`), B and C
    /// (`2·groups·state`), dt (`heads`). Gated DeltaNet: q and k (`2·groups·state`), v and the
    /// output gate z (`2·inner`), beta and a (`2·heads`). Short convolution: B, C, x (`3·inner`).
    pub(crate) fn in_proj_size(&self) -> u64 {
        let inner = self.inner_size();
        let bc = 2u64.saturating_mul(self.n_groups).saturating_mul(self.d_state);
        match self.kind {
            MixerKind::Mamba2 => sum(&[2u64.saturating_mul(inner), bc, self.n_heads]),
            MixerKind::GatedDeltaNet => sum(&[2u64.saturating_mul(inner), bc, 2u64.saturating_mul(self.n_heads)]),
            MixerKind::ShortConv => 3u64.saturating_mul(inner),
            MixerKind::Mamba1 => 2u64.saturating_mul(inner),
        }
    }

    /// Output width of Mamba-1's `x_proj` (dt, B and C); 0 for the other mixers.
    pub(crate) fn x_proj_size(&self) -> u64 {
        match self.kind {
            MixerKind::Mamba1 => sum(&[self.dt_rank, 2u64.saturating_mul(self.d_state)]),
            _ => 0,
        }
    }

    /// Weights of the mixer's linear layers (what quantization and LoRA see).
    pub(crate) fn linear_parameters(&self, n_embd: u64) -> u64 {
        let inner = self.inner_size();
        sum(&[
            n_embd.saturating_mul(self.in_proj_size()),
            inner.saturating_mul(n_embd),
            inner.saturating_mul(self.x_proj_size()),
            self.dt_rank.saturating_mul(inner),
        ])
    }

    /// Parameters of one mixer with model width `n_embd`.
    pub(crate) fn parameters(&self, n_embd: u64) -> u64 {
        let inner = self.inner_size();
        // Mamba-2 convolves x, B and C; Gated DeltaNet q, k and v; the short convolution x only.
        let conv_channels = match self.kind {
            MixerKind::ShortConv => inner,
            _ => sum(&[inner, 2u64.saturating_mul(self.n_groups).saturating_mul(self.d_state)]),
        };
        let (per_head, norm) = match self.kind {
            MixerKind::Mamba2 => (3, inner), // dt_bias, A_log, D; gated RMSNorm over inner
            MixerKind::GatedDeltaNet => (2, self.head_dim), // dt_bias, A_log; gated RMSNorm per head
            MixerKind::ShortConv => (0, 0),
            // Jamba's dt, B and C RMSNorms.
            MixerKind::Mamba1 => (0, self.x_proj_size()),
        };
        // Mamba-1: x_proj, dt_proj with its bias, A_log and D over the inner width.
        let selective = match self.kind {
            MixerKind::Mamba1 => sum(&[
                linear(inner, self.x_proj_size(), false),
                linear(self.dt_rank, inner, true),
                inner.saturating_mul(self.d_state),
                inner,
            ]),
            _ => 0,
        };
        sum(&[
            selective,
            linear(n_embd, self.in_proj_size(), self.proj_bias),
            conv_channels.saturating_mul(self.d_conv),
            if self.conv_bias { conv_channels } else { 0 },
            self.n_heads.saturating_mul(per_head),
            norm,
            linear(inner, n_embd, self.proj_bias),
        ])
    }
}

/// Multi-head latent attention (DeepSeek-V2/V3, GLM-4.7-Flash, Kimi K2): queries through an
/// optional low-rank `q_a_proj`/`q_b_proj`, keys and values through a shared latent of
/// `kv_lora_rank` (`modeling_deepseek_v3.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct MlaDims {
    /// Rank of the query compression; 0 = a full-rank `q_proj` (DeepSeek-V2-Lite).
    #[serde(default)]
    pub(crate) q_lora_rank: u64,
    pub(crate) kv_lora_rank: u64,
    pub(crate) qk_nope_head_dim: u64,
    pub(crate) qk_rope_head_dim: u64,
    pub(crate) v_head_dim: u64,
}

impl MlaDims {
    /// Linear weights of one attention block (biases and norms excluded).
    pub(crate) fn linear_parameters(&self, n_embd: u64, n_head: u64) -> u64 {
        let qk_head = sum(&[self.qk_nope_head_dim, self.qk_rope_head_dim]);
        let q = n_head.saturating_mul(qk_head);
        let query = if self.q_lora_rank == 0 {
            linear(n_embd, q, false)
        } else {
            sum(&[linear(n_embd, self.q_lora_rank, false), linear(self.q_lora_rank, q, false)])
        };
        let kv_b = n_head.saturating_mul(sum(&[self.qk_nope_head_dim, self.v_head_dim]));
        sum(&[
            query,
            linear(n_embd, sum(&[self.kv_lora_rank, self.qk_rope_head_dim]), false), // kv_a_proj_with_mqa
            linear(self.kv_lora_rank, kv_b, false),                                  // kv_b_proj
            linear(n_head.saturating_mul(self.v_head_dim), n_embd, false),           // o_proj
        ])
    }

    /// RMSNorm weights on the two latents (`q_a_layernorm`, `kv_a_layernorm`).
    pub(crate) fn norm_parameters(&self) -> u64 {
        sum(&[self.q_lora_rank, self.kv_lora_rank])
    }
}

/// Gemma 4's full-attention layers, which differ from its sliding-window ones
/// (`modeling_gemma4.py`: `global_head_dim`, `num_global_key_value_heads`, `attention_k_eq_v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct GlobalAttention {
    /// Width of one query/key head on a full-attention layer.
    pub(crate) head_size: u64,
    /// Key/value heads on a full-attention layer.
    pub(crate) n_query_groups: u64,
    /// The keys double as the values: a full-attention layer has no `v_proj`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) k_eq_v: bool,
}

/// Per-layer embeddings (Gemma 3n, Gemma 4 E2B/E4B): a second token table of
/// `vocab_size` rows and `n_layer × size` columns, a projection of the hidden state to the same
/// width, and in every layer a gate (`n_embd → size`), a projection back and a norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct PerLayerInput {
    /// `hidden_size_per_layer_input`.
    pub(crate) size: u64,
    /// `vocab_size_per_layer_input`.
    pub(crate) vocab_size: u64,
}

/// Gemma 3n's alternating updates and learned augmented residual (`modeling_gemma3n.py`:
/// `Gemma3nTextAltUp`, `Gemma3nTextLaurelBlock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct AltUp {
    /// `altup_num_inputs`: the streams the hidden state is widened to.
    pub(crate) n_inputs: u64,
    /// `laurel_rank`: the width of the low-rank residual branch.
    pub(crate) laurel_rank: u64,
}

/// The architecture facts of one model, in LitGPT's `Config` terms.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Architecture {
    /// Canonical display name (the LitGPT name where one exists).
    pub name: String,
    pub hf_id: Option<String>,
    #[serde(default)]
    pub(crate) aliases: Vec<String>,
    pub(crate) family: String,
    /// All decoder layers, attention and Mamba alike.
    pub n_layer: u64,
    pub n_embd: u64,
    pub n_head: u64,
    pub n_query_groups: u64,
    pub head_size: u64,
    /// Dense MLP width; for MoE models with a shared expert, the shared expert's width.
    pub intermediate_size: u64,
    pub mlp: MlpKind,
    #[serde(default)]
    pub n_expert: u64,
    #[serde(default)]
    pub n_expert_per_token: u64,
    /// Width of one routed expert (falls back to `intermediate_size` when absent).
    #[serde(default)]
    pub(crate) moe_intermediate_size: Option<u64>,
    /// Width of the always-active shared experts next to the routed ones, all shared experts
    /// together (Granite 4.0-H-Tiny, DeepSeek, Qwen2-MoE, Llama 4).
    #[serde(default)]
    pub shared_expert_intermediate_size: Option<u64>,
    /// A sigmoid gate of one output scales the shared expert (`shared_expert_gate`: Qwen2-MoE,
    /// Qwen3-Next, Qwen3.5).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) shared_expert_gate: bool,
    /// Layers of a mixture-of-experts model whose MLP is a dense gated MLP of
    /// `intermediate_size` instead of the experts (DeepSeek's `first_k_dense_replace`, Llama 4
    /// Maverick's and Jamba's alternate layers). Only the count matters, not the positions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) n_dense_layers: u64,
    /// Tokenizer vocabulary (LitGPT `vocab_size`; the HF config value where LitGPT has none).
    pub(crate) vocab_size: u64,
    /// Rows of the embedding and of `lm_head`: LitGPT's padded vocabulary, which equals the
    /// Hugging Face config's `vocab_size` for every catalog entry.
    pub padded_vocab_size: u64,
    /// Whether the Hugging Face checkpoint ties `lm_head` to the embedding.
    /// LitGPT never ties during fine-tuning.
    pub tie_word_embeddings: bool,
    /// Biases on every linear layer (attention, MLP, MoE router).
    pub(crate) bias: bool,
    /// Biases on the query/key/value projections only (Qwen2).
    #[serde(default)]
    pub(crate) attn_bias: bool,
    /// Bias on `lm_head` (Phi-2).
    #[serde(default)]
    pub(crate) lm_head_bias: bool,
    pub(crate) norm: NormKind,
    /// Per-head RMSNorm on queries and keys (Qwen3, Gemma 3).
    #[serde(default)]
    pub norm_qk: bool,
    /// `q_proj` also produces a sigmoid gate on the attention output, doubling its width
    /// (`attn_output_gate`: Qwen3-Next, Qwen3.5).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) attn_output_gate: bool,
    /// Multi-head latent attention in place of the q/k/v projections; `head_size` is then the
    /// query/key head width (`qk_nope_head_dim + qk_rope_head_dim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mla: Option<MlaDims>,
    /// Extra norm after attention (Gemma 2/3).
    #[serde(default)]
    pub(crate) post_attention_norm: bool,
    /// Extra norm after the MLP (Gemma 2/3).
    #[serde(default)]
    pub post_mlp_norm: bool,
    /// Attention logits pass through `tanh(x / c) · c` before the softmax (Gemma 2: 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_logit_softcapping: Option<f64>,
    /// Logits pass through `tanh(x / c) · c` before the loss (Gemma 2: 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_logit_softcapping: Option<f64>,
    /// Attention and MLP read the same input (GPT-NeoX, Falcon, Phi-2).
    #[serde(default)]
    pub(crate) parallel_residual: bool,
    /// With a parallel residual, one norm feeds both branches (Falcon-7B, Phi-2).
    #[serde(default)]
    pub(crate) shared_attention_norm: bool,
    /// The Hugging Face module layout of the projections.
    #[serde(default, skip_serializing_if = "HfProjections::is_separate")]
    pub hf_projections: HfProjections,
    /// Maximum context (LitGPT `block_size` / HF `max_position_embeddings`).
    pub block_size: u64,
    #[serde(default)]
    pub(crate) sliding_window_size: Option<u64>,
    /// One digit per layer, `1` = sliding-window layer, `0` = global layer. Absent with a
    /// `sliding_window_size` means every attention layer uses the window.
    #[serde(default)]
    pub sliding_window_layers: Option<String>,
    /// Layers that are Mamba2 mixers in hybrid models (Granite 4.0-H).
    #[serde(default)]
    pub n_mamba_layers: u64,
    /// Mixer dimensions when `n_mamba_layers > 0`.
    #[serde(default)]
    pub mamba: Option<MambaDims>,
    /// The Mamba mixers run beside attention in the same layers (Falcon-H1: both read the
    /// normed input and their outputs are summed), not in place of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) parallel_mamba: bool,
    /// Single-purpose blocks (Nemotron-H's `hybrid_override_pattern`), one letter per block:
    /// `M` a Mamba-2 mixer, `*` attention, `-` a dense MLP, `E` a mixture of experts, each
    /// behind its own norm. `n_layer` counts the blocks; `n_mamba_layers` the `M`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) layer_pattern: Option<String>,
    /// Routed and shared experts are two-matrix MLPs (up, down: Nemotron-H's squared ReLU),
    /// not gated ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) ungated_experts: bool,
    /// Parameters of a vision or audio tower and its projector, recorded from the checkpoint's
    /// `vision_config`/`audio_config` (Qwen2-VL, Qwen3-VL, Llama 4); counted in the total and
    /// loaded with the weights, never adapted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tower_parameters: u64,
    /// Wider heads and fewer key/value heads on the full-attention layers (Gemma 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) global_attention: Option<GlobalAttention>,
    /// Per-layer embedding tables and projections (Gemma 3n, Gemma 4 E2B/E4B). The table is an
    /// embedding: counted in the total and kept in the load dtype on the GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) per_layer_input: Option<PerLayerInput>,
    /// The last layers that reuse an earlier layer's keys and values (`num_kv_shared_layers`).
    /// Their `k_proj`/`v_proj` are still in the checkpoint and counted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) n_kv_shared_layers: u64,
    /// The KV-shared layers' MLP is twice `intermediate_size` wide (`use_double_wide_mlp`:
    /// Gemma 4 E2B).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) double_wide_mlp: bool,
    /// AltUp streams and the LAuReL branch (Gemma 3n).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) altup: Option<AltUp>,
    /// Dominant tensor dtype of a local checkpoint's safetensors (`BF16`, `F32`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_dtype: Option<String>,
    /// `quantization_config.quant_method` of a local pre-quantized checkpoint
    /// (`bitsandbytes`, `gptq`, `awq`, `mxfp4`, `fp8`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_quantization: Option<String>,
    /// Total parameter count: the published one, else (absent from the catalog file)
    /// computed from the shapes when the catalog loads.
    #[serde(default)]
    pub parameters: u64,
    /// Where these facts come from (repository file and commit, or config URL).
    pub source: String,
    /// Whether the shape was sized from the model's name (`catalog/names.rs`), not read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sized_from_name: bool,
}

impl Architecture {
    /// Where the architecture came from, in the order oomlint looks: a local checkpoint
    /// directory, the local Hugging Face cache, the built-in catalog (with `full`, followed
    /// by the catalog row's own source), or the model's name.
    pub fn provenance(&self, full: bool) -> String {
        const CATALOG: &str = "from the built-in catalog";
        if let Some(dir) = self.source.strip_prefix("local ") {
            format!("from the local checkpoint {dir}")
        } else if self.source.starts_with("from the local Hugging Face cache") || self.sized_from_name {
            self.source.clone()
        } else if full {
            format!("{CATALOG}: {}", self.source)
        } else {
            CATALOG.to_string()
        }
    }

    /// Layers with self-attention: all of them in a parallel hybrid, else all but the Mamba ones.
    pub(crate) fn attention_layer_count(&self) -> u64 {
        if let Some(pattern) = &self.layer_pattern {
            pattern.bytes().filter(|b| *b == b'*').count() as u64
        } else if self.parallel_mamba {
            self.n_layer
        } else {
            self.n_layer.saturating_sub(self.n_mamba_layers)
        }
    }

    /// Attention layers that only attend within `sliding_window_size`.
    pub fn sliding_window_layer_count(&self) -> u64 {
        match (&self.sliding_window_size, &self.sliding_window_layers) {
            (None, _) => 0,
            (Some(_), None) => self.attention_layer_count(),
            (Some(_), Some(pattern)) => pattern.bytes().filter(|b| *b == b'1').count() as u64,
        }
    }

    /// Width of one routed expert.
    pub fn expert_intermediate_size(&self) -> u64 {
        self.moe_intermediate_size.unwrap_or(self.intermediate_size)
    }

    /// Parameters of `lm_head` when it is a separate matrix.
    pub(crate) fn lm_head_parameters(&self) -> u64 {
        linear(self.n_embd, self.padded_vocab_size, self.lm_head_bias)
    }

    /// Total parameters of the Hugging Face checkpoint (a tied `lm_head` counted once),
    /// computed from the shapes. Attention sinks (gpt-oss, 64 per layer) are not modeled.
    pub fn parameter_count(&self) -> u64 {
        self.count(self.n_expert)
    }

    /// Parameters a text token passes through: a mixture of experts counts its routed experts
    /// per token only, and a vision or audio tower is left out.
    pub(crate) fn active_parameter_count(&self) -> u64 {
        let experts = if self.mlp == MlpKind::Moe { self.n_expert_per_token } else { self.n_expert };
        self.count(experts).saturating_sub(self.tower_parameters)
    }

    /// Total parameters with `experts` routed experts per layer.
    pub(crate) fn parameter_count_with_experts(&self, experts: u64) -> u64 {
        self.count(experts)
    }

    fn count(&self, experts: u64) -> u64 {
        let head = if self.tie_word_embeddings { 0 } else { self.lm_head_parameters() };
        let mamba = self.mamba.map_or(0, |m| m.parameters(self.n_embd));
        let dense_layers = self.dense_mlp_layer_count();
        let global = self.global_attention_layer_count();
        let wide = self.double_wide_mlp_layer_count();
        sum(&[
            self.attention_layer_count().saturating_sub(global).saturating_mul(self.attention_parameters(false)),
            global.saturating_mul(self.attention_parameters(true)),
            self.n_mamba_layers.saturating_mul(mamba),
            self.n_layer.saturating_mul(self.block_norms()),
            self.mlp_layer_count()
                .saturating_sub(dense_layers)
                .saturating_sub(wide)
                .saturating_mul(self.mlp_parameters(experts)),
            wide.saturating_mul(self.gated_mlp_parameters(self.intermediate_size.saturating_mul(2))),
            dense_layers.saturating_mul(self.gated_mlp_parameters(self.intermediate_size)),
            self.padded_vocab_size.saturating_mul(self.n_embd),
            self.per_layer_embedding_parameters(),
            self.per_layer_linear_parameters(),
            self.per_layer_norm_parameters(),
            self.norm_parameters(self.n_embd),
            head,
            self.tower_parameters,
        ])
    }

    /// Full-attention layers that take [`GlobalAttention`]'s shape: the attention layers outside
    /// the sliding window.
    pub(crate) fn global_attention_layer_count(&self) -> u64 {
        if self.global_attention.is_none() {
            return 0;
        }
        self.attention_layer_count().saturating_sub(self.sliding_window_layer_count())
    }

    /// Layers whose dense MLP is twice as wide (the KV-shared ones, where `double_wide_mlp`).
    pub(crate) fn double_wide_mlp_layer_count(&self) -> u64 {
        if self.double_wide_mlp && matches!(self.mlp, MlpKind::Swiglu | MlpKind::Geglu) {
            self.n_kv_shared_layers.min(self.n_layer)
        } else {
            0
        }
    }

    /// The per-layer embedding table (`embed_tokens_per_layer`): `vocab_size × n_layer × size`.
    pub(crate) fn per_layer_embedding_parameters(&self) -> u64 {
        self.per_layer_input.map_or(0, |p| p.vocab_size.saturating_mul(self.n_layer).saturating_mul(p.size))
    }

    /// Linear weights of the per-layer inputs (the model-level projection, each layer's gate and
    /// projection) and of AltUp and LAuReL (the stream projections in and out, each layer's
    /// router, coefficient maps and low-rank residual).
    pub(crate) fn per_layer_linear_parameters(&self) -> u64 {
        let h = self.n_embd;
        let per_layer = self.per_layer_input.map_or(0, |p| {
            let width = self.n_layer.saturating_mul(p.size);
            sum(&[linear(h, width, false), self.n_layer.saturating_mul(2u64.saturating_mul(linear(h, p.size, false)))])
        });
        let altup = self.altup.map_or(0, |a| {
            let n = a.n_inputs;
            let streams = 2u64.saturating_mul(n.saturating_sub(1)).saturating_mul(linear(h, h, false));
            let layer = sum(&[
                linear(n, n, false),                                  // correction_coefs
                linear(n, n.saturating_mul(n), false),                // prediction_coefs
                linear(h, n, false),                                  // modality_router
                2u64.saturating_mul(linear(h, a.laurel_rank, false)), // laurel left and right
            ]);
            sum(&[streams, self.n_layer.saturating_mul(layer)])
        });
        sum(&[per_layer, altup])
    }

    /// Norm and scale vectors of the per-layer inputs, AltUp and LAuReL.
    pub(crate) fn per_layer_norm_parameters(&self) -> u64 {
        let h = self.n_embd;
        // The projection norm, then per layer the norm after the per-layer projection.
        let per_layer = self.per_layer_input.map_or(0, |p| sum(&[p.size, self.n_layer.saturating_mul(h)]));
        // Per layer: the corrected-output scale, the router norm and the post-LAuReL norm.
        let altup = self.altup.map_or(0, |_| self.n_layer.saturating_mul(3u64.saturating_mul(h)));
        sum(&[per_layer, altup])
    }

    /// Layers of a mixture-of-experts model with a dense MLP instead of the experts.
    pub(crate) fn dense_mlp_layer_count(&self) -> u64 {
        if let (Some(pattern), MlpKind::Moe) = (&self.layer_pattern, self.mlp) {
            pattern.bytes().filter(|b| *b == b'-').count() as u64
        } else if self.mlp == MlpKind::Moe {
            self.n_dense_layers.min(self.n_layer)
        } else {
            0
        }
    }

    /// Weights (and LayerNorm biases) of one norm over `width` features.
    pub(crate) fn norm_parameters(&self, width: u64) -> u64 {
        match self.norm {
            NormKind::LayerNorm => width.saturating_mul(2),
            NormKind::RmsNorm => width,
        }
    }

    /// Norms of one block: before attention, before the MLP (unless shared), and the
    /// optional post-attention and post-MLP norms.
    pub(crate) fn block_norms(&self) -> u64 {
        if self.layer_pattern.is_some() {
            return self.norm_parameters(self.n_embd);
        }
        let separate_mlp_norm = !(self.parallel_residual && self.shared_attention_norm);
        let count = [true, separate_mlp_norm, self.post_attention_norm, self.post_mlp_norm]
            .iter()
            .filter(|present| **present)
            .count() as u64;
        count.saturating_mul(self.norm_parameters(self.n_embd))
    }

    /// Parameters of one attention block; `global` picks the full-attention layers' shape.
    fn attention_parameters(&self, global: bool) -> u64 {
        if let Some(mla) = &self.mla {
            return sum(&[mla.linear_parameters(self.n_embd, self.n_head), mla.norm_parameters(), self.qk_norms()]);
        }
        let (head_size, _, _) = self.attention_shape(global);
        let norms = if self.norm_qk { 2u64.saturating_mul(self.norm_parameters(head_size)) } else { 0 };
        let qkv_bias = if self.bias || self.attn_bias { self.qkv_width(global) } else { 0 };
        let o_bias = if self.bias { self.n_embd } else { 0 };
        sum(&[self.attention_linear_parameters(global), qkv_bias, o_bias, norms])
    }

    /// `(head_size, key/value heads, whether there is a v_proj)` of the sliding-window (or
    /// only) attention layers, or of the full-attention ones where [`GlobalAttention`] is set.
    fn attention_shape(&self, global: bool) -> (u64, u64, bool) {
        match self.global_attention {
            Some(g) if global => (g.head_size, g.n_query_groups, !g.k_eq_v),
            _ => (self.head_size, self.n_query_groups, true),
        }
    }

    /// Output width of the fused q/k/v projection (with the output gate where `q_proj` makes one).
    fn qkv_width(&self, global: bool) -> u64 {
        let (head_size, groups, separate_v) = self.attention_shape(global);
        let q = self.n_head.saturating_mul(head_size);
        let kv = groups.saturating_mul(head_size);
        let gate = if self.attn_output_gate { q } else { 0 };
        sum(&[q, gate, kv, if separate_v { kv } else { 0 }])
    }

    /// Linear weights (no biases) of one q/k/v/o attention block; `global` as above.
    pub(crate) fn attention_linear_parameters(&self, global: bool) -> u64 {
        let (head_size, _, _) = self.attention_shape(global);
        let q = self.n_head.saturating_mul(head_size);
        sum(&[linear(self.n_embd, self.qkv_width(global), false), linear(q, self.n_embd, false)])
    }

    /// The per-head query and key norms of one attention block (Qwen3, Gemma 3).
    pub(crate) fn qk_norms(&self) -> u64 {
        if self.norm_qk {
            2u64.saturating_mul(self.norm_parameters(self.head_size))
        } else {
            0
        }
    }

    /// A gated MLP (`gate`, `up`, `down`) of `width`.
    /// Blocks with an MLP: every layer, or the `-` and `E` blocks of a single-purpose stack.
    pub(crate) fn mlp_layer_count(&self) -> u64 {
        match &self.layer_pattern {
            Some(pattern) => pattern.bytes().filter(|b| matches!(b, b'-' | b'E')).count() as u64,
            None => self.n_layer,
        }
    }

    /// Whether the MLP (or each expert) is gated: SwiGLU/GeGLU, or experts not marked ungated.
    pub(crate) fn gated_mlp(&self) -> bool {
        match self.mlp {
            MlpKind::Gelu => false,
            MlpKind::Moe => !self.ungated_experts,
            _ => true,
        }
    }

    /// Weight matrices of one routed or shared expert: 3 gated, 2 ungated.
    pub(crate) fn expert_matrices(&self) -> u64 {
        if self.ungated_experts {
            2
        } else {
            3
        }
    }

    /// One routed or shared expert of `width`.
    fn expert_parameters(&self, width: u64) -> u64 {
        if self.ungated_experts {
            sum(&[linear(self.n_embd, width, self.bias), linear(width, self.n_embd, self.bias)])
        } else {
            self.gated_mlp_parameters(width)
        }
    }

    fn gated_mlp_parameters(&self, width: u64) -> u64 {
        sum(&[
            linear(self.n_embd, width, self.bias),
            linear(self.n_embd, width, self.bias),
            linear(width, self.n_embd, self.bias),
        ])
    }

    fn mlp_parameters(&self, experts: u64) -> u64 {
        match self.mlp {
            MlpKind::Gelu => sum(&[
                linear(self.n_embd, self.intermediate_size, self.bias),
                linear(self.intermediate_size, self.n_embd, self.bias),
            ]),
            MlpKind::Swiglu | MlpKind::Geglu => self.gated_mlp_parameters(self.intermediate_size),
            MlpKind::Moe => sum(&[
                linear(self.n_embd, self.n_expert, self.bias), // router
                experts.saturating_mul(self.expert_parameters(self.expert_intermediate_size())),
                self.shared_expert_intermediate_size.map_or(0, |w| self.expert_parameters(w)),
                if self.shared_expert_gate { self.n_embd } else { 0 },
            ]),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Parameters of a linear layer `inputs → outputs`.
fn linear(inputs: u64, outputs: u64, bias: bool) -> u64 {
    inputs.saturating_mul(outputs).saturating_add(if bias { outputs } else { 0 })
}

fn sum(parts: &[u64]) -> u64 {
    parts.iter().fold(0u64, |acc, p| acc.saturating_add(*p))
}

/// A model name that matches no catalog entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownModel {
    pub(crate) query: String,
}

impl UnknownModel {
    /// Up to three known names that look alike, most similar first (never used as a match).
    /// Computed on each call, not with the error: most callers only ask whether a name resolves.
    pub(crate) fn suggestions(&self) -> Vec<String> {
        suggest(&self.query)
    }
}

impl fmt::Display for UnknownModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown model `{}`", self.query)?;
        let suggestions = self.suggestions();
        if !suggestions.is_empty() {
            write!(f, "; did you mean {}?", quoted_list(&suggestions))?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownModel {}

/// `` `a`, `b` or `c` ``.
pub(crate) fn quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

const PACKAGING_SUFFIXES: &[&str] = &[
    "-unsloth-bnb-4bit",
    "-bnb-4bit",
    "-bnb-8bit",
    "-unsloth",
    "-4bit",
    "-8bit",
    "-awq",
    "-gptq-int4",
    "-gptq-int8",
    "-gptq",
    "-int4",
    "-int8",
    "-fp8",
    "-bf16",
    "-fp16",
    "-dequantized",
    "-bnb-nf4",
    "-linearized",
];
const VARIANT_SUFFIXES: &[&str] = &["-instruct", "-it", "-chat", "-base"];

struct ModelIndex {
    models: Vec<Architecture>,
    /// Lowercased name, HF id, alias and their bare forms → entry.
    by_key: HashMap<String, usize>,
    /// Every distinct spelling of each entry, for suggestions.
    spellings: Vec<Spelling>,
}

/// A known spelling, with its bare lowercased name (what suggestions compare).
struct Spelling {
    text: String,
    bare: Word,
    model: usize,
}

/// The catalog file, generated by `data/catalog/generate.py`.
const CATALOG_JSON: &str = include_str!("../../data/models.json");

fn index() -> &'static ModelIndex {
    static INDEX: OnceLock<ModelIndex> = OnceLock::new();
    INDEX.get_or_init(|| {
        // The embedded file is checked by the tests; a parse failure is a build defect.
        let mut models: Vec<Architecture> =
            serde_json::from_str(CATALOG_JSON).expect("server/oomlint-core/data/models.json is valid");
        for model in models.iter_mut().filter(|m| m.parameters == 0) {
            model.parameters = model.parameter_count();
        }
        let mut by_key = HashMap::default();
        let mut spellings: Vec<Spelling> = Vec::new();
        for (i, model) in models.iter().enumerate() {
            for key in model_keys(model) {
                // A later spelling with the same bare name and entry could never be suggested.
                let bare = Word::new(&bare_lower(key));
                if !spellings.iter().rev().take_while(|s| s.model == i).any(|s| s.bare == bare) {
                    spellings.push(Spelling { text: key.to_string(), bare, model: i });
                }
                let lower = key.to_lowercase();
                if let Some((_, bare)) = lower.rsplit_once('/') {
                    by_key.entry(bare.to_string()).or_insert(i);
                }
                by_key.entry(lower).or_insert(i);
            }
        }
        ModelIndex { models, by_key, spellings }
    })
}

fn model_keys(model: &Architecture) -> impl Iterator<Item = &str> {
    std::iter::once(model.name.as_str()).chain(model.hf_id.as_deref()).chain(model.aliases.iter().map(String::as_str))
}

/// Every catalog entry, in file order.
pub(crate) fn catalog_models() -> &'static [Architecture] {
    &index().models
}

/// Resolves a model name (HF id, LitGPT name, alias or checkpoint path) to its architecture.
pub fn resolve_model(name: &str) -> Result<&'static Architecture, UnknownModel> {
    let idx = index();
    candidates(name)
        .iter()
        .find_map(|key| idx.by_key.get(key))
        .map(|&i| &idx.models[i])
        .ok_or_else(|| UnknownModel { query: name.to_string() })
}

/// The lookup keys for a query, most specific first (steps 1–4 of the module docs).
fn candidates(name: &str) -> Vec<String> {
    let mut query = name.trim().trim_end_matches('/').to_lowercase();
    for prefix in ["https://huggingface.co/", "http://huggingface.co/", "hf://"] {
        if let Some(rest) = query.strip_prefix(prefix) {
            query = rest.to_string();
        }
    }
    let parts: Vec<&str> = query.split('/').filter(|p| !p.is_empty()).collect();
    let mut keys = vec![query.clone()];
    if parts.len() >= 2 {
        keys.push(parts[parts.len() - 2..].join("/"));
    }
    let Some(bare) = parts.last() else {
        return keys;
    };
    keys.push(bare.to_string());
    let mut stripped = bare.to_string();
    while let Some(shorter) = PACKAGING_SUFFIXES.iter().find_map(|s| stripped.strip_suffix(s)) {
        stripped = shorter.to_string();
        keys.push(stripped.clone());
    }
    keys.extend(VARIANT_SUFFIXES.iter().filter_map(|s| stripped.strip_suffix(s)).map(str::to_string));
    keys
}

/// Up to three known spellings closest to the query's bare name, each naming a distinct model.
fn suggest(name: &str) -> Vec<String> {
    const THRESHOLD: f64 = 0.8;
    // Keeps a pair whose score equals its bound through rounding.
    const MARGIN: f64 = 1e-9;
    let query = Word::new(&bare_lower(name));
    let spellings = &index().spellings;
    // Spellings by upper bound, highest first: once a bound is below the third-best model's
    // score, neither that spelling nor any after it can change the top three.
    let mut bounded: Vec<(f64, usize)> = spellings
        .iter()
        .enumerate()
        .map(|(i, spelling)| (upper_bound(&query, &spelling.bare), i))
        .filter(|(bound, _)| *bound >= THRESHOLD - MARGIN)
        .collect();
    bounded.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut scored: Vec<(f64, usize)> = Vec::new();
    for (bound, i) in bounded {
        if third_model_score(&scored, spellings).is_some_and(|third| bound + MARGIN < third) {
            break;
        }
        let score = jaro_winkler(&query, &spellings[i].bare);
        if score >= THRESHOLD {
            scored.push((score, i));
        }
    }
    // Most similar first; equal scores in catalog order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    for (_, i) in scored {
        let spelling = &spellings[i];
        if !seen.contains(&spelling.model) {
            seen.push(spelling.model);
            out.push(spelling.text.clone());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// The best score of the third distinct model among `scored`, if three are there.
fn third_model_score(scored: &[(f64, usize)], spellings: &[Spelling]) -> Option<f64> {
    let mut best: Vec<(usize, f64)> = Vec::new();
    for &(score, i) in scored {
        match best.iter_mut().find(|(model, _)| *model == spellings[i].model) {
            Some(entry) => entry.1 = entry.1.max(score),
            None => best.push((spellings[i].model, score)),
        }
    }
    best.sort_by(|a, b| b.1.total_cmp(&a.1));
    best.get(2).map(|(_, score)| *score)
}

fn bare_lower(name: &str) -> String {
    let lower = name.trim().trim_end_matches('/').to_lowercase();
    lower.rsplit('/').next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests;
