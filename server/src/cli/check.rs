//! `oomlint check [PATHS...]`: files are analysed on all cores, reported in order.

mod parallel;

use super::usage_error;
use crate::analysis::{analyze_bytes, analyze_text, Analysis, Options};
use crate::catalog::Gpu;
use crate::diagnostic::{Applicability, Severity};
use crate::estimate::Levers;
use crate::fix;
use crate::format::{language_of, Format};
use crate::project::Project;
use crate::render;
use crate::settings::Settings;
use clap::{Args, ValueEnum};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Full,
    Concise,
    Json,
    Github,
    Sarif,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Files or directories (default: the current directory).
    paths: Vec<PathBuf>,
    /// Target GPU: a name such as A10G or `A100 80GB`, or `auto` to detect it.
    #[arg(long)]
    gpu: Option<String>,
    /// World size (GPUs in all) of runs whose launch is not in the file; a launch in the file wins.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    gpus: Option<u64>,
    #[arg(long, value_enum, default_value = "full")]
    output_format: OutputFormat,
    /// oomlint.toml (or pyproject.toml with [tool.oomlint]) to use instead of the nearest one.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run only these rules (codes, code prefixes such as OOM1, names, or ALL), replacing the config's `select`.
    #[arg(long, value_delimiter = ',')]
    select: Vec<String>,
    /// Skip these rules (codes, code prefixes or names), on top of the config's `ignore`.
    #[arg(long, value_delimiter = ',')]
    ignore: Vec<String>,
    /// Apply safe fixes in place (repeated until nothing changes).
    #[arg(long)]
    fix: bool,
    /// With --fix, also apply unsafe fixes (they change behaviour: review the diff).
    #[arg(long, requires = "fix")]
    unsafe_fixes: bool,
    /// Files or directories not to check (globs, matched against each path as given and
    /// from the current directory), on top of the settings' `exclude`.
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Skip files oomlint does not recognise without a note, as a directory walk does
    /// (the pre-commit hooks pass it: they hand oomlint every YAML, JSON and script).
    #[arg(long)]
    skip_unrecognized: bool,
}

/// Config files under `root` (recursively, honouring .gitignore); a file is itself, and
/// named by the user.
fn collect(root: &Path, files: &mut Vec<PathBuf>, named: &mut HashSet<PathBuf>) -> Result<(), String> {
    let meta = std::fs::metadata(root).map_err(|e| format!("cannot read {}: {e}", root.display()))?;
    if meta.is_file() {
        files.push(root.to_path_buf());
        named.insert(root.to_path_buf());
        return Ok(());
    }
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && language_of(e.path()).is_some())
        .map(|e| e.into_path())
        .collect();
    found.sort();
    files.extend(found);
    Ok(())
}

pub fn run(args: &CheckArgs) -> ExitCode {
    let config = match &args.config {
        Some(path) => match crate::project::read_settings(path) {
            Ok(Some(settings)) => Some(Arc::new(settings)),
            Ok(None) => return usage_error(format!("{} has no [tool.oomlint] table", path.display())),
            Err(e) => return usage_error(format!("config {e}")),
        },
        None => None,
    };
    let roots = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    let excluded = match exclusions(&args.exclude) {
        Ok(set) => set,
        Err(e) => return usage_error(e),
    };
    let mut files = Vec::new();
    let mut named = HashSet::new();
    for root in &roots {
        if let Err(e) = collect(root, &mut files, &mut named) {
            return usage_error(e);
        }
    }
    if !excluded.is_empty() {
        files.retain(|file| !file.ancestors().any(|path| excluded.is_match(path)));
    }
    if args.skip_unrecognized {
        named.clear();
    }
    let gpu = match super::gpu::resolve(args.gpu.as_deref(), None) {
        Ok(gpu) => gpu,
        Err(e) => return usage_error(e),
    };
    let job = Job {
        args,
        named,
        project: Arc::new(Project::from_environment()),
        config,
        gpu,
        fixing: args.fix.then_some(if args.unsafe_fixes { Applicability::Unsafe } else { Applicability::Safe }),
        writing: std::sync::Mutex::new(()),
    };
    let outcomes = match parallel::run_in_order(&files, &job) {
        Ok(outcomes) => outcomes,
        Err(e) => return usage_error(e),
    };
    if args.fix {
        let fixes: usize = outcomes.iter().map(|o| o.fixes).sum();
        let fixed_files: usize = outcomes.iter().map(|o| o.files).sum();
        eprintln!("oomlint: applied {fixes} fix(es) to {fixed_files} file(s)");
    }
    let analyses: Vec<Analysis> = outcomes.into_iter().filter_map(|o| o.analysis).collect();
    let mut out = String::new();
    match args.output_format {
        OutputFormat::Json => {
            out = serde_json::to_string_pretty(&render::json::report(&analyses)).unwrap_or_default();
            out.push('\n');
        }
        OutputFormat::Sarif => {
            out = serde_json::to_string_pretty(&render::sarif::report(&analyses)).unwrap_or_default();
            out.push('\n');
        }
        OutputFormat::Concise => analyses.iter().for_each(|a| render::concise(a, &mut out)),
        OutputFormat::Github => analyses.iter().for_each(|a| render::github::render(a, &mut out)),
        OutputFormat::Full => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            analyses.iter().for_each(|a| render::full::render(a, color, &mut out));
            out.push_str(&summary(&analyses));
        }
    }
    super::print(&out);
    let failed = analyses.iter().flat_map(|a| &a.diagnostics).any(|d| d.severity == Severity::Error);
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What every file of one `check` shares.
struct Job<'a> {
    args: &'a CheckArgs,
    /// The files the user named (not found by a walk), unless `--skip-unrecognized`.
    named: HashSet<PathBuf>,
    /// The files around the checked ones, read once for the whole run.
    project: Arc<Project>,
    /// The `--config` settings, replacing the nearest oomlint.toml.
    config: Option<Arc<Settings>>,
    gpu: Option<Gpu>,
    /// The least applicability `--fix` applies; `None` without `--fix`.
    fixing: Option<Applicability>,
    /// Held while one file's fixes are worked out and written.
    writing: std::sync::Mutex<()>,
}

/// One file: its (fixed) analysis and the fixes applied to it; no analysis when the
/// settings exclude it.
struct Outcome {
    analysis: Option<Analysis>,
    fixes: usize,
    /// Files the fixes wrote: this one, and those it was read with that they edited.
    files: usize,
}

impl parallel::Task for Job<'_> {
    type Output = Outcome;

    /// Analyses one file and, with `--fix`, writes the fixed text atomically (the file is
    /// owned by this call: `run_in_order` never runs two calls on one file at once).
    fn run(&self, file: &Path) -> Result<Outcome, String> {
        let options = self.project.options(file, self.config.as_ref()).map_err(|e| format!("config {e}"))?;
        if options.settings.excludes(file) {
            return Ok(Outcome { analysis: None, fixes: 0, files: 0 });
        }
        let settings =
            options.settings.with_selection(&self.args.select, &self.args.ignore).map_err(|e| e.to_string())?;
        let options = Options {
            gpu: self.gpu.clone(),
            gpus: self.args.gpus,
            settings: Arc::new(settings),
            levers: Levers::ForFindings,
            named_by_user: self.named.contains(file),
            ..options
        };
        let bytes = read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let analysis = analyze_bytes(file, &bytes, &options);
        let Some(minimum) = self.fixing.filter(|_| !analysis.text.is_empty() && analysis.text.len() == bytes.len())
        else {
            return Ok(Outcome { analysis: Some(analysis.into_findings()), fixes: 0, files: 0 });
        };
        // A fix may write a file another one reads or fixes too (a launch and the config it
        // names): fixes are worked out and written one file at a time, from the bytes on disk.
        let _writing = self.writing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let bytes = read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Ok(Outcome { analysis: Some(analysis.into_findings()), fixes: 0, files: 0 });
        };
        let fixed = fix::fix_text(file, text, &options, minimum);
        if fixed.count == 0 {
            return Ok(Outcome { analysis: Some(analysis.into_findings()), fixes: 0, files: 0 });
        }
        let mut files = 0;
        if fixed.text != text {
            crate::write::write_atomically(file, &bytes, &fixed.text).map_err(|e| e.to_string())?;
            files += 1;
        }
        for linked in &fixed.linked {
            let path = Path::new(&linked.path);
            crate::write::write_atomically(path, linked.original.as_bytes(), &linked.text)
                .map_err(|e| e.to_string())?;
            files += 1;
        }
        let analysis = analyze_text(file, fixed.text, &options).into_findings();
        Ok(Outcome { analysis: Some(analysis), fixes: fixed.count, files })
    }

    fn writes_files(&self) -> bool {
        self.fixing.is_some()
    }
}

/// The file's bytes. Unlike `std::fs::read` (and `File::read_to_end`), without a `stat` and
/// a `seek` for a size hint: configs are small, and on a virtual machine each system call
/// costs about as much as parsing a short file.
fn read(file: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(16 << 10);
    std::fs::File::open(file)?.take(u64::MAX).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The closing line: files checked and files skipped as not training configs, then the
/// findings.
fn summary(analyses: &[Analysis]) -> String {
    let count = |s: Severity| analyses.iter().flat_map(|a| &a.diagnostics).filter(|d| d.severity == s).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let skipped = analyses.iter().filter(|a| a.format == Format::Unknown).count();
    let checked = analyses.len() - skipped;
    let files = match skipped {
        0 => format!("{checked} file(s) checked"),
        _ => format!("{checked} file(s) checked, {skipped} not training config(s)"),
    };
    if errors + warnings == 0 {
        return format!("oomlint: {files}, no problems\n");
    }
    format!("oomlint: {files}: {errors} error(s), {warnings} warning(s)\n")
}

/// The `--exclude` globs, matched against paths as given.
fn exclusions(globs: &[String]) -> Result<globset::GlobSet, String> {
    let mut set = globset::GlobSetBuilder::new();
    for glob in globs {
        let glob = glob.strip_prefix("./").unwrap_or(glob);
        set.add(globset::Glob::new(glob).map_err(|e| format!("--exclude {glob}: {e}"))?);
    }
    set.build().map_err(|e| e.to_string())
}
