//! `oomlint estimate FILE [--gpu NAME|auto] [--format table|json|html] [--output FILE]`.
//!
//! Exit 0 with the estimate (1 when it exceeds the GPU), 2 when the file cannot be read
//! or names no model oomlint can resolve, or the output cannot be written.

use super::{gpu, print, usage_error};
use crate::analysis::{analyze_bytes, Options};
use crate::estimate::Verdict;
use crate::model::{ModelLookup, Resolver};
use crate::project::Project;
use crate::render;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EstimateFormat {
    Table,
    Json,
    /// One self-contained page: charts, the three views, levers with their edits as diffs.
    Html,
}

#[derive(Args)]
pub struct EstimateArgs {
    file: PathBuf,
    /// Target GPU: a name such as A10G or `A100 80GB`, or `auto` to detect it.
    #[arg(long)]
    gpu: Option<String>,
    /// World size (GPUs in all) when the file leaves it to its launch; a launch in the file wins.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    gpus: Option<u64>,
    #[arg(long, value_enum, default_value = "table")]
    format: EstimateFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

pub fn run(args: &EstimateArgs) -> ExitCode {
    let gpu = match gpu::resolve(args.gpu.as_deref(), None) {
        Ok(gpu) => gpu,
        Err(e) => return usage_error(e),
    };
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return usage_error(format!("cannot read {}: {e}", args.file.display())),
    };
    // Local checkpoints and the Hugging Face cache answer before the catalog.
    let resolver: Arc<dyn Resolver> = Arc::new(Project::from_environment());
    let options = Options { gpu, gpus: args.gpus, resolver: Some(resolver), ..Options::default() };
    let analysis = analyze_bytes(&args.file, &bytes, &options);
    let Some(estimate) = &analysis.estimate else {
        let why = match &analysis.model {
            Some(ModelLookup::Unknown { name, suggestions, tried, .. }) if !suggestions.is_empty() => {
                format!("unknown model `{name}` (tried {tried}; closest known: {})", suggestions.join(", "))
            }
            Some(ModelLookup::Unknown { name, tried, .. }) => format!("unknown model `{name}` (tried {tried})"),
            Some(ModelLookup::Unreadable { name, reason, .. }) => format!("cannot read the model `{name}`: {reason}"),
            Some(ModelLookup::NotEstimated { reason, .. }) => reason.clone(),
            _ if analysis.plan.is_none() => format!("{} is not a training config oomlint knows", args.file.display()),
            _ => "the config names no model".to_string(),
        };
        return usage_error(format!("cannot estimate {}: {why}", args.file.display()));
    };
    let out = match args.format {
        EstimateFormat::Table => render::estimate::table(&analysis, estimate),
        EstimateFormat::Json => {
            format!(
                "{}\n",
                serde_json::to_string_pretty(&render::estimate::json(&analysis, estimate)).unwrap_or_default()
            )
        }
        EstimateFormat::Html => render::html::page(&analysis, estimate),
    };
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &out) {
                return usage_error(format!("cannot write {}: {e}", path.display()));
            }
        }
        None => print(&out),
    }
    match estimate.fit {
        Some(fit) if fit.verdict == Verdict::Exceeds => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}
