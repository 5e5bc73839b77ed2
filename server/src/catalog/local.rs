//! Architectures of models on disk: a Hugging Face `config.json` or a LitGPT
//! `model_config.yaml`, refined by the headers of the `*.safetensors` files.
//!
//! Only small files and the JSON headers of safetensors files are read: never the weights,
//! never the network, never code shipped with the model.

mod fields;
mod hf;
mod litgpt;
mod safetensors;

use super::Architecture;
use crate::syntax::{self, Language, Mapping};
use std::fmt;
use std::path::{Path, PathBuf};

/// `config.json` and `model_config.yaml` larger than this are refused.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

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

/// Reads the architecture of the model in `dir`.
///
/// `config.json` wins over `model_config.yaml`. When safetensors headers are present they
/// give the exact parameter count (unless the checkpoint is quantized), the dominant dtype,
/// and whether `lm_head` is stored (a tied embedding when the config does not say).
pub fn from_local_dir(dir: &Path) -> Result<Architecture, LocalModelError> {
    let hf_config = dir.join("config.json");
    let litgpt_config = dir.join("model_config.yaml");
    let (mut arch, tie_stated, described) = if hf_config.is_file() {
        let (arch, tie_stated) = hf::architecture(&read_mapping(&hf_config, Language::Json)?, &hf_config)?;
        let described = format!("config.json (model_type {})", arch.family);
        (arch, tie_stated, described)
    } else if litgpt_config.is_file() {
        let arch = litgpt::architecture(&read_mapping(&litgpt_config, Language::Yaml)?, &litgpt_config)?;
        (arch, true, "model_config.yaml (LitGPT)".to_string())
    } else {
        return Err(LocalModelError::NoConfig { dir: dir.to_path_buf() });
    };
    arch.parameters = arch.parameter_count();
    arch.source = format!("local {}: {described}", dir.display());
    if let Some(summary) = safetensors::summarize(dir)? {
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

/// Reads a small JSON or YAML file whose root is a mapping.
fn read_mapping(path: &Path, language: Language) -> Result<Mapping, LocalModelError> {
    let text = read_small(path, MAX_CONFIG_BYTES)?;
    let document = syntax::parse(&text, language);
    if document.is_incomplete() {
        let message = document.problems.first().map(|p| p.message.clone()).unwrap_or_default();
        return Err(LocalModelError::Malformed { path: path.to_path_buf(), message });
    }
    document.root.and_then(|root| root.as_mapping().cloned()).ok_or_else(|| LocalModelError::Malformed {
        path: path.to_path_buf(),
        message: "the top level is not a mapping".to_string(),
    })
}

/// Reads a UTF-8 file of at most `limit` bytes.
fn read_small(path: &Path, limit: u64) -> Result<String, LocalModelError> {
    let io = |e: std::io::Error| LocalModelError::Io { path: path.to_path_buf(), message: e.to_string() };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > limit {
        return Err(LocalModelError::Malformed {
            path: path.to_path_buf(),
            message: format!("{len} bytes, more than the {limit} read for a config"),
        });
    }
    std::fs::read_to_string(path).map_err(io)
}

#[cfg(test)]
mod tests;
