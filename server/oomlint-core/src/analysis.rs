//! One file through the whole pipeline: bytes → document → format → plan → rules.

use crate::catalog::Gpu;
use crate::diagnostic::{Diagnostic, Edit};
use crate::estimate::{self, Estimate};
use crate::format::{self, Format};
use crate::model::{self, LinkedFile, ModelLookup, NoCheckpoints, Resolver};
use crate::plan::Plan;
use crate::recognize::{recognize, Recognition};
use crate::rules::{self, unreadable_input};
use crate::schema;
use crate::settings::{Level, Settings};
use crate::span::LineIndex;
use crate::suppression;
use crate::syntax::{Document, Language};
use crate::versions::Versions;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything oomlint knows about one file.
pub struct Analysis {
    pub path: PathBuf,
    /// The analysed text (empty or a valid prefix when the input was rejected).
    pub text: String,
    pub line_index: LineIndex,
    pub document: Document,
    pub format: Format,
    /// Boxed: a plan is most of an analysis's size, and analyses are moved between threads
    /// and kept per file.
    pub plan: Option<Box<Plan>>,
    pub model: Option<ModelLookup>,
    /// The target GPU the estimate was judged against.
    pub gpu: Option<Gpu>,
    pub estimate: Option<Estimate>,
    pub diagnostics: Vec<Diagnostic>,
    /// The files the analysed one was read with (the configs its launch names, or the launch
    /// that names it), as read: fixes may edit them ([`Analysis::edits_by_file`]).
    pub linked_files: Vec<LinkedFile>,
}

/// A fix's edits of one file, in that file's byte ranges.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEdits<'a> {
    /// The linked file edited; None for the analysed file.
    pub linked: Option<&'a LinkedFile>,
    pub edits: Vec<Edit>,
}

impl Analysis {
    /// Frees the syntax tree, plan, model and estimate, keeping the path, text, line index,
    /// format, language and findings: all that `check`'s reports read. A run over many
    /// files holds every analysis until it prints.
    pub fn into_findings(self) -> Analysis {
        let Analysis { path, text, line_index, document, format, diagnostics, linked_files, .. } = self;
        let document = Document { root: None, comments: Vec::new(), program: None, ..document };
        Analysis {
            path,
            text,
            line_index,
            document,
            format,
            plan: None,
            model: None,
            gpu: None,
            estimate: None,
            diagnostics,
            linked_files,
        }
    }

    /// `edits` (of a fix) grouped by the file each edits ([`edits_by_file`]).
    pub fn edits_by_file(&self, edits: &[Edit]) -> Option<Vec<FileEdits<'_>>> {
        edits_by_file(&self.linked_files, edits)
    }
}

/// `edits` (of a fix) grouped by the file each edits, the analysed file first, each in its
/// own file's byte ranges: the analysed file's, or one of `linked` (the files it was read
/// with) for an edit at a [`Span::linked`](crate::span::Span::linked) place. None when an
/// edit lies in no file the analysis read.
pub fn edits_by_file<'a>(linked: &'a [LinkedFile], edits: &[Edit]) -> Option<Vec<FileEdits<'a>>> {
    let mut out = vec![FileEdits { linked: None, edits: Vec::new() }];
    for edit in edits {
        let (file, span) = match edit.span.as_linked() {
            Some((file, local)) => (Some(linked.get(file)?), local),
            None => (None, edit.span),
        };
        let edit = Edit { span, content: edit.content.clone() };
        match out.iter_mut().find(|f| f.linked.map(|l| &l.path) == file.map(|l| &l.path)) {
            Some(group) => group.edits.push(edit),
            None => out.push(FileEdits { linked: file, edits: vec![edit] }),
        }
    }
    Some(out)
}

/// What a leaf knows of the world around one file, handed to the core as values.
///
/// The target GPU is chosen in one order, for every rule, the estimate, hovers and levers:
/// [`Options::gpu`] (`--gpu` on the command line), then a `# oomlint: gpu=` modeline in
/// the file, then [`Options::default_gpu`] (the editor's setting), then `gpu` in the
/// project's settings.
#[derive(Clone, Default)]
pub struct Options {
    /// Forces the format (e.g. from `oomlint.toml`'s `format` table).
    pub format: Option<Format>,
    /// The GPU named for this run (`--gpu`): wins over the file and the settings.
    pub gpu: Option<Gpu>,
    /// The GPU the editor names: below a modeline, above the project's settings.
    pub default_gpu: Option<Gpu>,
    /// The world size named for this run (`--gpus`), for a file that leaves it to its launch:
    /// wins over a `gpus=` modeline and the settings' `gpus`.
    pub gpus: Option<u64>,
    /// Project settings (`oomlint.toml`), as the leaf found them for this file.
    pub settings: Arc<Settings>,
    /// Framework versions pinned in the dependency files near the file, as the leaf found them.
    pub versions: Arc<Versions>,
    /// Reads the local checkpoints the file names.
    pub resolver: Option<Arc<dyn Resolver>>,
    /// When the estimate carries levers (`check` needs them only for memory findings).
    pub levers: estimate::Levers,
    /// Whether the user named this file (a path typed on the command line): when oomlint
    /// does not recognise it, it says so and reports its syntax errors.
    pub named_by_user: bool,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("format", &self.format)
            .field("gpu", &self.gpu)
            .field("default_gpu", &self.default_gpu)
            .field("gpus", &self.gpus)
            .field("settings", &self.settings)
            .field("versions", &self.versions)
            .field("resolver", &self.resolver.is_some())
            .field("levers", &self.levers)
            .field("named_by_user", &self.named_by_user)
            .finish()
    }
}

impl Options {
    /// The GPU a file is judged against, in the order documented on [`Options`];
    /// `settings` are the project's with the file's modeline applied.
    fn target_gpu(&self, settings: &Settings) -> Option<Gpu> {
        let named = |name: &str| crate::catalog::gpus::resolve_gpu(name).ok().cloned();
        let file = settings.gpu.as_deref();
        self.gpu
            .clone()
            .or_else(|| file.filter(|_| settings.gpu_from_modeline).and_then(named))
            .or_else(|| self.default_gpu.clone())
            .or_else(|| file.and_then(named))
    }
}

/// Why a file oomlint does not recognise is skipped, when recognition found no other reason.
const NOT_A_TRAINING_CONFIG: &str =
    "oomlint does not take it for a config, script or notebook of a framework it reads (LitGPT, TRL, Unsloth, transformers, Axolotl, LLaMA-Factory, accelerate, DeepSpeed, allocator variables)";

/// Analyses raw bytes read from `path`.
pub fn analyze_bytes(path: &Path, bytes: &[u8], options: &Options) -> Analysis {
    match unreadable_input::accept(bytes) {
        Ok(text) => analyze_text(path, text.to_string(), options),
        Err(rejection) => {
            let prefix = bytes.get(..rejection.0).unwrap_or_default();
            let text = if bytes.len() > unreadable_input::MAX_FILE_BYTES {
                String::new()
            } else {
                String::from_utf8_lossy(prefix).into_owned()
            };
            let document = Document {
                language: Language::Yaml,
                root: None,
                comments: Vec::new(),
                problems: Vec::new(),
                program: None,
            };
            let ctx = rules::Context {
                text: &text,
                document: &document,
                format: Format::Unknown,
                plan: None,
                model: None,
                gpu: None,
                estimate: None,
                rejected: Some(&rejection),
                versions: &Versions::default(),
                schema: &schema::Findings::default(),
                own_arguments: None,
                unrecognized: None,
                suppressions: None,
            };
            let diagnostics = configured(rules::check(&ctx), &options.settings, path);
            Analysis {
                path: path.to_path_buf(),
                line_index: LineIndex::new(&text),
                text,
                document,
                format: Format::Unknown,
                plan: None,
                model: None,
                gpu: None,
                estimate: None,
                diagnostics,
                linked_files: Vec::new(),
            }
        }
    }
}

/// Analyses text; the language comes from the file name (a modeline's format can say otherwise).
pub fn analyze_text(path: &Path, text: String, options: &Options) -> Analysis {
    let settings = options.settings.with_modeline(&text);
    let forced =
        options.format.or_else(|| format::detect::modeline_format(&text)).or_else(|| settings.format_for(path));
    let language = format::language_of(path).or_else(|| forced.map(Format::language)).unwrap_or(Language::Yaml);
    let document = format::document(&text, language);
    let recognition = match forced {
        Some(format) => Recognition { format, reason: None },
        None => recognize(path, &text, &document),
    };
    let mut format = recognition.format;
    let resolver = options.resolver.as_deref().unwrap_or(&NoCheckpoints);
    // A shell script that launches training is read as the program it runs, with the files
    // its launch names.
    let (launched, launch_flags) =
        match (document.language == Language::Shell && forced.is_none() && format == Format::Env)
            .then(|| format::launch::plan(&text, path, resolver))
            .flatten()
        {
            Some((program, plan, flags)) => (Some((program, plan)), Some(flags)),
            None => (None, None),
        };
    // A config opened alone is read with the launch next to it that runs it.
    let scripts = match (&launched, document.language) {
        (None, Language::Yaml | Language::Json)
            if !document.is_incomplete() && format.framework().is_some_and(|f| f.trains()) =>
        {
            resolver.launch_scripts(path)
        }
        _ => Vec::new(),
    };
    let with_launch = format::launch::config_plan(&document, &text, path, format, &scripts, resolver);
    let launch_note = with_launch.as_ref().map(|(_, plan, script)| {
        let name =
            Path::new(&script.path).file_name().map_or(script.path.clone(), |n| n.to_string_lossy().into_owned());
        match plan.stated_world_size() {
            Some(1) => format!("analysed with the launch in {name} (1 process)"),
            Some(n) => format!("analysed with the launch in {name} ({n} processes)"),
            None => format!("analysed with the launch in {name}"),
        }
    });
    let launched = launched.or(with_launch.map(|(format, plan, _)| (format, plan)));
    let plan = match launched {
        Some((program, plan)) => {
            format = program;
            Some(Box::new(plan))
        }
        None if document.is_incomplete() => None,
        None => format::build_plan(format, &document, &text).map(Box::new),
    };
    let model = plan.as_ref().and_then(|p| model::lookup(p, path, resolver));
    let gpu = options.target_gpu(&settings);
    // What a notebook or script installs for itself wins over the repository's pins.
    let mut versions = match document.language {
        Language::Python | Language::Notebook | Language::Shell => crate::versions::from_install_commands(&text, path),
        _ => Versions::default(),
    };
    versions.merge_missing(Versions::clone(&options.versions));
    let mut versions = versions.with_overrides(&settings.framework_versions);
    if let Some((launcher, requirements)) = format::launcher_requirements(format, &document) {
        versions = versions.with_launcher_requirements(launcher, requirements);
    }
    let mut plan = plan;
    let stated_gpus = match (options.gpus, settings.gpus) {
        (Some(n), _) => Some((n, format!("`--gpus {n}`"))),
        (None, Some(n)) if settings.gpus_from_modeline => Some((n, format!("`# oomlint: gpus={n}`"))),
        (None, Some(n)) => Some((n, format!("`gpus = {n}` in the project's settings"))),
        (None, None) => None,
    };
    let gpus_note = match (plan.as_mut(), stated_gpus) {
        (Some(plan), Some((n, from))) => plan
            .assume_world_size(n, &from)
            .then(|| format!("world size {n}, as {from} states (the file leaves it to the launch)")),
        _ => None,
    };
    // The releases a notebook's saved outputs record decide what its run allocated (the loss,
    // the experts); rules keep the stated pins, since the banner names no TRL release to pair
    // it with.
    let recorded = match document.language {
        Language::Notebook => crate::versions::from_recorded_run(&text),
        _ => Versions::default(),
    };
    let run_versions = versions.clone().with_recorded_run(recorded);
    if let Some(plan) = plan.as_mut() {
        format::checkpoint_quantization::apply(plan, model.as_ref().and_then(ModelLookup::architecture));
        format::python::unsloth_grpo_batch(plan, &versions);
        format::python::unsloth_loss(plan, &run_versions, model.as_ref().and_then(ModelLookup::architecture));
    }
    let mut releases = estimate::Context::from_versions(&run_versions);
    releases.sample_tokens = settings.sample_tokens.map(|n| {
        let from = if settings.sample_tokens_from_modeline {
            format!("`# oomlint: sample-tokens={n}`")
        } else {
            format!("`sample-tokens = {n}` in the project's settings")
        };
        (n, from)
    });
    let estimate = match (&plan, model.as_ref().and_then(ModelLookup::architecture)) {
        (Some(plan), Some(arch)) if format.framework().is_some_and(|f| f.trains()) && plan.trains() => {
            Some(estimate::estimate_with(plan, arch, gpu.as_ref(), &releases, options.levers))
        }
        _ => None,
    };
    let mut estimate = estimate;
    if let (Some(estimate), Some(plan)) = (estimate.as_mut(), plan.as_ref()) {
        estimate.missing_inputs.extend(format::unknown_inputs(&document, plan));
        estimate.notes.extend(launch_note);
        estimate.notes.extend(gpus_note);
    }
    let schema_rules_on = ["unknown-key", "invalid-value", "removed-key"]
        .iter()
        .filter_map(|name| rules::find(name))
        .any(|rule| settings.level(rule, path) != Level::Off);
    // A launch script's document holds its variables, not the program's flags.
    let findings = if document.is_incomplete() || !schema_rules_on || document.language == Language::Shell {
        schema::Findings::default()
    } else {
        let mut findings = schema::check(format, &document);
        schema::script::removed_keys(&document, &mut findings);
        schema::script::subclass_keys(&document, &mut findings);
        findings
    };
    // A config file of the repository's own scripts may carry their own arguments: ask the
    // leaf for their dataclasses only when the schema found keys it does not know.
    let hf_config = matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Transformers)
        && matches!(document.language, Language::Yaml | Language::Json);
    let strange_keys = !findings.unknown_keys.is_empty() || !findings.removed_keys.is_empty();
    let own_arguments = (hf_config && strange_keys).then(|| resolver.own_arguments(path)).flatten();
    let line_index = LineIndex::new(&text);
    // Files of no known format get no findings: oomlint runs over whole repositories. One
    // the user named gets a note saying so, and its syntax errors.
    let diagnostics = if format == Format::Unknown && !options.named_by_user {
        Vec::new()
    } else if format == Format::Unknown {
        let reason = recognition.reason.as_deref().unwrap_or(NOT_A_TRAINING_CONFIG);
        let ctx = rules::Context {
            text: &text,
            document: &document,
            format,
            plan: None,
            model: None,
            gpu: None,
            estimate: None,
            rejected: None,
            versions: &versions,
            schema: &findings,
            own_arguments: None,
            unrecognized: Some(reason),
            suppressions: None,
        };
        let diagnostics = if document.problems.is_empty() {
            rules::check_only(&["unrecognized-file"], &ctx)
        } else if matches!(document.language, Language::Yaml | Language::Json | Language::Toml) {
            rules::check_only(&["yaml-syntax"], &ctx)
        } else {
            Vec::new()
        };
        configured(diagnostics, &settings, path)
    } else {
        let ctx = rules::Context {
            text: &text,
            document: &document,
            format,
            plan: plan.as_deref(),
            model: model.as_ref(),
            gpu: gpu.as_ref(),
            estimate: estimate.as_ref(),
            rejected: None,
            versions: &versions,
            schema: &findings,
            own_arguments: own_arguments.as_deref(),
            unrecognized: None,
            suppressions: None,
        };
        let mut diagnostics = configured(rules::check(&ctx), &settings, path);
        let mut suppressions = suppression::parse(&text, &document.comments, &line_index);
        suppression::apply(&mut diagnostics, &mut suppressions, &line_index);
        let ctx = rules::Context { suppressions: Some(&suppressions), ..ctx };
        diagnostics.extend(configured(rules::check_only(&["unused-suppression"], &ctx), &settings, path));
        diagnostics.sort_by_key(|d| (d.span.start, d.code));
        diagnostics
    };
    let mut diagnostics = diagnostics;
    if let Some(plan) = plan.as_deref().filter(|p| !p.linked_files.is_empty()) {
        keep_in_file(&mut diagnostics, estimate.as_mut(), plan, text.len());
    }
    // Rules read the script as its variables; a position in it may be on a flag too.
    let document = match launch_flags {
        Some(flags) => format::launch::with_flags(document, flags),
        None => document,
    };
    let linked_files = plan.as_ref().map_or_else(Vec::new, |p| {
        p.linked_files.iter().map(|l| LinkedFile { path: l.path.clone(), text: l.text.to_string() }).collect()
    });
    Analysis {
        path: path.to_path_buf(),
        line_index,
        text,
        document,
        format,
        plan,
        model,
        gpu,
        estimate,
        diagnostics,
        linked_files,
    }
}

/// Findings about values set in the files the analysed one is read with (the configs its
/// launch names, or the launch beside it) land on the word of this file that names the other
/// and say where the value is set; their related places there become notes. The run this file
/// launches (or is launched by) is what fails, so a finding wholly in the other file is
/// reported here too. A fix may edit the other file where the value is set (its edits keep
/// their [`Span::linked`](crate::span::Span::linked) places); one with an edit in no file
/// read is dropped.
fn keep_in_file(diagnostics: &mut [Diagnostic], estimate: Option<&mut Estimate>, plan: &Plan, len: usize) {
    let outside = |span: crate::span::Span| span.end > len;
    let linked_place = |span: crate::span::Span| {
        let (file, local) = span.as_linked()?;
        Some((plan.linked_files.get(file)?, local))
    };
    let place = |span| linked_place(span).map(|(l, local)| (l.named_at.unwrap_or_default(), l.set_in(local)));
    let editable = |e: &Edit| {
        !outside(e.span)
            || e.span
                .as_linked()
                .is_some_and(|(file, local)| plan.linked_files.get(file).is_some_and(|l| local.end <= l.text.len()))
    };
    for d in diagnostics.iter_mut() {
        if outside(d.span) {
            let (span, set_in) = place(d.span).unwrap_or_default();
            d.span = span;
            d.message.push_str(&set_in);
        }
        for r in d.related.iter().filter(|r| outside(r.span)) {
            if let Some((linked, local)) = linked_place(r.span) {
                let at = linked.at(local);
                d.notes.push(match r.message.strip_suffix(" here") {
                    Some(what) => format!("{what} in {at}"),
                    None => format!("{} ({at})", r.message),
                });
            }
        }
        d.related.retain(|r| !outside(r.span));
        d.fixes.retain(|f| f.edits.iter().all(editable));
    }
    if let Some(estimate) = estimate {
        for lever in &mut estimate.levers {
            lever.fixes.retain(|f| f.edits.iter().all(editable));
        }
    }
}

/// Drops findings of rules the settings switch off for `path` and applies severity overrides.
fn configured(mut diagnostics: Vec<Diagnostic>, settings: &Settings, path: &Path) -> Vec<Diagnostic> {
    diagnostics.retain_mut(|d| match rules::find(d.code).map(|rule| settings.level(rule, path)) {
        Some(Level::Off) => false,
        Some(Level::Severity(severity)) => {
            d.severity = severity;
            true
        }
        Some(Level::Default) | None => true,
    });
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::python::PARSES;

    /// Tree-sitter parses in one analysis of `file` (a fixture) against an A10G.
    // Test-only I/O: reads the fixture.
    #[allow(clippy::disallowed_methods)]
    fn parses(file: &str) -> usize {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures").join(file);
        let text = std::fs::read_to_string(&path).expect("a fixture");
        let gpu = crate::catalog::gpus::resolve_gpu("A10G").ok().cloned();
        let options = Options { gpu, ..Options::default() };
        PARSES.with(|p| p.set(0));
        let analysis = analyze_text(&path, text, &options);
        assert!(analysis.estimate.is_some() && !analysis.diagnostics.is_empty(), "{file}: every stage ran");
        PARSES.with(std::cell::Cell::get)
    }

    #[test]
    fn a_script_or_notebook_is_parsed_once_per_analysis() {
        // Detection, the plan, the schema's removed keys and the rules read the one program.
        assert_eq!(parses("python/unsloth-grpo-oom.py"), 1, "a script");
        assert_eq!(parses("python/unsloth-grpo.ipynb"), 1, "a notebook");
    }

    const SCRIPT: &str = r#"from unsloth import FastLanguageModel
from trl import GRPOConfig, GRPOTrainer
model, tok = FastLanguageModel.from_pretrained("unsloth/Qwen2.5-7B-Instruct", max_seq_length=4096, fast_inference=True, gpu_memory_utilization=0.9)
model = FastLanguageModel.get_peft_model(model, r=16, use_gradient_checkpointing=False)
args = GRPOConfig(fp16=True, bf16=True, per_device_train_batch_size=8, num_generations=8, max_completion_length=2048, evaluation_strategy="no", eval_strategy="no")
GRPOTrainer(model=model, args=args)
"#;

    /// Every fix's edits (rules' and levers'), as (title, contents).
    fn fixes(path: &str, text: &str) -> Vec<(String, Vec<String>)> {
        let gpu = crate::catalog::gpus::resolve_gpu("A10G").ok().cloned();
        let analysis = analyze_text(Path::new(path), text.to_string(), &Options { gpu, ..Options::default() });
        let levers = analysis.estimate.iter().flat_map(|e| e.levers.iter().flat_map(|l| &l.fixes));
        analysis
            .diagnostics
            .iter()
            .flat_map(|d| &d.fixes)
            .chain(levers)
            .map(|f| (f.title.clone(), f.edits.iter().map(|e| e.content.clone()).collect()))
            .collect()
    }

    fn contents<'f>(fixes: &'f [(String, Vec<String>)], title: &str) -> Vec<&'f str> {
        let (_, edits) =
            fixes.iter().find(|(t, _)| t.starts_with(title)).unwrap_or_else(|| panic!("{title}: {fixes:?}"));
        edits.iter().map(String::as_str).collect()
    }

    #[test]
    fn fixes_are_spelled_in_the_language_of_the_script_or_notebook() {
        let script = fixes("train.py", SCRIPT);
        assert_eq!(contents(&script, "Set `fp16: false`"), ["False"]);
        assert_eq!(contents(&script, "Enable gradient checkpointing"), ["\"unsloth\""]);
        assert_eq!(contents(&script, "Shorten the maximum sequence length"), ["2048"]);
        // A keyword argument is no line to delete: the removed key with its replacement set has no fix.
        assert!(!script.iter().any(|(t, _)| t.starts_with("Remove")), "{script:?}");
        let sources: Vec<String> = SCRIPT.split_inclusive('\n').map(|l| serde_json::to_string(l).unwrap()).collect();
        let notebook = format!("{{\"cells\": [{{\"cell_type\": \"code\", \"source\": [{}]}}]}}", sources.join(", "));
        let cells = fixes("train.ipynb", &notebook);
        assert_eq!(contents(&cells, "Set `fp16: false`"), ["False"]);
        assert_eq!(contents(&cells, "Enable gradient checkpointing"), ["\\\"unsloth\\\""]);
        let yaml = "model_name_or_path: Qwen/Qwen2.5-7B\nfp16: true\nbf16: true\nevaluation_strategy: 'no'\neval_strategy: 'no'\n";
        let config = fixes("sft.yaml", yaml);
        assert_eq!(contents(&config, "Set `fp16: false`"), ["false"]);
        assert_eq!(contents(&config, "Remove `evaluation_strategy`"), [""]);
    }
}
