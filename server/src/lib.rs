//! oomlint's leaves: the command line and the language server. They do the I/O (files,
//! settings and pins found on disk, local checkpoints, NVML) and hand the analysis core
//! ([`oomlint_core`]) values.

pub use oomlint_core::{
    alloc_conf, analysis, catalog, diagnostic, estimate, explain, fix, format, hover, model, plan, rules, schema,
    settings, span, suppression, syntax, versions,
};

pub mod cli;
pub mod gpu_detect;
pub mod lsp;
pub mod paths;
pub mod project;
pub mod render;
pub mod write;
