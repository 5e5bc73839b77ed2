//! `oomlint explain [FILE|-] [--config CONFIG] [--gpu NAME|auto] [--format text|json] [--fix]`.
//!
//! Exit 0 after explaining (also when the log has no OOM message: an empty list), 2 for
//! usage and I/O errors with a one-line message on stderr.

use super::usage_error;
use crate::catalog::Gpu;
use crate::diagnostic::Fix;
use crate::explain::advice::Lever;
use crate::explain::failure::{failures, Failure};
use crate::explain::run_settings::RunSettings;
use crate::explain::units::format_size;
use crate::explain::{explain, json, OomError};
use crate::render::explain as render;
use crate::span::{ColumnUnit, LineIndex};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    Text,
    Json,
}

#[derive(Args)]
pub struct ExplainArgs {
    /// Log file with the OOM message; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    /// The training config that ran: advice becomes the smallest set of edits that fits.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The GPU the log comes from: a name such as A10G, or `auto` to detect it.
    #[arg(long)]
    pub gpu: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ExplainFormat,
    /// Write the chosen edits into --config.
    #[arg(long, requires = "config")]
    pub fix: bool,
}

/// Turns a config into the estimator's levers for it.
pub trait LeverSource {
    /// The levers for `config` (its path and text) on `gpu`; `None` keeps the static table.
    fn levers(&self, path: &Path, text: &str, gpu: Option<&Gpu>) -> Result<Option<Vec<Lever>>, String>;

    /// The settings of `config` that vLLM and Ray advice names; `None` keeps the generic advice.
    fn run_settings(&self, _path: &Path, _text: &str) -> Option<RunSettings> {
        None
    }
}

/// Runs the command; the levers for `--config` come from `source` (without a config, or
/// when `source` has none, the advice is the static table per component).
pub fn run_with(args: &ExplainArgs, source: &dyn LeverSource) -> ExitCode {
    match execute(args, source) {
        Ok(outcome) => {
            for warning in &outcome.warnings {
                eprintln!("oomlint: warning: {warning}");
            }
            super::print(&outcome.stdout);
            ExitCode::SUCCESS
        }
        Err(message) => usage_error(message),
    }
}

/// What a run prints.
struct Outcome {
    stdout: String,
    warnings: Vec<String>,
}

fn execute(args: &ExplainArgs, source: &dyn LeverSource) -> Result<Outcome, String> {
    let (name, text) = read_log(args.file.as_deref())?;
    let mut warnings = Vec::new();
    let gpu = super::gpu::resolve(args.gpu.as_deref(), None)?;
    let mut errors = explain(&text);
    let mut failures = failures(&text);
    if let Some(gpu) = &gpu {
        warnings.extend(capacity_mismatches(&errors, gpu));
    }
    let config = match &args.config {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
            let config_text =
                String::from_utf8(bytes).map_err(|_| format!("config {} is not UTF-8", path.display()))?;
            if !errors.is_empty() {
                if let Some(levers) = source.levers(path, &config_text, gpu.as_ref())? {
                    for error in &mut errors {
                        error.apply_levers(&levers);
                    }
                }
            }
            if !failures.is_empty() {
                let settings = source.run_settings(path, &config_text);
                for failure in &mut failures {
                    failure.apply_settings(settings.as_ref(), gpu.as_ref().map(|g| g.memory_bytes));
                }
            }
            Some((path.as_path(), config_text))
        }
        None => {
            if let Some(gpu) = &gpu {
                for failure in &mut failures {
                    failure.apply_settings(None, Some(gpu.memory_bytes));
                }
            }
            None
        }
    };
    if args.fix {
        if let Some((path, config_text)) = &config {
            if let Some(note) = apply_fixes(path, config_text, &errors, &failures)? {
                warnings.push(note);
            }
        }
    }
    let stdout = match args.format {
        ExplainFormat::Json => {
            let report = match &config {
                Some((_, config_text)) => {
                    json::report_with(&errors, &failures, &|fixes| fixes_json(config_text, fixes))
                }
                None => json::report(&errors, &failures),
            };
            let mut out = serde_json::to_string_pretty(&report).unwrap_or_default();
            out.push('\n');
            out
        }
        ExplainFormat::Text => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            render::render(&errors, &failures, &name, &text, color)
        }
    };
    Ok(Outcome { stdout, warnings })
}

/// Fixes as `check` prints them: edits with 1-based line/column ranges (columns in
/// Unicode scalar values) into the config.
fn fixes_json(config: &str, fixes: &[Fix]) -> serde_json::Value {
    let index = LineIndex::new(config);
    let position = |offset: usize| {
        let p = index.position(config, offset, ColumnUnit::Char);
        serde_json::json!({"line": p.line + 1, "column": p.column + 1})
    };
    fixes
        .iter()
        .map(|f| {
            let edits: Vec<serde_json::Value> = f
                .edits
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "range": {"start": position(e.span.start), "end": position(e.span.end)},
                        "content": e.content,
                    })
                })
                .collect();
            serde_json::json!({"title": f.title, "applicability": f.applicability, "edits": edits})
        })
        .collect()
}

/// The log's name and text; `None` or `-` is standard input. Invalid UTF-8 is replaced.
fn read_log(file: Option<&Path>) -> Result<(String, String), String> {
    match file {
        None => stdin_log(),
        Some(p) if p.as_os_str() == "-" => stdin_log(),
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Ok((path.display().to_string(), String::from_utf8_lossy(&bytes).into_owned()))
        }
    }
}

fn stdin_log() -> Result<(String, String), String> {
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes).map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(("<stdin>".to_owned(), String::from_utf8_lossy(&bytes).into_owned()))
}

/// Warns when a message's total capacity is not the given GPU's (more than 3 % apart).
fn capacity_mismatches(errors: &[OomError], gpu: &Gpu) -> Vec<String> {
    let mut seen = Vec::new();
    errors
        .iter()
        .filter(|e| {
            let total = e.numbers.total_bytes as f64;
            (total - gpu.memory_bytes as f64).abs() > 0.03 * gpu.memory_bytes as f64
        })
        .filter(|e| {
            let fresh = !seen.contains(&e.numbers.total_bytes);
            seen.push(e.numbers.total_bytes);
            fresh
        })
        .map(|e| {
            format!(
                "the message on line {} comes from a GPU with {} total, not {} ({})",
                e.line,
                format_size(e.numbers.total_bytes),
                gpu.name,
                format_size(gpu.memory_bytes)
            )
        })
        .collect()
}

/// Writes the edits chosen for the error with the largest shortfall into the config, with
/// the engine and the writer `check --fix` uses (atomic, through links, refusing when the
/// file changed since it was read). The chosen levers work together: when one cannot be
/// applied, nothing is written. Without a CUDA message, the first vLLM or Ray failure's first
/// advice with an edit is applied (its pieces of advice are alternatives).
fn apply_fixes(
    path: &Path,
    original: &str,
    errors: &[OomError],
    failures: &[Failure],
) -> Result<Option<String>, String> {
    let fixes: Vec<&Fix> = match errors.iter().max_by_key(|e| e.diagnosis.shortfall_bytes) {
        Some(worst) => worst.diagnosis.levers.iter().flat_map(|a| a.fixes.iter()).collect(),
        None => match failures.first() {
            Some(failure) => {
                failure.advice.iter().find(|a| !a.fixes.is_empty()).map_or(Vec::new(), |a| a.fixes.iter().collect())
            }
            None => return Ok(Some("--fix: no OOM message, nothing to change".to_owned())),
        },
    };
    if fixes.iter().all(|f| f.edits.is_empty()) {
        return Ok(Some(
            "--fix: no edits to apply (the advice needs no config change, or no estimator levers were available)"
                .to_owned(),
        ));
    }
    let applied = crate::fix::apply(original, &fixes);
    if applied.count != fixes.len() {
        return Err(format!("--fix: overlapping or invalid edits for {}; nothing written", path.display()));
    }
    crate::write::write_atomically(path, original.as_bytes(), &applied.text).map_err(|e| e.to_string())?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Applicability, Edit};
    use crate::span::Span;

    const MESSAGE: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 22.19 GiB of which 1.00 GiB is free. Of the allocated memory 20.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n";

    fn args(file: &Path, config: Option<&Path>, format: ExplainFormat, fix: bool) -> ExplainArgs {
        ExplainArgs { file: Some(file.to_owned()), config: config.map(Path::to_owned), gpu: None, format, fix }
    }

    /// No estimator: the static table of levers per component.
    struct StaticLevers;

    impl LeverSource for StaticLevers {
        fn levers(&self, _: &Path, _: &str, _: Option<&Gpu>) -> Result<Option<Vec<Lever>>, String> {
            Ok(None)
        }
    }

    /// Levers for a config whose `micro_batch_size: 8` sits at a known place.
    struct Halve;

    impl LeverSource for Halve {
        fn levers(&self, _: &Path, text: &str, _: Option<&Gpu>) -> Result<Option<Vec<Lever>>, String> {
            let at = text.find('8').ok_or("no batch")?;
            let fix = Fix {
                title: "micro_batch_size: 4".into(),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace(Span::new(at, at + 1), "4")],
            };
            Ok(Some(vec![Lever { title: "Halve micro_batch_size".into(), saves_bytes: 5 << 30, fixes: vec![fix] }]))
        }
    }

    #[test]
    fn json_for_a_log_and_an_empty_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("train.log");
        std::fs::write(&log, format!("start\n{MESSAGE}")).unwrap();
        let out = execute(&args(&log, None, ExplainFormat::Json, false), &StaticLevers).unwrap();
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(value["errors"][0]["line"], 2);
        assert_eq!(value["errors"][0]["shortfall_bytes"], 3u64 << 30);
        std::fs::write(&log, "nothing\n").unwrap();
        let out = execute(&args(&log, None, ExplainFormat::Json, false), &StaticLevers).unwrap();
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(value, serde_json::json!({"version": 1, "errors": [], "failures": []}));
    }

    #[test]
    fn missing_files_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.log");
        let err = execute(&args(&missing, None, ExplainFormat::Text, false), &StaticLevers).err().unwrap();
        assert!(err.starts_with("cannot read "), "{err}");
        assert!(!err.contains('\n'));
        let log = dir.path().join("a.log");
        std::fs::write(&log, MESSAGE).unwrap();
        let err = execute(&args(&log, Some(&missing), ExplainFormat::Text, false), &StaticLevers).err().unwrap();
        assert!(err.starts_with("cannot read config"), "{err}");
        let mut bad_gpu = args(&log, None, ExplainFormat::Text, false);
        bad_gpu.gpu = Some("not-a-gpu-9000".into());
        assert!(execute(&bad_gpu, &StaticLevers).is_err());
    }

    #[test]
    fn config_levers_are_chosen_and_fix_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("train.log");
        std::fs::write(&log, MESSAGE).unwrap();
        let config = dir.path().join("lora.yaml");
        std::fs::write(&config, "# keep me\ntrain:\n  micro_batch_size: 8  # comment\n").unwrap();
        let out = execute(&args(&log, Some(&config), ExplainFormat::Json, false), &Halve).unwrap();
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let titles: Vec<&str> =
            value["errors"][0]["advice"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
        assert_eq!(titles, ["Halve micro_batch_size"]);
        let edit = &value["errors"][0]["advice"][0]["fixes"][0]["edits"][0];
        assert_eq!(edit["range"]["start"], serde_json::json!({"line": 3, "column": 21}));
        assert_eq!(edit["range"]["end"], serde_json::json!({"line": 3, "column": 22}));
        assert_eq!(edit["content"], "4");
        assert_eq!(value["errors"][0]["advice"][0]["fixes"][0]["applicability"], "unsafe");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "# keep me\ntrain:\n  micro_batch_size: 8  # comment\n");
        execute(&args(&log, Some(&config), ExplainFormat::Text, true), &Halve).unwrap();
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "# keep me\ntrain:\n  micro_batch_size: 4  # comment\n");
        let leftovers: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().filter_map(Result::ok).map(|e| e.file_name()).collect();
        assert_eq!(leftovers.len(), 2, "{leftovers:?}");
    }

    #[test]
    fn fix_without_levers_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("train.log");
        std::fs::write(&log, MESSAGE).unwrap();
        let config = dir.path().join("c.yaml");
        std::fs::write(&config, "a: 8\n").unwrap();
        let out = execute(&args(&log, Some(&config), ExplainFormat::Text, true), &StaticLevers).unwrap();
        assert!(out.warnings[0].starts_with("--fix: no edits to apply"));
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "a: 8\n");
    }

    #[test]
    fn capacity_mismatch_is_a_warning() {
        let errors = explain(MESSAGE);
        let gpu = crate::catalog::resolve_gpu("A100-80GB").unwrap();
        let warnings = capacity_mismatches(&errors, gpu);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("the message on line 1 comes from a GPU with 22.19 GiB total, not A100-80GB"));
    }
}
