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
//! - `srun`, `nohup`, `env`, `exec`, `time` before any of them, and `VAR=value` prefixes.
//!
//! Programs: `trl sft|dpo|grpo` (`trl/cli.py`), `llamafactory-cli train CONFIG key=value`
//! (`llamafactory/hparams/parser.py` `read_args`: `key=value` after the YAML), `axolotl train
//! CONFIG` / `-m axolotl.cli.train CONFIG`, `litgpt finetune_lora|finetune|… --key value`
//! (jsonargparse, `--train.micro_batch_size`), and a Python script whose `--key value` flags
//! an `HfArgumentParser` reads (recognised by the flags themselves, as a config file is).
//! The config file a program names is not read here: its values are unknown to the plan.

use super::{build_plan, Format};
use crate::plan::{Plan, Sourced};
use crate::span::Span;
use crate::syntax::shell::{self, Command, Word};
use crate::syntax::{self, Document, Entry, Language, Mapping, Node, Scalar, ScalarKind, Value};
use std::path::Path;

/// The launch a script runs: the program's format and flags, and the world size.
struct Launch {
    format: Format,
    flags: Mapping,
    /// Whether the program is a Python script of the repository (not a framework's CLI).
    script: bool,
    processes: Option<(Word, u64)>,
    machines: Option<(Word, u64)>,
    visible_devices: Option<Word>,
}

/// The plan of the training launch in a shell script: (the program's format, its plan).
pub(crate) fn plan(text: &str) -> Option<(Format, Plan)> {
    let script = shell::parse(text)?;
    let launch = script.commands.iter().rev().find_map(launch)?;
    let doc = Document {
        language: Language::Shell,
        root: Some(Node { span: Span::new(0, text.len()), value: Value::Mapping(launch.flags) }),
        comments: Vec::new(),
        problems: Vec::new(),
        program: None,
    };
    let mut plan = build_plan(launch.format, &doc, text)?;
    if let (Some(trainer), true) = (plan.trainer.as_mut(), launch.script) {
        // TRL's ModelConfig belongs to the `trl` CLI: a script loads its model itself.
        trainer.model_config = false;
    }
    // The allocator variables the script sets, as for any shell script.
    plan.allocator = super::env::allocator_settings(&syntax::parse(text, Language::Shell), text);
    plan.visible_devices = launch.visible_devices.and_then(|w| Some(Sourced::file(w.text?, w.span, w.span)));
    plan.insertion = None;
    if let Some((word, n)) = launch.processes {
        plan.devices = Some(Sourced::file(n, word.span, word.span));
        plan.num_nodes = None;
    }
    if let Some((word, n)) = launch.machines {
        plan.num_nodes = Some(Sourced::file(n, word.span, word.span));
    }
    Some((launch.format, plan))
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
fn launcher_options<'w>(words: &'w [Word], valued: &[&str], mut on: impl FnMut(&str, Option<&Word>)) -> &'w [Word] {
    let mut i = 0;
    while let Some((name, inline, used)) = option(words, i) {
        let key = name.replace('-', "_");
        if key == "m" || key == "module" {
            break;
        }
        match inline {
            Some(value) => {
                on(&key, Some(&value));
                i += used;
            }
            None if valued.contains(&key.as_str()) => {
                on(&key, words.get(i + 1));
                i += 2;
            }
            None => {
                on(&key, None);
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

const ACCELERATE_VALUED: [&str; 24] = [
    "config_file",
    "num_processes",
    "num_machines",
    "mixed_precision",
    "main_process_ip",
    "main_process_port",
    "machine_rank",
    "gpu_ids",
    "deepspeed_config_file",
    "zero_stage",
    "dynamo_backend",
    "rdzv_backend",
    "num_cpu_threads_per_process",
    "gradient_accumulation_steps",
    "offload_optimizer_device",
    "offload_param_device",
    "fsdp_sharding_strategy",
    "fsdp_version",
    "fsdp_auto_wrap_policy",
    "fsdp_transformer_layer_cls_to_wrap",
    "fsdp_state_dict_type",
    "deepspeed_multinode_launcher",
    "same_network",
    "tpu_vm",
];
const TORCHRUN_VALUED: [&str; 12] = [
    "nproc_per_node",
    "nnodes",
    "node_rank",
    "master_addr",
    "master_port",
    "rdzv_backend",
    "rdzv_endpoint",
    "rdzv_id",
    "rdzv_conf",
    "max_restarts",
    "monitor_interval",
    "log_dir",
];
const DEEPSPEED_VALUED: [&str; 9] =
    ["num_gpus", "num_nodes", "hostfile", "include", "exclude", "master_port", "master_addr", "launcher", "node_rank"];

/// The launch in one command, if it runs a program oomlint reads.
fn launch(command: &Command) -> Option<Launch> {
    let mut words: &[Word] = &command.words;
    let mut processes = None;
    let mut machines = None;
    // Wrappers that run the command after their own options.
    // `ray job submit [options] -- COMMAND` runs COMMAND on the cluster.
    if words.first().map(base) == Some("ray") {
        words = &words[words.iter().position(|w| text(w) == "--")? + 1..];
    }
    while let Some("srun" | "nohup" | "exec" | "time" | "stdbuf") = words.first().map(base) {
        words = &words[1..];
        while words.first().is_some_and(|w| text(w).starts_with('-')) {
            words = &words[1..];
        }
    }
    let first = words.first().map(base)?;
    let python = first.starts_with("python");
    let module_target = |w: &[Word]| -> Option<usize> {
        (w.first().map(text) == Some("-m"))
            .then_some(1)
            .or_else(|| (w.first().map(text) == Some("--module")).then_some(1))
    };
    let program: &[Word] = match first {
        "accelerate" if words.get(1).map(text) == Some("launch") => {
            let rest = launcher_options(&words[2..], &ACCELERATE_VALUED, |k, v| match k {
                "num_processes" => processes = count(v),
                "num_machines" => machines = count(v),
                _ => {}
            });
            // accelerate's num_processes is already the world size.
            if processes.is_some() {
                machines = None;
            }
            rest
        }
        "torchrun" | "deepspeed" => {
            let (per_node, nodes) =
                if first == "torchrun" { ("nproc_per_node", "nnodes") } else { ("num_gpus", "num_nodes") };
            let valued: &[&str] = if first == "torchrun" { &TORCHRUN_VALUED } else { &DEEPSPEED_VALUED };
            launcher_options(&words[1..], valued, |k, v| {
                if k == per_node {
                    processes = count(v);
                } else if k == nodes {
                    machines = count(v);
                }
            })
        }
        _ if python
            && words.get(1).map(text) == Some("-m")
            && words.get(2).is_some_and(|w| text(w).starts_with("torch.distributed.")) =>
        {
            launcher_options(&words[3..], &TORCHRUN_VALUED, |k, v| match k {
                "nproc_per_node" => processes = count(v),
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
    let (format, flags) = program_flags(program, module_target(program))?;
    let script = program.first().is_some_and(|w| text(w).ends_with(".py"));
    let visible_devices = command.env.iter().find(|(n, _)| n == "CUDA_VISIBLE_DEVICES").map(|(_, w)| w.clone());
    Some(Launch { format, flags, script, processes, machines, visible_devices })
}

/// The program's format and the flags it parses.
fn program_flags(words: &[Word], module: Option<usize>) -> Option<(Format, Mapping)> {
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
            Some((format, flags(&args[1..])))
        }
        "llamafactory-cli" | "lmf" if command == "train" => Some((Format::Llamafactory, flags(&args[1..]))),
        "axolotl" if command == "train" => Some((Format::Axolotl, flags(&args[1..]))),
        "axolotl.cli.train" => Some((Format::Axolotl, flags(args))),
        "verl.trainer.main_ppo" | "verl.trainer.fsdp_sft_trainer" => {
            Some((Format::Verl, super::verl::overrides(target, args)))
        }
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
            // The checkpoint directory is LitGPT's first positional argument.
            if let Some(checkpoint) = args.get(1).filter(|w| w.text.is_some() && !text(w).starts_with('-')) {
                insert(&mut flags, "checkpoint_dir", checkpoint.span, checkpoint.clone());
            }
            Some((format, flags))
        }
        _ if name.ends_with(".py") => {
            let flags = flags(args);
            // Recognised by its flags as a config file is by its keys.
            let doc = Document {
                language: Language::Yaml,
                root: Some(Node { span: Span::new(0, 0), value: Value::Mapping(flags.clone()) }),
                comments: Vec::new(),
                problems: Vec::new(),
                program: None,
            };
            let format = super::detect(Path::new("flags.yaml"), "", &doc);
            matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Transformers)
                .then_some((format, flags))
        }
        _ => None,
    }
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

fn insert(mapping: &mut Mapping, key: &str, key_span: Span, value: Word) {
    if let Some((head, rest)) = key.split_once('.') {
        let index = match mapping.entries.iter().position(|e| e.key == head && e.value.as_mapping().is_some()) {
            Some(i) => i,
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
