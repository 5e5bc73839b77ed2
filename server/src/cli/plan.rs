//! `oomlint plan FILE`: the normalized training plan, with 1-based positions.

use super::{print, usage_error};
use crate::analysis::{analyze_bytes, Analysis, Options};
use crate::model::Resolver;
use crate::project::Project;
use crate::render;
use crate::span::Span;
use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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

/// Replaces the byte spans of `File` origins with line/column ranges.
fn positions(analysis: &Analysis, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("kind").and_then(Value::as_str) == Some("file") {
                for field in ["key", "value"] {
                    let Some(span) = map.get(field).and_then(|s| serde_json::from_value::<Span>(s.clone()).ok()) else {
                        continue;
                    };
                    let (start, end) = render::range(analysis, span);
                    map.insert(field.into(), json!({"start": start, "end": end}));
                }
            }
            map.values_mut().for_each(|v| positions(analysis, v));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| positions(analysis, v)),
        _ => {}
    }
}

pub fn run(args: &PlanArgs) -> ExitCode {
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return usage_error(format!("cannot read {}: {e}", args.file.display())),
    };
    // The same resolver and settings as `check`: the files a launch names are read, and a
    // config is read with the launch script beside it that runs it.
    let project = Arc::new(Project::from_environment());
    let options = project
        .options(&args.file, None)
        .unwrap_or_else(|_| Options { resolver: Some(project.clone() as Arc<dyn Resolver>), ..Options::default() });
    let analysis = analyze_bytes(&args.file, &bytes, &options);
    let PlanFormat::Json = args.format;
    let mut plan = serde_json::to_value(&analysis.plan).unwrap_or(Value::Null);
    positions(&analysis, &mut plan);
    let value = json!({
        "version": 1,
        "path": analysis.path.display().to_string(),
        "format": analysis.format.name(),
        "plan": plan,
    });
    print(&format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default()));
    ExitCode::SUCCESS
}
