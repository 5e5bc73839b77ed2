//! Hugging Face `config.json` → [`Architecture`], per `model_type`.
//!
//! Key names and defaults follow the transformers configuration classes; what a config
//! leaves out takes that class's default (e.g. `tie_word_embeddings` is true for Gemma and
//! Falcon, false for Llama, Qwen and Mistral).

use super::fields::Fields;
use super::LocalModelError;
use crate::catalog::models::{Architecture, HfProjections, MambaDims, MixerKind, MlpKind, NormKind};
use crate::syntax::Mapping;
use std::path::Path;

/// Model types this reader maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Llama,
    Mistral,
    Qwen2,
    Qwen3,
    Qwen3Moe,
    Mixtral,
    Gemma,
    Gemma2,
    Gemma3,
    Phi,
    Phi3,
    GptNeox,
    Falcon,
    GraniteHybrid,
    FalconH1,
    Jamba,
    NemotronH,
    GptOss,
}

impl Kind {
    fn from_model_type(model_type: &str) -> Option<Self> {
        Some(match model_type {
            "llama" | "granite" | "smollm3" => Self::Llama,
            "mistral" => Self::Mistral,
            "qwen2" => Self::Qwen2,
            "qwen3" => Self::Qwen3,
            "qwen3_moe" => Self::Qwen3Moe,
            "mixtral" => Self::Mixtral,
            "gemma" => Self::Gemma,
            "gemma2" => Self::Gemma2,
            "gemma3_text" | "gemma3" => Self::Gemma3,
            "phi" => Self::Phi,
            "phi3" => Self::Phi3,
            "gpt_neox" => Self::GptNeox,
            "falcon" | "RefinedWeb" | "RefinedWebModel" => Self::Falcon,
            "granitemoehybrid" => Self::GraniteHybrid,
            "falcon_h1" => Self::FalconH1,
            "jamba" => Self::Jamba,
            "nemotron_h" => Self::NemotronH,
            "gpt_oss" => Self::GptOss,
            _ => return None,
        })
    }

    /// The transformers default of `tie_word_embeddings`.
    fn ties_by_default(self) -> bool {
        matches!(self, Self::Gemma | Self::Gemma2 | Self::Gemma3 | Self::Falcon)
    }
}

/// The architecture and whether the config states `tie_word_embeddings` itself.
pub(super) fn architecture(root: &Mapping, path: &Path) -> Result<(Architecture, bool), LocalModelError> {
    let top = Fields::new(root, path);
    let model_type = top.str("model_type").unwrap_or_default();
    // Multimodal Gemma 3 keeps the decoder in `text_config`.
    let config = match top.mapping("text_config") {
        Some(text) if model_type == "gemma3" => Fields::new(text, path),
        _ => top,
    };
    let kind = Kind::from_model_type(model_type).ok_or_else(|| LocalModelError::UnsupportedModelType {
        path: path.to_path_buf(),
        model_type: model_type.to_string(),
    })?;
    let mut arch = dense_shapes(&config, kind)?;
    arch.family = model_type.to_string();
    arch.hf_projections = match kind {
        Kind::Phi3 => HfProjections::FusedQkvGateUp,
        Kind::GptNeox | Kind::Falcon => HfProjections::FusedQkv,
        _ => HfProjections::Separate,
    };
    let tie = config.bool("tie_word_embeddings").or_else(|| top.bool("tie_word_embeddings"));
    arch.tie_word_embeddings = tie.unwrap_or(kind.ties_by_default());
    arch.checkpoint_quantization =
        top.mapping("quantization_config").and_then(|q| Fields::new(q, path).str("quant_method").map(str::to_string));
    apply_family(&mut arch, &config, kind);
    apply_sliding_window(&mut arch, &config, kind);
    Ok((arch, tie.is_some()))
}

/// The fields every decoder shares.
fn dense_shapes(config: &Fields, kind: Kind) -> Result<Architecture, LocalModelError> {
    let n_embd = config.require(&["hidden_size", "n_embd", "d_model"])?;
    let n_head = config.require(&["num_attention_heads", "n_head"])?;
    let n_query_groups = match kind {
        Kind::Falcon => falcon_kv_heads(config, n_head),
        _ => config.first_u64(&["num_key_value_heads"]).unwrap_or(n_head),
    };
    let vocab_size = config.require(&["vocab_size"])?;
    Ok(Architecture {
        name: config.str("_name_or_path").unwrap_or_default().to_string(),
        // Nemotron-H counts its blocks from the pattern (`num_hidden_layers` is deprecated there).
        n_layer: match kind {
            Kind::NemotronH => config.first_u64(&["num_hidden_layers"]).unwrap_or(0),
            _ => config.require(&["num_hidden_layers", "n_layer"])?,
        },
        n_embd,
        n_head,
        n_query_groups: n_query_groups.max(1),
        head_size: config.u64("head_dim").unwrap_or(n_embd / n_head),
        intermediate_size: config
            .first_u64(&["intermediate_size", "ffn_hidden_size"])
            .unwrap_or(n_embd.saturating_mul(4)),
        vocab_size,
        padded_vocab_size: vocab_size,
        block_size: config.first_u64(&["max_position_embeddings", "n_positions", "seq_length"]).unwrap_or(2048),
        ..Architecture::default()
    })
}

/// Falcon: the new decoder architecture names its KV heads; the original has one (multi-query) or all.
fn falcon_kv_heads(config: &Fields, n_head: u64) -> u64 {
    if config.bool("new_decoder_architecture") == Some(true) {
        config.first_u64(&["num_kv_heads", "n_head_kv"]).unwrap_or(n_head)
    } else if config.bool("multi_query").unwrap_or(true) {
        1
    } else {
        n_head
    }
}

/// MLP, norms and biases of each family.
fn apply_family(arch: &mut Architecture, config: &Fields, kind: Kind) {
    arch.norm = NormKind::RmsNorm;
    arch.mlp = MlpKind::Swiglu;
    let attention_bias = config.bool("attention_bias").unwrap_or(false);
    match kind {
        Kind::Llama | Kind::Mistral | Kind::Phi3 => {
            arch.attn_bias = attention_bias;
            arch.bias = config.bool("mlp_bias").unwrap_or(false) && attention_bias;
        }
        Kind::Qwen2 => arch.attn_bias = true,
        Kind::Qwen3 => {
            arch.attn_bias = attention_bias;
            arch.norm_qk = true;
        }
        Kind::Qwen3Moe => {
            arch.norm_qk = true;
            arch.attn_bias = attention_bias;
            set_moe(arch, config, &["num_experts"], config.u64("moe_intermediate_size"));
        }
        Kind::Mixtral => set_moe(arch, config, &["num_local_experts"], None),
        Kind::Gemma => arch.mlp = MlpKind::Geglu,
        Kind::Gemma2 | Kind::Gemma3 => {
            arch.mlp = MlpKind::Geglu;
            arch.post_attention_norm = true;
            arch.post_mlp_norm = true;
            arch.norm_qk = kind == Kind::Gemma3;
            arch.attention_logit_softcapping = config.f64("attn_logit_softcapping");
            arch.final_logit_softcapping = config.f64("final_logit_softcapping");
        }
        Kind::Phi => {
            arch.mlp = MlpKind::Gelu;
            arch.norm = NormKind::LayerNorm;
            arch.bias = true;
            arch.lm_head_bias = true;
            arch.parallel_residual = true;
            arch.shared_attention_norm = true;
        }
        Kind::GptNeox => {
            arch.mlp = MlpKind::Gelu;
            arch.norm = NormKind::LayerNorm;
            arch.bias = true;
            arch.parallel_residual = config.bool("use_parallel_residual").unwrap_or(true);
        }
        Kind::Falcon => {
            arch.mlp = MlpKind::Gelu;
            arch.norm = NormKind::LayerNorm;
            arch.bias = config.bool("bias").unwrap_or(false);
            arch.parallel_residual = config.bool("parallel_attn").unwrap_or(true);
            let two_norms = config.bool("new_decoder_architecture") == Some(true)
                && config.u64("num_ln_in_parallel_attn").unwrap_or(2) == 2;
            arch.shared_attention_norm = arch.parallel_residual && !two_norms;
        }
        Kind::GraniteHybrid => apply_granite_hybrid(arch, config),
        Kind::FalconH1 => apply_falcon_h1(arch, config),
        Kind::Jamba => apply_jamba(arch, config),
        Kind::NemotronH => apply_nemotron_h(arch, config),
        Kind::GptOss => {
            arch.bias = config.bool("attention_bias").unwrap_or(true);
            set_moe(arch, config, &["num_local_experts"], None);
            arch.n_expert_per_token = config.first_u64(&["num_experts_per_tok", "experts_per_token"]).unwrap_or(0);
        }
    }
}

fn set_moe(arch: &mut Architecture, config: &Fields, count_keys: &[&str], expert_size: Option<u64>) {
    let experts = config.first_u64(count_keys).unwrap_or(0);
    if experts == 0 {
        return;
    }
    arch.mlp = MlpKind::Moe;
    arch.n_expert = experts;
    arch.n_expert_per_token = config.u64("num_experts_per_tok").unwrap_or(0);
    arch.moe_intermediate_size = expert_size;
}

/// Granite 4.0-H: Mamba2 and attention layers, a shared SwiGLU MLP everywhere, optional
/// experts. Defaults are `GraniteMoeHybridConfig`'s (no `layer_types` means all Mamba).
fn apply_granite_hybrid(arch: &mut Architecture, config: &Fields) {
    arch.n_mamba_layers = match config.strings("layer_types") {
        Some(types) => types.iter().filter(|t| **t == "mamba").count() as u64,
        None => arch.n_layer,
    };
    let inner = config.u64("mamba_expand").unwrap_or(2).saturating_mul(arch.n_embd);
    arch.mamba = (arch.n_mamba_layers > 0).then(|| mamba2_dims(config, inner));
    let shared = config.u64("shared_intermediate_size").unwrap_or(1024);
    let experts = config.u64("num_local_experts").unwrap_or(8);
    if experts > 0 {
        arch.mlp = MlpKind::Moe;
        arch.n_expert = experts;
        arch.n_expert_per_token = config.u64("num_experts_per_tok").unwrap_or(2);
        arch.moe_intermediate_size = Some(arch.intermediate_size);
        arch.shared_expert_intermediate_size = Some(shared);
    }
    arch.intermediate_size = shared;
}

/// A Mamba-2 mixer of `inner` channels from the `mamba_*` keys Granite 4.0-H and Falcon-H1
/// share (their configuration classes' defaults); the head width defaults to `inner / heads`.
fn mamba2_dims(config: &Fields, inner: u64) -> MambaDims {
    let n_heads = config.u64("mamba_n_heads").unwrap_or(128).max(1);
    MambaDims {
        kind: MixerKind::Mamba2,
        d_state: config.u64("mamba_d_state").unwrap_or(256),
        n_heads,
        head_dim: config.u64("mamba_d_head").unwrap_or(inner / n_heads),
        n_groups: config.u64("mamba_n_groups").unwrap_or(1),
        d_conv: config.u64("mamba_d_conv").unwrap_or(4),
        expand: config.u64("mamba_expand").unwrap_or(2),
        chunk_size: config.u64("mamba_chunk_size").unwrap_or(256),
        conv_bias: config.bool("mamba_conv_bias").unwrap_or(true),
        proj_bias: config.bool("mamba_proj_bias").unwrap_or(false),
        dt_rank: 0,
    }
}

/// Falcon-H1 (`modeling_falcon_h1.py` `FalconH1DecoderLayer`): every layer runs a Mamba2
/// mixer beside its attention on the same normed input, then a SwiGLU MLP. The mixer's width
/// is `mamba_d_ssm` when given (else `mamba_expand × hidden_size`), in `mamba_n_heads` heads.
fn apply_falcon_h1(arch: &mut Architecture, config: &Fields) {
    let expand = config.u64("mamba_expand").unwrap_or(2);
    let inner = config.u64("mamba_d_ssm").unwrap_or(expand.saturating_mul(arch.n_embd));
    arch.n_mamba_layers = arch.n_layer;
    arch.parallel_mamba = true;
    arch.mamba = Some(mamba2_dims(config, inner));
    arch.bias = config.bool("mlp_bias").unwrap_or(false) && config.bool("attention_bias").unwrap_or(false);
    arch.attn_bias = config.bool("attention_bias").unwrap_or(false);
}

/// Jamba (`configuration_jamba.py`, `modeling_jamba.py`): layer `i` is attention when `i %
/// attn_layer_period == attn_layer_offset`, else a Mamba-1 mixer; its MLP is a mixture of
/// `num_experts` when `i % expert_layer_period == expert_layer_offset`, else a dense SwiGLU of
/// the same width. Defaults are `JambaConfig`'s (Jamba-v0.1's shapes).
fn apply_jamba(arch: &mut Architecture, config: &Fields) {
    let every = |period: &str, offset: &str, default: (u64, u64)| {
        let period = config.u64(period).unwrap_or(default.0).max(1);
        let offset = config.u64(offset).unwrap_or(default.1);
        (0..arch.n_layer).filter(|i| i % period == offset).count() as u64
    };
    let attention = every("attn_layer_period", "attn_layer_offset", (8, 4));
    let experts = config.u64("num_experts").unwrap_or(16);
    let moe_layers = if experts > 1 { every("expert_layer_period", "expert_layer_offset", (2, 1)) } else { 0 };
    arch.n_mamba_layers = arch.n_layer - attention;
    let expand = config.u64("mamba_expand").unwrap_or(2);
    let inner = expand.saturating_mul(arch.n_embd);
    arch.mamba = (arch.n_mamba_layers > 0).then(|| MambaDims {
        kind: MixerKind::Mamba1,
        d_state: config.u64("mamba_d_state").unwrap_or(16),
        n_heads: 1,
        head_dim: inner,
        n_groups: 1,
        d_conv: config.u64("mamba_d_conv").unwrap_or(4),
        expand,
        chunk_size: 0,
        conv_bias: config.bool("mamba_conv_bias").unwrap_or(true),
        proj_bias: config.bool("mamba_proj_bias").unwrap_or(false),
        dt_rank: config.u64("mamba_dt_rank").unwrap_or(arch.n_embd.div_ceil(16)),
    });
    if moe_layers > 0 {
        arch.mlp = MlpKind::Moe;
        arch.n_expert = experts;
        arch.n_expert_per_token = config.u64("num_experts_per_tok").unwrap_or(2);
        arch.moe_intermediate_size = Some(arch.intermediate_size);
        arch.n_dense_layers = arch.n_layer - moe_layers;
    }
}

/// Nemotron-H (`configuration_nemotron_h.py`, `modeling_nemotron_h.py`): single-purpose blocks
/// from `hybrid_override_pattern` (or `layers_block_type`), Mamba-2 mixers, squared-ReLU MLPs
/// and experts (two matrices each). A latent mixture of experts (`moe_latent_size`,
/// Nemotron 3 Super) is not modelled: its experts are sized as if full-width.
fn apply_nemotron_h(arch: &mut Architecture, config: &Fields) {
    let pattern = match (config.str("hybrid_override_pattern"), config.strings("layers_block_type")) {
        (Some(p), _) => p.to_string(),
        (None, Some(types)) => types
            .iter()
            .map(|t| match *t {
                "moe" => 'E',
                "full_attention" | "attention" => '*',
                "mlp" => '-',
                _ => 'M',
            })
            .collect(),
        (None, None) => "ME*-".to_string(),
    };
    let count = |c: char| pattern.chars().filter(|p| *p == c).count() as u64;
    arch.n_layer = pattern.chars().count() as u64;
    arch.n_mamba_layers = count('M');
    arch.head_size = config.u64("head_dim").unwrap_or(128);
    arch.mlp = MlpKind::Gelu;
    arch.bias = config.bool("mlp_bias").unwrap_or(false);
    arch.attn_bias = config.bool("attention_bias").unwrap_or(false);
    if count('E') > 0 {
        arch.mlp = MlpKind::Moe;
        arch.ungated_experts = true;
        arch.n_expert = config.u64("n_routed_experts").unwrap_or(8);
        arch.n_expert_per_token = config.u64("num_experts_per_tok").unwrap_or(2);
        let width = config.u64("moe_intermediate_size").unwrap_or(7688);
        arch.moe_intermediate_size = Some(width);
        let shared = config.u64("n_shared_experts").unwrap_or(1);
        let shared_width = config.u64("moe_shared_expert_intermediate_size").unwrap_or(7688);
        arch.shared_expert_intermediate_size = (shared > 0).then(|| shared.saturating_mul(shared_width));
    }
    let n_heads = config.u64("mamba_num_heads").unwrap_or(128).max(1);
    let expand = config.first_u64(&["expand", "mamba_expand"]).unwrap_or(2);
    arch.mamba = (arch.n_mamba_layers > 0).then(|| MambaDims {
        kind: MixerKind::Mamba2,
        d_state: config.u64("ssm_state_size").unwrap_or(128),
        n_heads,
        head_dim: config.u64("mamba_head_dim").unwrap_or(64),
        n_groups: config.first_u64(&["n_groups", "mamba_n_groups"]).unwrap_or(8),
        d_conv: config.first_u64(&["conv_kernel", "mamba_d_conv"]).unwrap_or(4),
        expand,
        chunk_size: config.first_u64(&["chunk_size", "mamba_chunk_size"]).unwrap_or(128),
        conv_bias: config.bool("use_conv_bias").or_else(|| config.bool("mamba_conv_bias")).unwrap_or(true),
        proj_bias: config.bool("mamba_proj_bias").unwrap_or(false),
        dt_rank: 0,
    });
    arch.layer_pattern = Some(pattern);
}

/// The window and which layers use it: `layer_types` when listed, else the family's pattern.
fn apply_sliding_window(arch: &mut Architecture, config: &Fields, kind: Kind) {
    let window = config.u64("sliding_window");
    let enabled = match kind {
        Kind::Qwen2 | Kind::Qwen3 | Kind::Qwen3Moe => config.bool("use_sliding_window") == Some(true),
        Kind::Mistral | Kind::Mixtral | Kind::Phi3 | Kind::Gemma2 | Kind::Gemma3 | Kind::GptOss => true,
        _ => false,
    };
    let Some(window) = window.filter(|_| enabled) else { return };
    arch.sliding_window_size = Some(window);
    let n_layer = usize::try_from(arch.n_layer).unwrap_or(usize::MAX);
    let pattern: Option<String> = if let Some(types) = config.strings("layer_types").filter(|t| t.len() == n_layer) {
        Some(types.iter().map(|t| if t.contains("sliding") { '1' } else { '0' }).collect())
    } else {
        match kind {
            Kind::Gemma2 => Some((0..n_layer).map(|i| if i % 2 == 0 { '1' } else { '0' }).collect()),
            Kind::Gemma3 => {
                let every = config.u64("sliding_window_pattern").unwrap_or(6).max(1) as usize;
                Some((0..n_layer).map(|i| if (i + 1) % every == 0 { '0' } else { '1' }).collect())
            }
            _ => None,
        }
    };
    arch.sliding_window_layers = pattern.filter(|p| p.contains('0'));
}
