//! Reads a checkpoint directory for the core: the config file's text and the JSON headers
//! of its safetensors files. Only small files and headers are read, never the weights.

use crate::catalog::local::safetensors::{shard_names, INDEX, MAX_HEADER_BYTES};
use crate::catalog::local::MAX_CONFIG_BYTES;
use crate::catalog::{from_checkpoint, Architecture, Checkpoint, CheckpointConfig, LocalModelError, ShardHeader};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Reads the checkpoint in `dir` and gives its architecture.
pub fn from_local_dir(dir: &Path) -> Result<Architecture, LocalModelError> {
    from_checkpoint(&read_checkpoint(dir)?)
}

/// Reads the files of the checkpoint in `dir` (`config.json` wins over `model_config.yaml`).
pub fn read_checkpoint(dir: &Path) -> Result<Checkpoint, LocalModelError> {
    let hf = dir.join("config.json");
    let litgpt = dir.join("model_config.yaml");
    let config = if hf.is_file() {
        CheckpointConfig::HuggingFace { text: read_small(&hf, MAX_CONFIG_BYTES)?, path: hf }
    } else if litgpt.is_file() {
        CheckpointConfig::Litgpt { text: read_small(&litgpt, MAX_CONFIG_BYTES)?, path: litgpt }
    } else {
        return Err(LocalModelError::NoConfig { dir: dir.to_path_buf() });
    };
    Ok(Checkpoint { dir: dir.to_path_buf(), config, shards: read_shards(dir)? })
}

/// The headers of every shard; `None` when there is none or one the index names is missing.
fn read_shards(dir: &Path) -> Result<Option<Vec<ShardHeader>>, LocalModelError> {
    let index_path = dir.join(INDEX);
    let names = if index_path.is_file() {
        let text = read_small(&index_path, MAX_HEADER_BYTES)?;
        shard_names(dir, Some((&index_path, &text)), Vec::new())?
    } else {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| LocalModelError::Io { path: dir.to_path_buf(), message: e.to_string() })?;
        let listed = entries.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).collect();
        shard_names(dir, None, listed)?
    };
    let files: Vec<_> = names.iter().map(|name| dir.join(name)).collect();
    if files.is_empty() || !files.iter().all(|f| f.is_file()) {
        return Ok(None);
    }
    files
        .into_iter()
        .map(|path| Ok(ShardHeader { json: read_header(&path)?, path }))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// The JSON header of one safetensors file: an 8-byte little-endian length, then the header.
fn read_header(path: &Path) -> Result<Vec<u8>, LocalModelError> {
    let io = |e: std::io::Error| LocalModelError::Io { path: path.to_path_buf(), message: e.to_string() };
    let mut file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut len_bytes = [0u8; 8];
    file.read_exact(&mut len_bytes).map_err(io)?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER_BYTES || header_len > file_len.saturating_sub(8) {
        return Err(LocalModelError::Malformed {
            path: path.to_path_buf(),
            message: format!("header length {header_len} exceeds the file or the {MAX_HEADER_BYTES}-byte limit"),
        });
    }
    let mut header = Vec::new();
    file.take(header_len).read_to_end(&mut header).map_err(io)?;
    Ok(header)
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
#[path = "checkpoint_tests.rs"]
mod tests;
