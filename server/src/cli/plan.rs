//! `oomlint plan FILE`: the normalized training plan, with 1-based positions.

use super::{print, usage_error};
use crate::analysis::{analyze_bytes, Analysis, Options};
use crate::model::Resolver;
use crate::project::Project;
use crate::render;
use crate::span::{LineIndex, Span};
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

/// Replaces the byte spans of `File` origins with line/column ranges, and those of `Linked`
/// origins with ranges in the linked file (plus the 1-based `line` of its key).
fn positions(analysis: &Analysis, value: &mut Value) {
    match value {
        Value::Object(map) => {
            let linked = match map.get("kind").and_then(Value::as_str) {
                Some("file") => Some(None),
                Some("linked") => {
                    map.get("file").and_then(Value::as_u64).map(|i| analysis.linked_files.get(i as usize))
                }
                _ => None,
            };
            if let Some(linked) = linked {
                let index = linked.map(|l| LineIndex::new(&l.text));
                let range = |span| match (linked, &index) {
                    (Some(l), Some(index)) => render::span_in(&l.text, index, span),
                    _ => render::range(analysis, span),
                };
                for field in ["key", "value"] {
                    let Some(span) = map.get(field).and_then(|s| serde_json::from_value::<Span>(s.clone()).ok()) else {
                        continue;
                    };
                    let (start, end) = range(span);
                    if field == "key" && linked.is_some() {
                        map.insert("line".into(), json!(start.line));
                    }
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
