//! oomlint: a static linter and GPU-memory estimator for LLM training configs.
//!
//! The flow of one file: [`syntax`] (spanned document) → [`format`] (which framework,
//! and its [`plan`]) → [`rules`] (diagnostics with fixes) → `render`/CLI or the server.
//! [`analysis`] runs the whole pipeline for one file.

pub mod alloc_conf;
pub mod analysis;
pub mod catalog;
pub mod cli;
pub mod diagnostic;
pub mod estimate;
pub mod explain;
pub mod fix;
pub mod format;
pub mod gpu_detect;
pub mod lsp;
pub mod model;
pub mod paths;
pub mod plan;
pub mod render;
pub mod rules;
pub mod schema;
pub mod settings;
pub mod similarity;
pub mod span;
pub mod suppression;
pub mod syntax;
pub mod versions;
