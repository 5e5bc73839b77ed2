//! `oomlint plan FILE`: the normalized training plan.

use super::usage_error;
use crate::analysis::{analyze_bytes, Options};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
pub enum PlanFormat {
    Json,
}

#[derive(Args)]
pub struct PlanArgs {
    file: PathBuf,
    #[arg(long, value_enum, default_value = "json")]
    format: PlanFormat,
}

pub fn run(args: &PlanArgs) -> ExitCode {
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return usage_error(format!("cannot read {}: {e}", args.file.display())),
    };
    let analysis = analyze_bytes(&args.file, &bytes, &Options::default());
    let PlanFormat::Json = args.format;
    let value = serde_json::json!({
        "version": 1,
        "path": analysis.path.display().to_string(),
        "format": analysis.format.name(),
        "plan": analysis.plan,
    });
    println!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
    ExitCode::SUCCESS
}
