//! Facts the estimator needs: model architectures and GPUs.
//!
//! Each entry is data with a source (see `server/data/`), not code scattered through rules.

pub mod gpus;
pub mod local;
pub(crate) mod models;
pub(crate) mod names;

pub use gpus::{gpu_from_driver_name, resolve_gpu, Gpu, Vendor};
pub use local::{from_checkpoint, Checkpoint, CheckpointConfig, LocalModelError, ShardHeader};
pub use models::{resolve_model, Architecture, MlpKind};
pub(crate) use models::{HfProjections, NormKind};
