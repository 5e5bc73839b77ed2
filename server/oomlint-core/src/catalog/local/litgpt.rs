//! LitGPT `model_config.yaml` (the `Config` dataclass dumped as YAML) → [`Architecture`].
//!
//! Missing keys take the dataclass defaults (`litgpt/config.py`), except the three core
//! sizes, which are required. LitGPT never ties `lm_head` to the embedding.

use super::fields::Fields;
use super::LocalModelError;
use crate::catalog::models::{Architecture, MlpKind, NormKind};
use crate::syntax::Mapping;
use std::path::Path;

pub(super) fn architecture(root: &Mapping, path: &Path) -> Result<Architecture, LocalModelError> {
    let config = Fields::new(root, path);
    let n_layer = config.require(&["n_layer"])?;
    let n_embd = config.require(&["n_embd"])?;
    let n_head = config.require(&["n_head"])?;
    let vocab_size = config.u64("vocab_size").unwrap_or(50254);
    let padding_multiple = config.u64("padding_multiple").unwrap_or(512).max(1);
    let padded_vocab_size = config
        .u64("padded_vocab_size")
        .unwrap_or_else(|| vocab_size.div_ceil(padding_multiple).saturating_mul(padding_multiple));
    let mlp = match config.str("mlp_class_name").unwrap_or("GptNeoxMLP") {
        "LLaMAMLP" => MlpKind::Swiglu,
        "GemmaMLP" => MlpKind::Geglu,
        "LLaMAMoE" => MlpKind::Moe,
        _ => MlpKind::Gelu,
    };
    let hf_id = config.mapping("hf_config").and_then(|hf| {
        let hf = Fields::new(hf, path);
        Some(format!("{}/{}", hf.str("org")?, hf.str("name")?))
    });
    let sliding_window_size = config.u64("sliding_window_size");
    let sliding_window_layers = config
        .integers("sliding_window_indices")
        .filter(|layers| sliding_window_size.is_some() && layers.contains(&0))
        .map(|layers| layers.iter().map(|i| if *i == 0 { '0' } else { '1' }).collect());
    Ok(Architecture {
        name: config.str("name").unwrap_or_default().to_string(),
        hf_id,
        family: "litgpt".to_string(),
        n_layer,
        n_embd,
        n_head,
        n_query_groups: config.u64("n_query_groups").unwrap_or(n_head).max(1),
        head_size: config.u64("head_size").unwrap_or(n_embd / n_head),
        intermediate_size: config.u64("intermediate_size").unwrap_or(n_embd.saturating_mul(4)),
        mlp,
        n_expert: config.u64("n_expert").unwrap_or(0),
        n_expert_per_token: config.u64("n_expert_per_token").unwrap_or(0),
        moe_intermediate_size: config.u64("moe_intermediate_size"),
        vocab_size: vocab_size.min(padded_vocab_size),
        padded_vocab_size,
        tie_word_embeddings: false,
        bias: config.bool("bias").unwrap_or(true),
        attn_bias: config.bool("attn_bias").unwrap_or(false),
        lm_head_bias: config.bool("lm_head_bias").unwrap_or(false),
        norm: match config.str("norm_class_name") {
            Some("RMSNorm") => NormKind::RmsNorm,
            _ => NormKind::LayerNorm,
        },
        norm_qk: config.bool("norm_qk").unwrap_or(false),
        post_attention_norm: config.bool("post_attention_norm").unwrap_or(false),
        post_mlp_norm: config.bool("post_mlp_norm").unwrap_or(false),
        parallel_residual: config.bool("parallel_residual").unwrap_or(true),
        shared_attention_norm: config.bool("shared_attention_norm").unwrap_or(false),
        block_size: config.u64("block_size").unwrap_or(4096),
        sliding_window_size,
        sliding_window_layers,
        attention_logit_softcapping: config.f64("attention_logit_softcapping"),
        ..Architecture::default()
    })
}
