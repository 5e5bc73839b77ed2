//! Architectures of models on disk: a Hugging Face `config.json` or a LitGPT
//! `model_config.yaml`, refined by the headers of the `*.safetensors` files.
//!
//! The leaves read the files ([`Checkpoint`]): only small files and the JSON headers of
//! safetensors files, never the weights, never the network, never code shipped with the
//! model. This module reads their text.

mod fields;
mod hf;
mod litgpt;
pub mod safetensors;

use super::Architecture;
use crate::syntax::{self, Language, Mapping};
use std::fmt;
use std::path::{Path, PathBuf};

/// `config.json` and `model_config.yaml` larger than this are refused.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Why a local model directory could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalModelError {
    /// Neither `config.json` nor `model_config.yaml` is in the directory.
    NoConfig { dir: PathBuf },
    /// A file could not be read.
    Io { path: PathBuf, message: String },
    /// A file is not what its name promises (bad JSON/YAML, oversized, malformed header).
    Malformed { path: PathBuf, message: String },
    /// `config.json` names a `model_type` this reader does not map.
    UnsupportedModelType { path: PathBuf, model_type: String },
    /// A required field is missing or not a non-negative integer.
    MissingField { path: PathBuf, field: String },
}

impl fmt::Display for LocalModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoConfig { dir } => {
                write!(f, "{}: no config.json or model_config.yaml", dir.display())
            }
            Self::Io { path, message } => write!(f, "{}: {message}", path.display()),
            Self::Malformed { path, message } => write!(f, "{}: {message}", path.display()),
            Self::UnsupportedModelType { path, model_type } => {
                write!(f, "{}: unsupported model_type `{model_type}`", path.display())
            }
            Self::MissingField { path, field } => {
                write!(f, "{}: missing or invalid `{field}`", path.display())
            }
        }
    }
}

impl std::error::Error for LocalModelError {}

/// A checkpoint directory as a leaf read it: the text of its config file and the JSON
/// headers of its safetensors files (never the weights).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub dir: PathBuf,
    pub config: CheckpointConfig,
    /// The headers of every shard; `None` when it has no safetensors files or lacks some
    /// shard its index names (a partial download would undercount).
    pub shards: Option<Vec<ShardHeader>>,
}

/// The config file that describes a checkpoint (`config.json` wins over `model_config.yaml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointConfig {
    /// A Hugging Face `config.json`.
    HuggingFace { path: PathBuf, text: String },
    /// A LitGPT `model_config.yaml`.
    Litgpt { path: PathBuf, text: String },
}

/// The JSON header of one safetensors file (after its 8-byte length).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardHeader {
    pub path: PathBuf,
    pub json: Vec<u8>,
}

/// The architecture of a checkpoint a leaf read.
///
/// When safetensors headers are present they give the exact parameter count (unless the
/// checkpoint is quantized), the dominant dtype, and whether `lm_head` is stored (a tied
/// embedding when the config does not say).
pub fn from_checkpoint(checkpoint: &Checkpoint) -> Result<Architecture, LocalModelError> {
    let dir = &checkpoint.dir;
    let (mut arch, tie_stated, described) = match &checkpoint.config {
        CheckpointConfig::HuggingFace { path, text } => {
            let (arch, tie_stated) = hf::architecture(&parse_mapping(path, text, Language::Json)?, path)?;
            let described = format!("config.json (model_type {})", arch.family);
            (arch, tie_stated, described)
        }
        CheckpointConfig::Litgpt { path, text } => {
            let arch = litgpt::architecture(&parse_mapping(path, text, Language::Yaml)?, path)?;
            (arch, true, "model_config.yaml (LitGPT)".to_string())
        }
    };
    arch.parameters = arch.parameter_count();
    arch.source = format!("local {}: {described}", dir.display());
    if let Some(shards) = &checkpoint.shards {
        let summary = safetensors::summarize(shards)?;
        if !tie_stated {
            arch.tie_word_embeddings = !summary.has_output_head;
        }
        if summary.float_only {
            arch.parameters = summary.parameters;
        }
        arch.checkpoint_dtype = summary.dominant_dtype();
        arch.source.push_str(&format!(
            "; {} safetensors header(s), {} tensors{}",
            summary.files,
            summary.tensors,
            if summary.float_only { ", parameters counted from their shapes" } else { "" }
        ));
    }
    arch.name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| arch.name.clone());
    Ok(arch)
}

/// Parses a small JSON or YAML file whose root is a mapping.
fn parse_mapping(path: &Path, text: &str, language: Language) -> Result<Mapping, LocalModelError> {
    let document = syntax::parse(text, language);
    if document.is_incomplete() {
        let message = document.problems.first().map(|p| p.message.clone()).unwrap_or_default();
        return Err(LocalModelError::Malformed { path: path.to_path_buf(), message });
    }
    document.root.and_then(|root| root.as_mapping().cloned()).ok_or_else(|| LocalModelError::Malformed {
        path: path.to_path_buf(),
        message: "the top level is not a mapping".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::models::MixerKind;

    /// Falcon-H1-0.5B's config.json (the fields `modeling_falcon_h1.py` reads).
    const FALCON_H1_0_5B: &str = r#"{"model_type": "falcon_h1", "hidden_size": 1024, "num_hidden_layers": 36,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 2048,
        "vocab_size": 32784, "max_position_embeddings": 16384, "mamba_d_ssm": 1536, "mamba_n_heads": 24,
        "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_expand": 2,
        "mamba_chunk_size": 128, "mamba_conv_bias": true, "mamba_proj_bias": false, "attention_bias": false}"#;

    fn read(text: &str) -> Architecture {
        let path = PathBuf::from("/models/falcon/config.json");
        let config = CheckpointConfig::HuggingFace { path, text: text.to_string() };
        from_checkpoint(&Checkpoint { dir: PathBuf::from("/models/falcon"), config, shards: None }).expect("reads")
    }

    #[test]
    fn jamba_alternates_mamba1_with_attention_and_experts_with_dense_mlps() {
        // Jamba-v0.1's config.json leaves the layer periods and Mamba sizes at JambaConfig's defaults.
        let arch = read(
            r#"{"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 65536, "num_experts": 16}"#,
        );
        assert_eq!((arch.n_mamba_layers, arch.attention_layer_count(), arch.n_dense_layers), (28, 4, 16));
        let mamba = arch.mamba.expect("mixer");
        assert_eq!((mamba.kind, mamba.inner_size(), mamba.dt_rank, mamba.d_state), (MixerKind::Mamba1, 8192, 256, 16));
        let catalog = crate::catalog::models::resolve_model("ai21labs/Jamba-v0.1").expect("catalog row");
        assert_eq!(arch.parameter_count(), catalog.parameter_count());
        // "52B total parameters" (the Jamba and Jamba-1.5 papers), 12B active.
        let total = arch.parameter_count() as f64;
        assert!((total / 52e9 - 1.0).abs() < 0.01, "{total}");
        let active = arch.active_parameter_count() as f64;
        assert!((active / 12e9 - 1.0).abs() < 0.05, "{active}");
    }

    #[test]
    fn nemotron_h_reads_its_blocks_from_the_pattern() {
        // Nemotron 3 Nano 30B-A3B's config.json fields.
        let arch = read(
            r#"{"model_type": "nemotron_h", "hidden_size": 2688, "num_attention_heads": 32, "num_key_value_heads": 2,
            "head_dim": 128, "intermediate_size": 1856, "vocab_size": 131072, "max_position_embeddings": 262144,
            "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", "mamba_num_heads": 64,
            "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "expand": 2,
            "n_routed_experts": 128, "n_shared_experts": 1, "moe_intermediate_size": 1856,
            "moe_shared_expert_intermediate_size": 3712, "num_experts_per_tok": 6, "mlp_hidden_act": "relu2"}"#,
        );
        assert_eq!((arch.n_layer, arch.attention_layer_count(), arch.mlp_layer_count()), (52, 6, 23));
        let catalog = crate::catalog::models::resolve_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").expect("row");
        assert_eq!(arch.parameter_count(), catalog.parameter_count());
    }

    #[test]
    fn falcon_h1_runs_attention_and_mamba_in_every_layer() {
        let arch = read(FALCON_H1_0_5B);
        assert!(arch.parallel_mamba && arch.n_mamba_layers == 36 && arch.attention_layer_count() == 36);
        // The same shapes as the catalog's row, and a fine-tune's card total of 521M.
        let catalog = crate::catalog::models::resolve_model("tiiuae/Falcon-H1-0.5B-Instruct").expect("catalog row");
        assert_eq!(arch.parameter_count(), catalog.parameter_count());
        let total = arch.parameter_count() as f64;
        assert!((total / 521e6 - 1.0).abs() < 0.01, "{total}");
        // Each layer holds both mixers: without the attention beside the mixer it would be 36 × 1.31M smaller.
        let mut alternating = arch.clone();
        alternating.parallel_mamba = false;
        let attention = 1024 * 512 + 2 * 1024 * 128 + 512 * 1024;
        assert_eq!(arch.parameter_count() - alternating.parameter_count(), 36 * attention);
    }
}
