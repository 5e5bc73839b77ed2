//! Launch scripts (`.sh`, `.slurm`, `.sbatch`): the training command a launcher runs, read
//! into the plan of the framework that parses its flags, with the world size the launch sets.
//!
//! Launchers, as their argument parsers read them:
//! - `accelerate launch` (`accelerate/commands/launch.py` `launch_command_parser`):
//!   `--num_processes` is the total across machines (`multi_gpu_launcher` runs
//!   `num_processes // num_machines` per node), so it is the world size;
//! - `torchrun` / `python -m torch.distributed.run` (`torch/distributed/run.py`
//!   `get_args_parser`): `--nproc_per_node` × `--nnodes`;
//! - `deepspeed` (`deepspeed/launcher/runner.py` `parse_args`): `--num_gpus` × `--num_nodes`;
//! - `srun`, `nohup`, `env`, `exec`, `time`, `uv run` before any of them, and `VAR=value` prefixes;
//!   a launch inside a `bash -c '…'` string is one of the script's commands (`syntax::shell`).
//!
//! Programs: `trl sft|dpo|grpo` (`trl/cli.py`), `llamafactory-cli train CONFIG key=value`
//! (`llamafactory/hparams/parser.py` `read_args`: `key=value` after the YAML), `axolotl train
//! CONFIG` / `-m axolotl.cli.train CONFIG`, `litgpt finetune_lora|finetune|… --key value`
//! (jsonargparse, `--train.micro_batch_size`), and a Python script whose `--key value` flags
//! an `HfArgumentParser` reads (recognised by the flags themselves, as a config file is).
//! The files a launch names are read through the leaf's [`Resolver`] and merged as the
//! launcher does: the program's config (`trl … --config F`, `llamafactory-cli train F`,
//! `axolotl train F`, `litgpt … --config F`) under its command-line flags (TRL's
//! `TrlParser.parse_args_and_config` sets the YAML as defaults the flags override;
//! LLaMA-Factory's `read_args` merges `key=value` over the YAML; Axolotl's `load_cfg`
//! applies `--key value` over the file; jsonargparse's `--config` is overridden by later
//! flags), the DeepSpeed JSON a `deepspeed` setting names (recognised by its content,
//! whatever the extension), and `accelerate launch --config_file F` (its launch flags win,
//! as `launch_command` fills only the arguments left at their defaults from the config).
//! Values from those files carry [`crate::plan::Origin::Linked`] origins.
//!
//! GPUs the launch makes visible: a `CUDA_VISIBLE_DEVICES` prefix or export, accelerate's
//! `--gpu_ids`, and SLURM's `--gres=gpu:N` / `--gpus-per-node` (`#SBATCH` lines or `srun`'s
//! options) with `--nodes`. They set the processes where the launcher leaves the count to
//! the devices: `torchrun --nproc_per_node gpu|auto` and `deepspeed` without `--num_gpus`
//! (`runner.py` takes every visible device). A launch that passes `$SLURM_NNODES`,
//! `$SLURM_JOB_NUM_NODES`, `$SLURM_GPUS_ON_NODE` or `$SLURM_GPUS_PER_NODE` to
//! `--nnodes`/`--num_machines`/`--nproc_per_node`/`--num_processes` gets the counts of the
//! script's `#SBATCH` lines (the shell reader knows those variables).

use super::{build_plan, deepspeed, Format, Reader};
use crate::model::{LinkedFile, Resolver};
use crate::plan::{place_in, Insertion, InsertionStyle, LaunchSettings, LinkedFileRef, Plan, Sourced, VisibleGpus};
use crate::span::Span;
use crate::syntax::shell::{self, Command, Script, Word};
use crate::syntax::{self, Document, Entry, Language, Mapping, Node, Scalar, ScalarKind, Value};
use std::path::Path;

mod accelerate_flags;
pub(crate) mod cursor;
mod options;

use accelerate_flags::AccelerateFlags;
use options::{ACCELERATE_VALUED, DEEPSPEED_VALUED, TORCHRUN_VALUED, UV_RUN_VALUED};

/// The launch a script runs: the program's format and flags, and the world size.
struct Launch {
    format: Format,
    flags: Mapping,
    /// Whether the program is a Python script of the repository (not a framework's CLI).
    script: bool,
    launcher: Option<&'static str>,
    processes: Option<(Word, u64)>,
    machines: Option<(Word, u64)>,
    /// The launcher starts one process per visible GPU (`--nproc_per_node gpu`, `deepspeed`
    /// without `--num_gpus`).
    per_visible_gpu: bool,
    visible_devices: Option<Word>,
    /// SLURM options of an `srun` before the launcher.
    srun: Vec<Word>,
    /// The program's config file.
    config: Option<Word>,
    /// `accelerate launch --config_file`.
    accelerate_config: Option<Word>,
    /// `accelerate launch --mixed_precision`.
    mixed_precision: Option<Word>,
    /// `accelerate launch`'s flags that stand for keys of its config.
    accelerate_flags: AccelerateFlags,
    /// The end of the command's last word, where an added flag goes: None when the words are
    /// not in the order of the text (a word taken from a variable defined elsewhere).
    end: Option<usize>,
}

/// The plan of the training launch in a shell script: (the program's format, its plan, the
/// flags the program reads: the script's own at their words, over its config's).
/// `path` is the script's, from which `resolver` finds the files the launch names.
pub(crate) fn plan(text: &str, path: &Path, resolver: &dyn Resolver) -> Option<(Format, Plan, Mapping)> {
    let script = shell::parse(text)?;
    let launch = script.commands.iter().rev().find_map(launch)?;
    let mut linked: Vec<LinkedFileRef> = Vec::new();
    let mut flags = launch.flags.clone();
    // The program's config file, under the flags.
    let config = launch.config.as_ref().and_then(|w| Some((w, resolver.linked_file(path, w.text.as_deref()?)?)));
    if let Some((word, file)) = config {
        let language = if file.path.ends_with(".json") { Language::Json } else { Language::Yaml };
        if let Some(mut base) = linked_mapping(&file.text, language, linked.len()) {
            linked.push(LinkedFileRef::new(&file.path, &file.text, language, Some(word.span)));
            merge(&mut base, flags);
            flags = base;
        }
    }
    let format = match launch.format {
        // A script with `--config F`, recognised by its flags and the file together.
        Format::Unknown => hf_format(&flags)?,
        format => format,
    };
    let root = Node { span: Span::new(0, text.len()), value: Value::Mapping(flags) };
    let (mut plan, root) = launched(&script, &launch, format, (Language::Shell, root, text), linked, path, resolver)?;
    // The allocator variables the script sets, as for any shell script.
    plan.allocator = super::env::allocator_settings(&syntax::parse(text, Language::Shell), text);
    plan.insertion = flag_insertion(format, &launch);
    let Value::Mapping(flags) = root.value else { return None };
    let mut flags = match format {
        Format::Verl => nested(flags),
        Format::Openrlhf => typed(flags),
        _ => flags,
    };
    name_opened_keys(&mut flags, text, "");
    Some((format, plan, flags))
}

/// The plan of a config opened alone, run by the launch of one of `scripts` (read by the
/// leaf from the config's directory) that names it as its program's config: the launch's
/// flags over the config's keys and its world size, as [`plan`] reads the script. The
/// script is the plan's first linked file. Returns the format, the plan and the script.
pub(crate) fn config_plan<'s>(
    document: &Document,
    text: &str,
    path: &Path,
    format: Format,
    scripts: &'s [LinkedFile],
    resolver: &dyn Resolver,
) -> Option<(Format, Plan, &'s LinkedFile)> {
    let own = document.root.as_ref().filter(|r| r.as_mapping().is_some())?;
    scripts.iter().find_map(|file| {
        let mut script = shell::parse(&file.text)?;
        relocate_script(&mut script);
        let launch = script.commands.iter().rev().find_map(launch)?;
        let named = launch.config.as_ref()?.text.as_deref()?;
        let script_path = Path::new(&file.path);
        if !names(script_path, named, path) {
            return None;
        }
        let mut root = own.clone();
        if let Value::Mapping(keys) = &mut root.value {
            merge(keys, launch.flags.clone());
        }
        // A script's `--config F` leaves the format to the config's keys.
        let format = if launch.format == Format::Unknown { format } else { launch.format };
        let linked = vec![LinkedFileRef::new(&file.path, &file.text, Language::Shell, None)];
        let (plan, _) =
            launched(&script, &launch, format, (document.language, root, text), linked, script_path, resolver)?;
        Some((format, plan, file))
    })
}

/// Whether `named`, a path the script at `script` gives, is the file at `config`: the
/// same path from the script's directory, or (a script run from the repository's root)
/// a path that `config`'s ends with.
fn names(script: &Path, named: &str, config: &Path) -> bool {
    let parts = |p: &Path| -> Vec<String> {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let named = Path::new(named);
    let config = parts(config);
    let beside = parts(&script.parent().unwrap_or(Path::new("")).join(named));
    beside == config || (!named.is_absolute() && config.ends_with(&parts(named)))
}

/// Every word of a script moved to its place in linked file 0 (the script read with a
/// config that it names).
fn relocate_script(script: &mut Script) {
    let mut moved = |w: &mut Word| w.span = Span::linked(0, w.span);
    for command in &mut script.commands {
        command.words.iter_mut().for_each(&mut moved);
        command.env.iter_mut().for_each(|(_, w)| moved(w));
    }
    script.sbatch.iter_mut().for_each(&mut moved);
    script.assignments.iter_mut().for_each(|(_, w)| moved(w));
}

/// The plan a launch runs: its program's `format` read from `root` (the flags over the
/// program's config, in the document of the analysed `language` and `text`), with the
/// files it names and the launch's processes, machines and visible GPUs, and the root it
/// read (a DeepSpeed file a flag names inlined). `path` is the script's.
fn launched(
    script: &Script,
    launch: &Launch,
    format: Format,
    (language, root, text): (Language, Node, &str),
    mut linked: Vec<LinkedFileRef>,
    path: &Path,
    resolver: &dyn Resolver,
) -> Option<(Plan, Node)> {
    let mut root = root;
    if let Value::Mapping(flags) = &mut root.value {
        inline_deepspeed_file(flags, &mut linked, path, resolver);
    }
    let doc = Document { language, root: Some(root), comments: Vec::new(), problems: Vec::new(), program: None };
    let mut plan = build_plan(format, &doc, text)?;
    let root = doc.root?;
    if let (Some(trainer), true) = (plan.trainer.as_mut(), launch.script) {
        // TRL's ModelConfig belongs to the `trl` CLI: a script loads its model itself.
        trainer.model_config = false;
    }
    let visible_word = launch.visible_devices.clone().or_else(|| exported(script, "CUDA_VISIBLE_DEVICES"));
    plan.visible_devices = visible_word.as_ref().and_then(|w| Some(Sourced::file(w.text.clone()?, w.span, w.span)));
    // A key added to the config would lose to a flag, and the script's text is not this one.
    plan.insertion = None;
    let slurm = Slurm::read(&script.sbatch, &launch.srun);
    let visible = visible_gpus(visible_word.as_ref(), &slurm);
    let mut settings =
        LaunchSettings { launcher: launch.launcher, visible_gpus: visible.clone(), ..Default::default() };
    let processes = launch.processes.clone().map(|(w, n)| Sourced::file(n, w.span, w.span)).or_else(|| {
        let visible = visible.as_ref().filter(|_| launch.per_visible_gpu)?;
        Some(Sourced::derived(visible.count.value, "one process per GPU the launch makes visible"))
    });
    let machines = launch.machines.clone().map(|(w, n)| Sourced::file(n, w.span, w.span));
    if let Some(n) = &processes {
        plan.devices = Some(n.clone());
        plan.num_nodes = None;
    }
    if let Some(m) = machines.clone() {
        plan.num_nodes = Some(m);
    }
    settings.processes_per_node = match (launch.launcher, &processes) {
        // accelerate's num_processes counts every machine's processes.
        (Some("accelerate launch"), Some(n)) => {
            let machines = machines.as_ref().map_or(1, |m| m.value.max(1));
            Some(Sourced { value: n.value / machines, origin: n.origin.clone() })
        }
        (_, n) => n.clone(),
    };
    settings.accelerate_mixed_precision =
        launch.mixed_precision.as_ref().and_then(|w| Some(Sourced::file(w.text.clone()?, w.span, w.span)));
    let accelerate_config =
        launch.accelerate_config.as_ref().and_then(|w| Some((w, resolver.linked_file(path, w.text.as_deref()?)?)));
    let file = accelerate_config.and_then(|(word, file)| {
        let config = linked_mapping(&file.text, Language::Yaml, linked.len())?;
        let named = place_in(word.span, &linked);
        linked.push(LinkedFileRef::new(&file.path, &file.text, Language::Yaml, named));
        Some(config)
    });
    if let Some(config) = launch.accelerate_flags.over(file) {
        apply_accelerate_config(&mut plan, &mut settings, &config, processes.is_some(), &mut linked, path, resolver);
    }
    plan.linked_files = linked;
    plan.launch = Some(settings);
    Some((plan, root))
}

/// A launch script's document with the flags its program reads beside its variables: what a
/// position in the script is on (hovers, fixes). Flags from the files the launch names keep
/// their places there.
pub(crate) fn with_flags(document: Document, flags: Mapping) -> Document {
    let mut root = document.root.unwrap_or(Node { span: Span::new(0, 0), value: Value::Mapping(Mapping::default()) });
    if let Value::Mapping(variables) = &mut root.value {
        variables.entries.extend(flags.entries);
    }
    Document { root: Some(root), ..document }
}

/// verl's overrides (flat, as Hydra reads them) nested by their dotted keys and typed as YAML
/// reads them, as the other programs' flags are. `+key` adds the key; the module, the config
/// name, deletions (`~key`) and words computed at run time set no key.
fn nested(overrides: Mapping) -> Mapping {
    let mut out = Mapping::default();
    for entry in overrides.entries {
        let key = entry.key.trim_start_matches('+');
        let Some(scalar) = entry.value.as_scalar().filter(|_| !key.is_empty() && !key.starts_with(['-', '~'])) else {
            continue;
        };
        insert(&mut out, key, entry.key_span, Word { text: Some(scalar.text.clone()), span: entry.value.span });
    }
    out
}

/// OpenRLHF's flags (flat, as its argparse reads them) typed as YAML reads them, as the other
/// programs' flags are (for the hover's halved/doubled prices). A `store_true` flag alone
/// keeps its text: its word is no value to replace. The module and the flags computed at run
/// time set no key.
fn typed(flags: Mapping) -> Mapping {
    let mut out = Mapping::default();
    for mut entry in flags.entries {
        if entry.key.starts_with(['-', '?']) {
            continue;
        }
        if let Value::Scalar(scalar) = &mut entry.value.value {
            if entry.value.span != entry.key_span {
                scalar.kind = match syntax::yaml::resolve_plain(&scalar.text) {
                    ScalarKind::Null => ScalarKind::Str,
                    kind => kind,
                };
            }
        }
        out.entries.push(entry);
    }
    out
}

/// An exported or assigned variable of the script (`export CUDA_VISIBLE_DEVICES=0,1`).
fn exported(script: &Script, name: &str) -> Option<Word> {
    script.assignments.iter().rev().find(|(n, _)| n == name).map(|(_, w)| w.clone())
}

/// A config file's mapping with every span moved to its place in linked file `index`.
fn linked_mapping(text: &str, language: Language, index: usize) -> Option<Mapping> {
    let doc = syntax::parse(text, language);
    if !doc.problems.is_empty() {
        return None;
    }
    let mut root = doc.root_mapping()?.clone();
    relocate_mapping(&mut root, index);
    Some(root)
}

fn relocate_mapping(mapping: &mut Mapping, index: usize) {
    for entry in &mut mapping.entries {
        entry.key_span = Span::linked(index, entry.key_span);
        relocate(&mut entry.value, index);
    }
}

fn relocate(node: &mut Node, index: usize) {
    node.span = Span::linked(index, node.span);
    match &mut node.value {
        Value::Mapping(m) => relocate_mapping(m, index),
        Value::Sequence(items) => items.iter_mut().for_each(|n| relocate(n, index)),
        Value::Scalar(_) => {}
    }
}

/// `over`'s entries over `base`'s: a mapping merges into a mapping, anything else replaces.
fn merge(base: &mut Mapping, over: Mapping) {
    for entry in over.entries {
        let existing = base.entries.iter().rposition(|e| e.key == entry.key);
        match (existing, entry.value.value) {
            (Some(i), Value::Mapping(inner)) if base.entries[i].value.as_mapping().is_some() => {
                // A mapping the flags open in this text is found at their words.
                let target = &mut base.entries[i];
                if target.key_span.as_linked().is_some() && entry.key_span.as_linked().is_none() {
                    target.key_span = entry.key_span;
                    target.value.span = entry.value.span;
                }
                if let Value::Mapping(target) = &mut target.value.value {
                    merge(target, inner);
                }
            }
            (existing, value) => {
                if let Some(i) = existing {
                    base.entries.remove(i);
                }
                base.entries.push(Entry { value: Node { span: entry.value.span, value }, ..entry });
            }
        }
    }
}

/// Narrows the key of each mapping a dotted flag opens to its name in the word that opened
/// it (`data` in `data.train_batch_size=256`), so that a position in any other part of a
/// word leads to the key the word sets. `prefix` is the dotted path above `mapping`.
fn name_opened_keys(mapping: &mut Mapping, text: &str, prefix: &str) {
    for entry in &mut mapping.entries {
        let Value::Mapping(inner) = &mut entry.value.value else { continue };
        let path = format!("{prefix}{}", entry.key);
        let word = entry.key_span;
        if let Some(at) = text.get(word.start..word.end).and_then(|w| w.find(&path)) {
            let start = word.start + at + path.len() - entry.key.len();
            entry.key_span = Span::new(start, start + entry.key.len());
        }
        name_opened_keys(inner, text, &format!("{path}."));
    }
}

/// Keys only a DeepSpeed config has at its root.
const DEEPSPEED_KEYS: [&str; 6] = [
    "zero_optimization",
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "zero_allow_untested_optimizer",
    "steps_per_print",
];

/// The DeepSpeed config in `text`, by its content (JSON with DeepSpeed's keys), whatever
/// the file's extension.
fn deepspeed_mapping(text: &str, index: usize) -> Option<Mapping> {
    let mapping = linked_mapping(text, Language::Json, index)?;
    mapping.entries.iter().any(|e| DEEPSPEED_KEYS.contains(&e.key.as_str())).then_some(mapping)
}

/// Replaces a `deepspeed: PATH` setting by the DeepSpeed config it names, read, so the
/// plan builders read it as they read an inline one.
fn inline_deepspeed_file(flags: &mut Mapping, linked: &mut Vec<LinkedFileRef>, path: &Path, resolver: &dyn Resolver) {
    let Some(i) = flags.entries.iter().rposition(|e| e.key == "deepspeed") else { return };
    let Some(name) = flags.entries[i].value.as_scalar().map(|s| s.text.clone()) else { return };
    if name.trim_start().starts_with('{') {
        return;
    }
    let Some(file) = resolver.linked_file(path, &name) else { return };
    let Some(mapping) = deepspeed_mapping(&file.text, linked.len()) else { return };
    let named = place_in(flags.entries[i].value.span, linked);
    linked.push(LinkedFileRef::new(&file.path, &file.text, Language::Json, named));
    let span = Span::linked(linked.len() - 1, Span::empty(0));
    flags.entries[i].value = Node { span, value: Value::Mapping(mapping) };
}

/// What an accelerate config sets that the launch flags leave: the processes and machines,
/// the DeepSpeed or FSDP sharding (when the program names none), `mixed_precision`, and the
/// tensor- and context-parallel sizes of its `parallelism_config`.
fn apply_accelerate_config(
    plan: &mut Plan,
    settings: &mut LaunchSettings,
    config: &Mapping,
    processes_given: bool,
    linked: &mut Vec<LinkedFileRef>,
    path: &Path,
    resolver: &dyn Resolver,
) {
    let r = Reader::new(config);
    let accelerate = super::accelerate::plan(&r);
    let stated = |s: &Option<Sourced<u64>>| s.as_ref().is_some_and(|s| !s.is_unknown());
    if !processes_given && stated(&accelerate.devices) {
        plan.devices = accelerate.devices.clone();
        plan.num_nodes = accelerate.num_nodes.clone();
        settings.processes_per_node = accelerate.devices.clone();
    }
    if settings.accelerate_mixed_precision.is_none() {
        settings.accelerate_mixed_precision = r.str("mixed_precision");
    }
    let file = r.str("deepspeed_config.deepspeed_config_file");
    let deepspeed = file.as_ref().and_then(|f| {
        let read = resolver.linked_file(path, &f.value)?;
        let mapping = deepspeed_mapping(&read.text, linked.len())?;
        let named = place_in(f.value_span().unwrap_or(Span::linked(0, Span::empty(0))), linked)
            .or_else(|| linked.last().and_then(|l| l.named_at));
        linked.push(LinkedFileRef::new(&read.path, &read.text, Language::Json, named));
        Some(mapping)
    });
    if plan.sharding.is_none() {
        plan.sharding = match &deepspeed {
            Some(ds) => Some(deepspeed::zero_sharding(&Reader::new(ds), "")),
            None => accelerate.sharding.clone(),
        };
        if let Some(ds) = &deepspeed {
            plan.zero_buckets = Some(deepspeed::zero_buckets(&Reader::new(ds), ""));
        }
        if plan.gradient_checkpointing.is_none() {
            plan.gradient_checkpointing = accelerate.gradient_checkpointing.clone();
        }
    }
    // The `parallelism_config` block reaches the program as `PARALLELISM_CONFIG_*` (read by
    // `Accelerator`), unless the program sets its own.
    if plan.tensor_parallel.is_none() {
        plan.tensor_parallel = accelerate.tensor_parallel.clone();
    }
    if plan.sequence_parallel.is_none() {
        plan.sequence_parallel = accelerate.sequence_parallel.clone();
    }
    if plan.shard_group.is_none() {
        plan.shard_group = accelerate.shard_group.clone();
    }
    settings.deepspeed = deepspeed.map(|ds| deepspeed::settings(&Reader::new(&ds), ""));
    settings.accelerate = accelerate.accelerate.clone();
    // The Trainer takes accelerate's mixed precision when its own arguments set neither
    // fp16 nor bf16 (`TrainingArguments.__post_init__` reads ACCELERATE_MIXED_PRECISION).
    let trainer_silent = plan
        .trainer
        .as_ref()
        .is_some_and(|t| !t.fp16.is_from_file() && !t.bf16.is_from_file() && !t.fp16.value && !t.bf16.value);
    if trainer_silent {
        if let Some(precision) = accelerate.precision.filter(|p| p.is_from_file()) {
            plan.precision = Some(precision);
        }
    }
}

/// SLURM's GPU and node requests: `#SBATCH` lines, then an `srun`'s own options, which win.
#[derive(Default)]
struct Slurm {
    gpus_per_node: Option<(Word, u64)>,
}

impl Slurm {
    fn read(sbatch: &[Word], srun: &[Word]) -> Slurm {
        let mut slurm = Slurm::default();
        for words in [sbatch, srun] {
            let mut i = 0;
            while let Some((name, inline, _)) = option(words, i) {
                let (value, used) = match inline {
                    Some(v) => (Some(v), 1),
                    None => (words.get(i + 1).cloned(), 2),
                };
                if let Some(value) = value.as_ref() {
                    let gpus = match name.as_str() {
                        // --gres=gpu:8, gpu:a100:8; --gpus-per-node=8 or a100:8
                        "gres" => {
                            text(value).split(',').find(|g| g.starts_with("gpu")).and_then(|g| g.rsplit(':').next())
                        }
                        "gpus-per-node" => text(value).rsplit(':').next(),
                        _ => None,
                    };
                    if let Some(n) = gpus.and_then(|g| g.parse::<u64>().ok()).filter(|n| *n > 0) {
                        slurm.gpus_per_node = Some((value.clone(), n));
                    }
                }
                i += if inline_or_flag(&name) { 1 } else { used };
            }
        }
        slurm
    }
}

/// SLURM options that take no value.
fn inline_or_flag(name: &str) -> bool {
    matches!(name, "exclusive" | "overcommit" | "unbuffered" | "l" | "label" | "u")
}

/// The GPUs each machine's processes see: `CUDA_VISIBLE_DEVICES`, else SLURM's request.
fn visible_gpus(visible: Option<&Word>, slurm: &Slurm) -> Option<VisibleGpus> {
    if let Some(word) = visible {
        let ids = word.text.as_deref()?;
        let count = ids.split(',').filter(|id| !id.trim().is_empty()).count() as u64;
        return Some(VisibleGpus { count: Sourced::file(count, word.span, word.span), by_cuda_visible_devices: true });
    }
    let (word, n) = slurm.gpus_per_node.as_ref()?;
    Some(VisibleGpus { count: Sourced::file(*n, word.span, word.span), by_cuda_visible_devices: false })
}

fn text(word: &Word) -> &str {
    word.text.as_deref().unwrap_or("")
}

fn base(word: &Word) -> &str {
    let t = text(word);
    t.rsplit('/').next().unwrap_or(t)
}

/// A `--flag value` or `--flag=value` at `i`: (flag name, value word, words consumed).
fn option(words: &[Word], i: usize) -> Option<(String, Option<Word>, usize)> {
    let w = words.get(i)?;
    let t = text(w);
    let name = t.strip_prefix("--").or_else(|| t.strip_prefix('-').filter(|n| n.len() == 1))?;
    if let Some((name, value)) = name.split_once('=') {
        let start = w.span.start + t.len() - value.len();
        return Some((
            name.to_string(),
            Some(Word { text: Some(value.to_string()), span: Span::new(start, w.span.end) }),
            1,
        ));
    }
    Some((name.to_string(), None, 1))
}

/// Reads a launcher's options up to its program; returns the program's words.
/// `on` gets each option's name, its value (None for a switch) and the option's word.
fn launcher_options<'w>(
    words: &'w [Word],
    valued: &[&str],
    mut on: impl FnMut(&str, Option<&Word>, &Word),
) -> &'w [Word] {
    let mut i = 0;
    while let Some((name, inline, used)) = option(words, i) {
        let key = name.replace('-', "_");
        if key == "m" || key == "module" {
            break;
        }
        match inline {
            Some(value) => {
                on(&key, Some(&value), &words[i]);
                i += used;
            }
            None if valued.contains(&key.as_str()) => {
                on(&key, words.get(i + 1), &words[i]);
                i += 2;
            }
            None => {
                on(&key, None, &words[i]);
                i += 1;
            }
        }
    }
    &words[i.min(words.len())..]
}

fn count(word: Option<&Word>) -> Option<(Word, u64)> {
    let w = word?;
    Some((w.clone(), text(w).parse().ok().filter(|n| *n > 0)?))
}

/// A command read up to its program: the wrappers and the launcher's options.
struct Launcher<'w> {
    name: Option<&'static str>,
    /// The launcher's own options (`accelerate launch --num_processes 8`), before the program.
    options: &'w [Word],
    /// The program and its arguments (`trl sft --flags`, `-m module --flags`, `train.py --flags`).
    program: &'w [Word],
    processes: Option<(Word, u64)>,
    machines: Option<(Word, u64)>,
    per_visible_gpu: bool,
    srun: Vec<Word>,
    accelerate_config: Option<Word>,
    mixed_precision: Option<Word>,
    gpu_ids: Option<Word>,
    accelerate_flags: AccelerateFlags,
}

/// The launch in one command, if it runs a program oomlint reads.
fn launch(command: &Command) -> Option<Launch> {
    let Launcher {
        name: launcher,
        program,
        processes,
        machines,
        per_visible_gpu,
        srun,
        accelerate_config,
        mixed_precision,
        gpu_ids,
        accelerate_flags,
        ..
    } = launcher(&command.words)?;
    let mut config = None;
    let module = module_target(program);
    let (format, flags) = program_flags(program, module, &mut config)?;
    let script = module.is_some() || program.first().is_some_and(|w| text(w).ends_with(".py"));
    // accelerate's --gpu_ids sets CUDA_VISIBLE_DEVICES for the processes it starts.
    let visible_devices =
        gpu_ids.or_else(|| command.env.iter().find(|(n, _)| n == "CUDA_VISIBLE_DEVICES").map(|(_, w)| w.clone()));
    Some(Launch {
        format,
        flags,
        script,
        launcher,
        processes,
        machines,
        per_visible_gpu,
        visible_devices,
        srun,
        config,
        accelerate_config,
        mixed_precision,
        accelerate_flags,
        end: command_end(&command.words),
    })
}

/// The end of the last of `words` when each starts after the one before it ends.
fn command_end(words: &[Word]) -> Option<usize> {
    let ordered = words.windows(2).all(|w| w[0].span.end <= w[1].span.start);
    ordered.then(|| words.last().map(|w| w.span.end)).flatten()
}

/// Where a lever adds a setting the launch leaves to its config file or to a default: a flag
/// at the end of the command, which the program reads over its config file (HfArgumentParser
/// and TRL's parser take a config file's keys as defaults; LitGPT's jsonargparse, Axolotl's
/// CLI and LLaMA-Factory's `key=value` overrides likewise). A repository's own script gets
/// one only when it already takes one of those flags (its parser may know no other). verl gets
/// Hydra `key=value` overrides of its config's keys; OpenRLHF none (its settings are not the
/// levers' keys).
fn flag_insertion(format: Format, launch: &Launch) -> Option<Insertion> {
    let style = match format {
        Format::Openrlhf => return None,
        Format::Llamafactory | Format::Verl => InsertionStyle::Override,
        _ => InsertionStyle::Flag,
    };
    let keys = super::insertable_keys(format);
    let takes_them = keys.iter().any(|(_, key)| launch.flags.entry(key).is_some());
    if keys.is_empty() || (launch.script && !takes_them) {
        return None;
    }
    Some(Insertion { offset: launch.end?, needs_newline: false, keys, style })
}

/// Where `-m`/`--module` names the program's module: the index of the module's word.
fn module_target(words: &[Word]) -> Option<usize> {
    matches!(words.first().map(text), Some("-m" | "--module")).then_some(1)
}

/// A command's words read through its wrappers and its launcher's options, up to the program.
fn launcher(words: &[Word]) -> Option<Launcher<'_>> {
    let mut words = words;
    let mut processes = None;
    let mut machines = None;
    let mut srun = Vec::new();
    let (mut accelerate_config, mut mixed_precision, mut gpu_ids) = (None, None, None);
    let mut accelerate_flags = AccelerateFlags::default();
    let mut options: &[Word] = &[];
    let mut per_visible_gpu = false;
    let mut launcher = None;
    // Wrappers that run the command after their own options.
    // `ray job submit [options] -- COMMAND` runs COMMAND on the cluster.
    if words.first().map(base) == Some("ray") {
        words = &words[words.iter().position(|w| text(w) == "--")? + 1..];
    }
    // `uv run [options] COMMAND` (uv's `RunArgs`): the options that take a value.
    if words.first().map(base) == Some("uv") && words.get(1).map(text) == Some("run") {
        words = &words[2..];
        while let Some((name, inline, _)) = option(words, 0) {
            let valued = inline.is_none() && UV_RUN_VALUED.contains(&name.as_str());
            words = &words[if valued { 2 } else { 1 }.min(words.len())..];
        }
    }
    while let Some(wrapper @ ("srun" | "nohup" | "exec" | "time" | "stdbuf")) = words.first().map(base) {
        words = &words[1..];
        while words.first().is_some_and(|w| text(w).starts_with('-')) {
            if wrapper == "srun" {
                srun.push(words[0].clone());
                // `srun --gres gpu:8 cmd`: the value is a separate word.
                let valued = !text(&words[0]).contains('=') && !inline_or_flag(text(&words[0]).trim_start_matches('-'));
                if valued && words.get(1).is_some_and(|w| !text(w).starts_with('-') && text(w).contains(':')) {
                    srun.push(words[1].clone());
                    words = &words[1..];
                }
            }
            words = &words[1..];
        }
    }
    let first = words.first().map(base)?;
    let python = first.starts_with("python");
    let program: &[Word] = match first {
        "accelerate" if words.get(1).map(text) == Some("launch") => {
            launcher = Some("accelerate launch");
            let rest = launcher_options(&words[2..], &ACCELERATE_VALUED, |k, v, option| match k {
                "num_processes" => {
                    processes = count(v);
                    accelerate_flags.read(k, v, option);
                }
                "num_machines" => machines = count(v),
                "config_file" => accelerate_config = v.cloned(),
                "mixed_precision" => mixed_precision = v.cloned(),
                "gpu_ids" => gpu_ids = v.cloned().filter(|w| w.text.as_deref() != Some("all")),
                _ => accelerate_flags.read(k, v, option),
            });
            // accelerate's num_processes is already the world size.
            if processes.is_some() {
                machines = None;
            }
            options = &words[2..words.len() - rest.len()];
            rest
        }
        "torchrun" | "deepspeed" => {
            let (per_node, nodes) =
                if first == "torchrun" { ("nproc_per_node", "nnodes") } else { ("num_gpus", "num_nodes") };
            let valued: &[&str] = if first == "torchrun" { &TORCHRUN_VALUED } else { &DEEPSPEED_VALUED };
            launcher = Some(if first == "torchrun" { "torchrun" } else { "deepspeed" });
            // deepspeed's runner starts one process per visible GPU unless told otherwise.
            per_visible_gpu = first == "deepspeed";
            let rest = launcher_options(&words[1..], valued, |k, v, _| {
                if k == per_node {
                    processes = count(v);
                    per_visible_gpu = v.is_some_and(|w| matches!(text(w), "gpu" | "auto"));
                } else if k == nodes {
                    machines = count(v);
                }
            });
            rest
        }
        _ if python
            && words.get(1).map(text) == Some("-m")
            && words.get(2).is_some_and(|w| text(w).starts_with("torch.distributed.")) =>
        {
            launcher = Some("torchrun");
            launcher_options(&words[3..], &TORCHRUN_VALUED, |k, v, _| match k {
                "nproc_per_node" => {
                    processes = count(v);
                    per_visible_gpu = v.is_some_and(|w| matches!(text(w), "gpu" | "auto"));
                }
                "nnodes" => machines = count(v),
                _ => {}
            })
        }
        _ if python => {
            let mut rest = &words[1..];
            while rest.first().is_some_and(|w| matches!(text(w), "-u" | "-O" | "-B")) {
                rest = &rest[1..];
            }
            rest
        }
        _ => words,
    };
    Some(Launcher {
        name: launcher,
        options,
        program,
        processes,
        machines,
        per_visible_gpu,
        srun,
        accelerate_config,
        mixed_precision,
        gpu_ids,
        accelerate_flags,
    })
}

/// The first argument that is not a flag (a config file given positionally).
fn positional(args: &[Word]) -> Option<Word> {
    args.first().filter(|w| w.text.is_some() && !text(w).starts_with('-') && !text(w).contains('=')).cloned()
}

/// The value of `--config` among a program's flags.
fn config_flag(flags: &Mapping) -> Option<Word> {
    let entry = flags.entry("config")?;
    let text = entry.value.as_scalar()?.text.clone();
    Some(Word { text: Some(text), span: entry.value.span })
}

/// The program's format and the flags it parses.
fn program_flags(words: &[Word], module: Option<usize>, config: &mut Option<Word>) -> Option<(Format, Mapping)> {
    let (target, args) = match module {
        Some(skip) => (words.get(skip)?, words.get(skip + 1..)?),
        None => (words.first()?, words.get(1..)?),
    };
    let name = text(target);
    let command = args.first().map(text).unwrap_or("");
    match base(target) {
        "trl" => {
            let format = match command {
                "sft" => Format::TrlSft,
                "dpo" => Format::TrlDpo,
                "grpo" => Format::TrlGrpo,
                _ => return None,
            };
            let flags = flags(&args[1..]);
            *config = config_flag(&flags);
            Some((format, flags))
        }
        // TRL's own scripts run as modules (`-m trl.scripts.sft`).
        "trl.scripts.sft" | "trl.scripts.dpo" | "trl.scripts.grpo" => {
            let flags = flags(args);
            *config = config_flag(&flags);
            let format = match name.rsplit('.').next() {
                Some("sft") => Format::TrlSft,
                Some("dpo") => Format::TrlDpo,
                _ => Format::TrlGrpo,
            };
            Some((format, flags))
        }
        "llamafactory-cli" | "lmf" if command == "train" => {
            *config = positional(&args[1..]);
            Some((Format::Llamafactory, flags(&args[1..])))
        }
        "axolotl" if command == "train" => {
            *config = positional(&args[1..]);
            Some((Format::Axolotl, flags(&args[1..])))
        }
        "axolotl.cli.train" => {
            *config = positional(args);
            Some((Format::Axolotl, flags(args)))
        }
        "verl.trainer.main_ppo" | "verl.trainer.fsdp_sft_trainer" => {
            Some((Format::Verl, super::verl::overrides(target, args)))
        }
        _ if super::openrlhf::is_trainer(name) => Some((Format::Openrlhf, super::openrlhf::flags(target, args))),
        "litgpt" => {
            let format = match command {
                "finetune_lora" | "finetune" => Format::LitgptLora,
                "finetune_full" => Format::LitgptFull,
                "finetune_adapter" => Format::LitgptAdapter,
                "finetune_adapter_v2" => Format::LitgptAdapterV2,
                "pretrain" => Format::LitgptPretrain,
                _ => return None,
            };
            let mut flags = flags(&args[1..]);
            *config = config_flag(&flags);
            // The checkpoint directory is LitGPT's first positional argument.
            if let Some(checkpoint) = args.get(1).filter(|w| w.text.is_some() && !text(w).starts_with('-')) {
                insert(&mut flags, "checkpoint_dir", checkpoint.span, checkpoint.clone());
            }
            Some((format, flags))
        }
        // A script, or a module run as one (`python -m pkg.train`, `deepspeed --module pkg.train`).
        _ if name.ends_with(".py") || module.is_some() => {
            let flags = flags(args);
            // Recognised by its flags as a config file is by its keys. TrlParser's `--config F` (the flags override it): recognised with it, once read.
            *config = config_flag(&flags);
            if config.is_some() {
                return Some((Format::Unknown, flags));
            }
            hf_format(&flags).map(|format| (format, flags))
        }
        _ => None,
    }
}

/// The TRL or transformers format a script's arguments are for, recognised by their keys.
fn hf_format(flags: &Mapping) -> Option<Format> {
    let doc = Document {
        language: Language::Yaml,
        root: Some(Node { span: Span::new(0, 0), value: Value::Mapping(flags.clone()) }),
        comments: Vec::new(),
        problems: Vec::new(),
        program: None,
    };
    let format = super::detect(Path::new("flags.yaml"), "", &doc);
    matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Transformers).then_some(format)
}

/// `--key value`, `--key=value`, `--flag` (true) and `key=value` as a mapping; dotted keys
/// nest (`--train.micro_batch_size 4`). Values the script does not know are left out.
fn flags(words: &[Word]) -> Mapping {
    let mut root = Mapping::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let t = text(w);
        let (key, key_span, value, used) = if let Some(name) = t.strip_prefix("--") {
            match name.split_once('=') {
                Some((k, v)) => {
                    let start = w.span.start + t.len() - v.len();
                    (
                        k.to_string(),
                        w.span,
                        Some(Word { text: Some(v.to_string()), span: Span::new(start, w.span.end) }),
                        1,
                    )
                }
                None => match words.get(i + 1) {
                    Some(next) if !text(next).starts_with("--") => (name.to_string(), w.span, Some(next.clone()), 2),
                    _ => (name.to_string(), w.span, Some(Word { text: Some("true".into()), span: w.span }), 1),
                },
            }
        } else if let Some((k, v)) = t.split_once('=').filter(|(k, _)| !k.is_empty() && !k.contains('/')) {
            let start = w.span.start + t.len() - v.len();
            (k.to_string(), w.span, Some(Word { text: Some(v.to_string()), span: Span::new(start, w.span.end) }), 1)
        } else {
            i += 1;
            continue;
        };
        i += used;
        let Some(value) = value.filter(|v| v.text.is_some()) else { continue };
        insert(&mut root, &key, key_span, value);
    }
    root
}

/// Adds `key` (dotted keys nest) with `value`; `key_span` is the word (or `--flag`) that sets
/// it. A mapping a dotted key opens spans every word that sets one of its keys.
fn insert(mapping: &mut Mapping, key: &str, key_span: Span, value: Word) {
    if let Some((head, rest)) = key.split_once('.') {
        let index = match mapping.entries.iter().position(|e| e.key == head && e.value.as_mapping().is_some()) {
            Some(i) => {
                let node = &mut mapping.entries[i].value;
                node.span = node.span.cover(key_span);
                i
            }
            None => {
                mapping.entries.push(Entry {
                    key: head.to_string(),
                    key_span,
                    value: Node { span: key_span, value: Value::Mapping(Mapping::default()) },
                });
                mapping.entries.len() - 1
            }
        };
        if let Value::Mapping(inner) = &mut mapping.entries[index].value.value {
            insert(inner, rest, key_span, value);
        }
        return;
    }
    let text = value.text.unwrap_or_default();
    let kind = syntax::yaml::resolve_plain(&text);
    let kind = if matches!(kind, ScalarKind::Null) { ScalarKind::Str } else { kind };
    let scalar = Scalar { text, style: syntax::ScalarStyle::Plain, kind };
    mapping.entries.push(Entry {
        key: key.to_string(),
        key_span,
        value: Node { span: value.span, value: Value::Scalar(scalar) },
    });
}
