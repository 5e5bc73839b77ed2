//! oomlint's analysis core: text in, findings out.
//!
//! The flow of one file: [`syntax`] (spanned document) → [`format`] (which framework,
//! and its [`plan`]) → [`estimate`] → [`rules`] (diagnostics with fixes). [`analysis`] runs
//! the whole pipeline for one file.
//!
//! Invariant: this crate does no I/O. It never touches the file system, processes,
//! threads, the clock, the environment, the console or the network (clippy's
//! `disallowed-methods`, `disallowed-types` and `disallowed-macros` in `clippy.toml` enforce
//! it), so it builds for WebAssembly and runs in a browser: `oomlint-web` wraps it for the
//! playground (`editors/web/build.sh` builds it for wasm32-wasip1, tree-sitter's C
//! included). What it needs from around a file (settings, version pins, local model
//! checkpoints, the target GPU) the leaves (CLI, language server, playground) hand it as
//! values and through [`model::Resolver`].
//!
//! Public surface: only what the leaves use (the CLI and language server, the playground's
//! engine, `tests/`, the benches, the fuzz targets) is `pub`; the rest is `pub(crate)`, so
//! dead code shows up as a `dead_code` warning; `unreachable_pub` (set in `Cargo.toml`)
//! warns about a `pub` item nothing outside can reach.

/// The core's hash maps: keys are short strings and offsets from one file or the core's
/// tables, so a fast hash with a fixed seed (deterministic runs, no entropy to ask for in
/// WebAssembly) serves better than std's SipHash with random keys.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub(crate) type HashSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;

pub mod alloc_conf;
pub mod analysis;
pub mod catalog;
pub mod diagnostic;
pub mod estimate;
pub mod explain;
pub mod fix;
pub mod format;
pub mod hover;
pub mod model;
pub mod own_arguments;
pub mod plan;
mod recognize;
pub mod rules;
pub mod schema;
pub mod settings;
pub(crate) mod similarity;
pub mod span;
pub mod suppression;
pub mod syntax;
pub mod versions;
