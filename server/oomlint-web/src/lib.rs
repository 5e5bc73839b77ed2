//! oomlint in the browser: the playground's engine (`editors/web/`).
//!
//! The page holds a small project (a launch script, the config it names, its DeepSpeed
//! JSON…) and asks this crate, compiled to WebAssembly, what oomlint makes of it: JSON in,
//! JSON out, through [`call`] (and, in the WebAssembly module, the exports in `abi`).
//!
//! Invariant: like the core, this crate does no I/O (the core's `clippy.toml` applies here
//! too). The files it reads are the ones the page hands it ([`project::Project`] answers
//! the core's [`oomlint_core::model::Resolver`] from them, and finds settings and version
//! pins among them as the CLI finds them on disk), so for the same files it reports what
//! `oomlint check` reports (`editors/web/tests/same-findings.mjs` compares them on every
//! fixture). Offsets cross the boundary as UTF-16 code units, the unit of JavaScript strings
//! and CodeMirror; inside, they are bytes.

#[cfg(target_family = "wasm")]
mod abi;
mod hover;
mod offsets;
mod project;
mod report;

use serde::Deserialize;
use serde_json::{json, Value};

/// One request: `method` names it, `input` is its JSON. The answer is JSON: the result,
/// or `{"error": "…"}` for a request the page got wrong.
pub fn call(method: &str, input: &str) -> String {
    let result = match method {
        "info" => Ok(info()),
        "analyze" => parse(input).map(|request| report::analyze(&request)),
        "hover" => parse(input).map(|request| hover::hover(&request)),
        other => Err(format!("unknown method `{other}` (info, analyze, hover)")),
    };
    result.unwrap_or_else(|error| json!({ "error": error })).to_string()
}

fn parse(input: &str) -> Result<Request, String> {
    serde_json::from_str(input).map_err(|e| format!("invalid request: {e}"))
}

/// What the page sends: its files, the one in view, and the GPU it picked.
#[derive(Deserialize)]
pub(crate) struct Request {
    pub(crate) files: Vec<File>,
    /// The file in view: its estimate, levers and charts come back.
    pub(crate) active: String,
    /// A GPU name as `--gpu` takes it; none judges no fit.
    #[serde(default)]
    pub(crate) gpu: Option<String>,
    /// For `hover`: the position in the active file, in UTF-16 code units.
    #[serde(default)]
    pub(crate) offset: usize,
}

#[derive(Deserialize)]
pub(crate) struct File {
    /// Its path in the project (`scripts/train.sh`), `/`-separated.
    pub(crate) name: String,
    pub(crate) text: String,
}

/// What the page needs once: the GPUs to pick from and the charts' stylesheet.
fn info() -> Value {
    let gpus: Vec<Value> = oomlint_core::catalog::gpus::all_gpus()
        .iter()
        .map(|g| {
            json!({
                "name": g.name,
                "vendor": g.vendor,
                "memory_bytes": g.memory_bytes,
                "bf16": g.bf16,
                "fp8": g.fp8,
                "note": g.note,
            })
        })
        .collect();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "gpus": gpus,
        "chart_style": oomlint_core::estimate::chart::STYLE,
    })
}

#[cfg(test)]
mod tests;
