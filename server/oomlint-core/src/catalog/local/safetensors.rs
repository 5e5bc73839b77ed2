//! Safetensors headers: the 8-byte little-endian length, then a JSON object mapping each
//! tensor name to `{dtype, shape, data_offsets}`. Only the header is read (by the leaf).

use super::{LocalModelError, ShardHeader};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Headers (and `model.safetensors.index.json`) larger than this are refused.
pub const MAX_HEADER_BYTES: u64 = 100_000_000;
/// Shard files read at most (the largest public checkpoints have a few hundred).
const MAX_FILES: usize = 4096;

/// What the headers of a checkpoint's safetensors files say.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Summary {
    pub(crate) files: usize,
    pub(crate) tensors: usize,
    /// Sum of the element counts of every tensor.
    pub(crate) parameters: u64,
    /// Elements per dtype (`BF16`, `F32`, `U8`, ...).
    elements_by_dtype: BTreeMap<String, u64>,
    /// Whether every tensor is floating point (packed quantized weights are not).
    pub(crate) float_only: bool,
    /// Whether a separate output head (`lm_head.weight`, `embed_out.weight`) is stored.
    pub(crate) has_output_head: bool,
}

impl Summary {
    /// The dtype holding the most elements.
    pub(super) fn dominant_dtype(&self) -> Option<String> {
        self.elements_by_dtype.iter().max_by_key(|(_, n)| **n).map(|(dtype, _)| dtype.clone())
    }

    fn add(&mut self, name: &str, dtype: &str, elements: u64) {
        self.tensors += 1;
        self.parameters = self.parameters.saturating_add(elements);
        let entry = self.elements_by_dtype.entry(dtype.to_string()).or_default();
        *entry = entry.saturating_add(elements);
        self.float_only &= dtype.starts_with('F') || dtype == "BF16";
        self.has_output_head |= ["lm_head.weight", "embed_out.weight"].iter().any(|head| name.ends_with(head));
    }
}

/// Summarizes the headers of a checkpoint's shards.
pub(super) fn summarize(shards: &[ShardHeader]) -> Result<Summary, LocalModelError> {
    let mut summary = Summary { float_only: true, ..Summary::default() };
    for shard in shards {
        for (name, tensor) in parse_header(&shard.path, &shard.json)? {
            let (dtype, elements) = tensor_facts(&tensor).ok_or_else(|| LocalModelError::Malformed {
                path: shard.path.clone(),
                message: format!("tensor `{name}` has no dtype or shape"),
            })?;
            summary.add(&name, dtype, elements);
        }
        summary.files += 1;
    }
    Ok(summary)
}

/// The shard file names of a checkpoint: those `model.safetensors.index.json` (`index`, its
/// path and text) names, else `listed` (the directory's `*.safetensors` files). Sorted, once
/// each, and only plain file names inside the directory.
pub fn shard_names(
    dir: &Path,
    index: Option<(&Path, &str)>,
    listed: Vec<String>,
) -> Result<Vec<String>, LocalModelError> {
    let mut names: Vec<String> = match index {
        Some((path, text)) => {
            let json: Value = serde_json::from_str(text).map_err(|e| malformed(path, e))?;
            let map = json.get("weight_map").and_then(Value::as_object).ok_or_else(|| LocalModelError::Malformed {
                path: path.to_path_buf(),
                message: "no `weight_map` object".to_string(),
            })?;
            map.values().filter_map(Value::as_str).map(str::to_string).collect()
        }
        None => listed.into_iter().filter(|name| name.ends_with(".safetensors")).collect(),
    };
    names.sort();
    names.dedup();
    // Shards must be plain file names inside `dir`, never paths out of it.
    if let Some(bad) = names.iter().find(|n| n.contains(['/', '\\']) || *n == ".." || n.is_empty()) {
        return Err(LocalModelError::Malformed {
            path: index.map_or_else(|| dir.join(INDEX), |(path, _)| path.to_path_buf()),
            message: format!("shard name `{bad}` is not a file name"),
        });
    }
    if names.len() > MAX_FILES {
        return Err(LocalModelError::Malformed {
            path: dir.to_path_buf(),
            message: format!("{} safetensors files, more than the {MAX_FILES} read", names.len()),
        });
    }
    Ok(names)
}

/// The index file of a sharded checkpoint.
pub const INDEX: &str = "model.safetensors.index.json";

/// Parses the JSON header of one safetensors file, without its `__metadata__`.
fn parse_header(path: &Path, header: &[u8]) -> Result<Vec<(String, Value)>, LocalModelError> {
    let json: Value = serde_json::from_slice(header).map_err(|e| malformed(path, e))?;
    let Value::Object(map) = json else {
        return Err(LocalModelError::Malformed { path: path.to_path_buf(), message: "header is not an object".into() });
    };
    Ok(map.into_iter().filter(|(name, _)| name != "__metadata__").collect())
}

/// Dtype and element count of one header entry.
fn tensor_facts(tensor: &Value) -> Option<(&str, u64)> {
    let dtype = tensor.get("dtype")?.as_str()?;
    let shape = tensor.get("shape")?.as_array()?;
    let elements = shape.iter().try_fold(1u64, |acc, dim| Some(acc.saturating_mul(dim.as_u64()?)))?;
    Some((dtype, elements))
}

fn malformed(path: &Path, e: serde_json::Error) -> LocalModelError {
    LocalModelError::Malformed { path: path.to_path_buf(), message: e.to_string() }
}
