//! GPU models: capacity and bf16 support.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    /// Canonical name, e.g. `A100-80GB`.
    pub name: String,
    /// Capacity as the driver reports it (what `torch.cuda.get_device_properties().total_memory` sees).
    pub memory_bytes: u64,
    pub bf16: bool,
    /// CUDA compute capability, e.g. 8.0.
    pub compute_capability: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub source: String,
}
