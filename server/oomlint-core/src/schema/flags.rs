//! The flags and overrides a launch script's program takes, with their documentation (for
//! completion and hover), by the program [`crate::format::launch`] reads at the cursor:
//!
//! - verl's `key=value` Hydra overrides: every leaf of the trainer config's defaults table
//!   (`format/verl/defaults.tsv`), with its default; the keys that move memory also have a
//!   description, after the comments of verl's config files (`verl/trainer/config/actor/
//!   actor.yaml`, `rollout/rollout.yaml`, `data/legacy_data.yaml`, `ppo_trainer.yaml`);
//! - OpenRLHF's `--flags`: the table of `format/openrlhf/flags.tsv` for the program, in the
//!   spelling the command writes (dotted or underscore), with their argparse defaults and a
//!   description of the field after the flag's `help=` in `openrlhf/cli/<program>.py`;
//! - the `trl` CLI, `HfArgumentParser` scripts, Axolotl and LitGPT: their schema's keys as
//!   `--key` flags (LitGPT's groups as `--train.micro_batch_size`); a script of the repository
//!   takes no `accelerate launch` keys, which the TRL CLI's schema also lists;
//! - `llamafactory-cli train`: the schema's keys as `key=value` words;
//! - `accelerate launch`'s own options: the schema keys whose source is
//!   `accelerate/commands/launch.py` (`launch_command_parser`), as the TRL CLI's schema has them.

use super::{properties_at, PropertyDoc};
use crate::format::launch::cursor::{cursor, Keys};
use crate::format::{openrlhf, verl, Format};
use crate::plan::Plan;
use crate::span::Span;
use serde_json::Value;

/// The keys the word under the cursor may set.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The part of the word a chosen key replaces (up to and with its `=`, or the flag).
    pub replace: Span,
    pub items: Vec<Item>,
}

/// One key as the command writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// `actor_rollout_ref.rollout.n`, `--vllm.gpu_memory_utilization`.
    pub label: String,
    /// What replaces the word: `+key=` (the `+` the word has), `key=`, `--flag`.
    pub text: String,
    pub doc: PropertyDoc,
}

/// The keys of the launch command's program (or launcher) that the word at `offset` of the
/// shell script `text` may set: those starting with what it has typed (or with a part of
/// theirs after `.` or `_` starting so), less those the command's other words set.
pub fn complete(text: &str, offset: usize) -> Option<Completion> {
    let cursor = cursor(text, offset)?;
    let typed = text.get(cursor.typed.start..cursor.typed.end)?;
    let (decoration, name) = match cursor.keys {
        Keys::Verl { .. } => {
            let plain = typed.trim_start_matches(['+', '~']);
            (&typed[..typed.len() - plain.len()], plain)
        }
        Keys::Assignments(_) => ("", typed),
        _ => ("", typed.trim_start_matches('-')),
    };
    let items = keys(cursor.keys)
        .into_iter()
        .filter(|doc| !cursor.given.contains(&doc.name) && matches(&doc.name, name))
        .map(|doc| {
            let (label, text) = match cursor.keys {
                Keys::Verl { .. } if decoration.starts_with('~') => (doc.name.clone(), format!("~{}", doc.name)),
                Keys::Verl { .. } | Keys::Assignments(_) => (doc.name.clone(), format!("{decoration}{}=", doc.name)),
                _ => (format!("--{}", doc.name), format!("--{}", doc.name)),
            };
            Item { label, text, doc }
        })
        .collect();
    Some(Completion { replace: cursor.key, items })
}

/// Whether `key` starts with `typed`, or one of its parts after a `.` or `_` does.
fn matches(key: &str, typed: &str) -> bool {
    typed.is_empty()
        || key.starts_with(typed)
        || key.match_indices(typed).any(|(i, _)| key[..i].ends_with(['.', '_', '-']))
}

/// Every key of `keys`, documented, in its table's or schema's order.
fn keys(keys: Keys) -> Vec<PropertyDoc> {
    match keys {
        Keys::Verl { trainer } => verl_keys(trainer),
        Keys::Openrlhf { program, dotted } => openrlhf_flags(program, dotted),
        Keys::Flags { format, script } => schema_flags(format, script),
        Keys::Assignments(format) => undeprecated(properties_at(format, &[])),
        Keys::AccelerateLaunch => {
            let launch = properties_at(Format::TrlSft, &[]).into_iter().filter(is_accelerate_launch);
            undeprecated(launch.collect())
        }
    }
}

/// The source the schemas give `accelerate launch`'s options.
fn is_accelerate_launch(doc: &PropertyDoc) -> bool {
    doc.source.as_deref() == Some("accelerate/commands/launch.py")
}

fn undeprecated(docs: Vec<PropertyDoc>) -> Vec<PropertyDoc> {
    docs.into_iter().filter(|d| !d.deprecated).collect()
}

/// A format's keys as flags: LitGPT's groups (`train`, `eval`, `data`…) opened into their keys.
fn schema_flags(format: Format, script: bool) -> Vec<PropertyDoc> {
    let litgpt = matches!(
        format,
        Format::LitgptLora
            | Format::LitgptFull
            | Format::LitgptAdapter
            | Format::LitgptAdapterV2
            | Format::LitgptPretrain
    );
    let mut out = Vec::new();
    for doc in undeprecated(properties_at(format, &[])) {
        if script && is_accelerate_launch(&doc) {
            continue;
        }
        let group = if litgpt { undeprecated(properties_at(format, &[&doc.name])) } else { Vec::new() };
        let name = doc.name.clone();
        out.push(doc);
        out.extend(group.into_iter().map(|d| PropertyDoc { name: format!("{name}.{}", d.name), ..d }));
    }
    out
}

/// verl's overrides of `trainer`'s config, Hydra's internal keys (`_target_`) left out.
fn verl_keys(trainer: &str) -> Vec<PropertyDoc> {
    verl::defaults(trainer)
        .filter(|(key, _)| !key.split('.').any(|part| part.starts_with('_')))
        .map(|(key, default)| verl_doc(trainer, key, default))
        .collect()
}

fn verl_doc(trainer: &str, key: &str, default: &str) -> PropertyDoc {
    let (release, file) = verl::defaults_source(trainer);
    let described = VERL_KEYS.iter().find(|(k, _)| *k == key).map(|(_, d)| *d);
    let of = format!("Default of {release}'s `{trainer}` config.");
    PropertyDoc {
        name: key.to_string(),
        title: None,
        description: Some(described.map_or(of.clone(), |d| format!("{d}\n\n{of}"))),
        default: Some(json_value(default)),
        enum_values: Vec::new(),
        source: Some(file.to_string()),
        deprecated: false,
    }
}

/// OpenRLHF's flags of `program`, in one spelling.
fn openrlhf_flags(program: &str, dotted: bool) -> Vec<PropertyDoc> {
    openrlhf::flag_defaults(program, dotted)
        .map(|(field, flag, default)| openrlhf_doc(program, dotted, field, flag, default))
        .collect()
}

fn openrlhf_doc(program: &str, dotted: bool, field: &str, flag: &str, default: &str) -> PropertyDoc {
    let (new, old) = openrlhf::releases();
    let release = if dotted { new } else { old };
    let described = OPENRLHF_FIELDS.iter().find(|(f, _)| *f == field).map(|(_, d)| *d);
    let of = format!("`{program}` flag of OpenRLHF {release}.");
    PropertyDoc {
        name: flag.to_string(),
        title: None,
        description: Some(described.map_or(of.clone(), |d| format!("{d}\n\n{of}"))),
        default: Some(json_value(default)),
        enum_values: Vec::new(),
        source: Some(format!("openrlhf/cli/{program}.py")),
        deprecated: false,
    }
}

/// The documentation of a verl override or an OpenRLHF flag `key` (dotted, without dashes)
/// for hover; the table of the plan's command (`train_sft`, `fsdp_sft_trainer`) is read
/// first. None for the other formats, whose schemas document their keys.
pub fn flag_doc(format: Format, plan: Option<&Plan>, key: &str) -> Option<PropertyDoc> {
    let command = plan.and_then(|p| p.command.as_deref());
    let first = |name: &str| command.is_some_and(|c| c.ends_with(name) || name.ends_with(c));
    match format {
        Format::Verl => {
            let mut trainers = verl::TRAINERS;
            trainers.sort_by_key(|t| !first(t));
            trainers
                .into_iter()
                .find_map(|t| verl::defaults(t).find(|(k, _)| *k == key).map(|(k, default)| verl_doc(t, k, default)))
        }
        Format::Openrlhf => {
            let mut programs = openrlhf::PROGRAMS;
            programs.sort_by_key(|p| !first(p));
            programs.into_iter().find_map(|p| {
                [true, false].into_iter().find_map(|dotted| {
                    let (field, flag, default) = openrlhf::flag_defaults(p, dotted).find(|(_, f, _)| *f == key)?;
                    Some(openrlhf_doc(p, dotted, field, flag, default))
                })
            })
        }
        _ => None,
    }
}

/// A default as YAML or Python writes it, as a JSON value (`None`, `False`, `1.0e-06`, `[]`).
fn json_value(text: &str) -> Value {
    match text {
        "null" | "~" | "None" => return Value::Null,
        "true" | "True" => return Value::Bool(true),
        "false" | "False" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(n) = text.parse::<i64>() {
        return n.into();
    }
    if let Some(n) = text.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
        return Value::Number(n);
    }
    if text.starts_with(['[', '{']) {
        if let Ok(value) = serde_json::from_str(text) {
            return value;
        }
    }
    Value::String(text.trim_matches(['\'', '"']).to_string())
}

/// What the verl keys that move memory do (full keys of the PPO trainer's config).
const VERL_KEYS: &[(&str, &str)] = &[
    ("data.train_batch_size", "Prompts per training step; each is sampled `actor_rollout_ref.rollout.n` times."),
    ("data.max_prompt_length", "Longest prompt, in tokens; longer ones are filtered out or truncated."),
    ("data.max_response_length", "Most tokens generated per response: with the prompt, the longest sequence trained on."),
    ("actor_rollout_ref.model.enable_gradient_checkpointing", "Recompute the actor's activations in the backward pass instead of keeping them."),
    ("actor_rollout_ref.model.lora_rank", "LoRA rank of the actor; 0 trains every parameter."),
    ("actor_rollout_ref.actor.ppo_mini_batch_size", "Prompts per optimizer step (times `rollout.n` responses), split across the data-parallel ranks."),
    ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "Sequences per GPU in one forward and backward pass; gradient accumulation makes up the mini batch."),
    ("actor_rollout_ref.actor.use_dynamic_bsz", "Form micro batches by token count (`ppo_max_token_len_per_gpu`) instead of a number of sequences."),
    ("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", "Tokens per GPU in one micro batch when `use_dynamic_bsz` is on."),
    ("actor_rollout_ref.actor.ulysses_sequence_parallel_size", "GPUs one sequence is split across (Ulysses sequence parallelism)."),
    ("actor_rollout_ref.actor.fsdp_config.param_offload", "Keep the actor's FSDP parameters in CPU memory between uses."),
    ("actor_rollout_ref.actor.fsdp_config.optimizer_offload", "Keep the actor's optimizer state in CPU memory between steps."),
    ("actor_rollout_ref.ref.fsdp_config.param_offload", "Keep the reference model's parameters in CPU memory between uses."),
    ("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", "Sequences per GPU in one forward pass of the reference model."),
    ("actor_rollout_ref.rollout.gpu_memory_utilization", "Share of the GPU's memory the rollout engine (vLLM or SGLang) takes for its weights, activations and KV cache."),
    ("actor_rollout_ref.rollout.tensor_model_parallel_size", "GPUs one rollout engine spans; its weights and KV cache are split across them."),
    ("actor_rollout_ref.rollout.n", "Responses generated per prompt (the group size of GRPO)."),
    ("actor_rollout_ref.rollout.free_cache_engine", "Release the engine's KV cache after generation, so that training can use that memory."),
    ("actor_rollout_ref.rollout.max_num_batched_tokens", "Tokens the engine schedules in one step (vLLM's `max_num_batched_tokens`)."),
    ("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", "Sequences per GPU in one forward pass recomputing the rollout's log-probs."),
    ("critic.ppo_micro_batch_size_per_gpu", "Sequences per GPU in one forward and backward pass of the critic."),
    ("critic.model.fsdp_config.param_offload", "Keep the critic's FSDP parameters in CPU memory between uses."),
    ("critic.model.fsdp_config.optimizer_offload", "Keep the critic's optimizer state in CPU memory between steps."),
    ("trainer.n_gpus_per_node", "GPUs per node."),
    ("trainer.nnodes", "Nodes."),
];

/// What the OpenRLHF fields oomlint reads do, by the table's field name.
const OPENRLHF_FIELDS: &[(&str, &str)] = &[
    ("zero_stage", "DeepSpeed ZeRO stage: 2 shards gradients and optimizer state, 3 the parameters too."),
    ("adam_offload", "Keep Adam's state in CPU memory (DeepSpeed's CPU Adam)."),
    ("packing", "Pack samples into one sequence without padding."),
    ("lora_rank", "LoRA rank; 0 trains every parameter."),
    ("lora_alpha", "LoRA scaling."),
    ("param_dtype", "Dtype of the trained parameters."),
    ("bf16", "Train in bfloat16."),
    ("ring_attn_size", "GPUs one sequence is split across (ring attention)."),
    ("micro_batch", "Samples per GPU in one forward and backward pass."),
    ("batch", "Samples per optimizer step, across every GPU."),
    ("max_len", "Longest sample, in tokens."),
    ("model", "The model trained (Hub name or path)."),
    ("checkpointing", "Recompute activations in the backward pass instead of keeping them."),
    ("colocate_all", "Put the actor, reference, critic, reward model and vLLM engines on the same GPUs."),
    ("colocate_actor_ref", "Put the actor and the reference model on the same GPUs."),
    ("colocate_critic_reward", "Put the critic and the reward model on the same GPUs."),
    ("vllm_engines", "vLLM engines generating rollouts."),
    ("vllm_tp", "GPUs one vLLM engine spans."),
    ("vllm_memory", "Share of the GPU's memory a vLLM engine takes."),
    ("vllm_sleep", "Put vLLM to sleep (weights and KV cache released) while the models train."),
    ("rollout_batch", "Prompts per rollout step."),
    ("rollout_micro", "Samples per GPU in one forward pass of the rollout's models."),
    ("n_samples", "Responses generated per prompt."),
    ("max_new_tokens", "Most tokens generated per response."),
    ("ref_offload", "Keep the reference model in CPU memory between uses."),
    ("dynamic_batch", "Form micro batches by token count (`max_tokens_per_gpu`)."),
    ("max_tokens_per_gpu", "Tokens per GPU in one micro batch with dynamic batching."),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(marked: &str) -> (String, Completion) {
        let offset = marked.find('|').unwrap();
        let text = marked.replacen('|', "", 1);
        let completion = complete(&text, offset).expect("a completion");
        (text, completion)
    }

    fn labels(completion: &Completion) -> Vec<&str> {
        completion.items.iter().map(|i| i.label.as_str()).collect()
    }

    #[test]
    fn verl_overrides_from_the_defaults_table() {
        let (text, c) = at(
            "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n=8 \\\n  actor_rollout_ref.rollout.gpu_|\n",
        );
        assert_eq!(&text[c.replace.start..c.replace.end], "actor_rollout_ref.rollout.gpu_");
        let item = c.items.iter().find(|i| i.label == "actor_rollout_ref.rollout.gpu_memory_utilization").unwrap();
        assert_eq!(item.text, "actor_rollout_ref.rollout.gpu_memory_utilization=");
        assert_eq!(item.doc.default, Some(json!(0.5)));
        assert!(item.doc.description.as_deref().unwrap().starts_with("Share of the GPU's memory"), "{:?}", item.doc);
        assert_eq!(item.doc.source.as_deref(), Some("verl/trainer/config/_generated_ppo_trainer.yaml"));
        assert!(labels(&c).iter().all(|l| l.starts_with("actor_rollout_ref.rollout.gpu_")), "{:?}", labels(&c));
        // A part of the key, `+` kept, keys given left out, Hydra's `_target_` never.
        let (_, c) = at("python3 -m verl.trainer.main_ppo data.train_batch_size=8 +micro_batch|");
        assert!(labels(&c).contains(&"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"), "{:?}", labels(&c));
        assert!(c.items.iter().all(|i| i.text.starts_with('+')));
        let (_, c) = at("python3 -m verl.trainer.main_ppo data.train_batch_size=8 |");
        assert!(!labels(&c).contains(&"data.train_batch_size") && labels(&c).contains(&"data.max_prompt_length"));
        assert!(labels(&c).iter().all(|l| !l.contains("_target_")));
    }

    #[test]
    fn openrlhf_flags_from_the_flags_table() {
        let (_, c) = at("python3 -m openrlhf.cli.train_ppo_ray --actor.num_nodes 1 --vllm.|");
        assert_eq!(
            labels(&c),
            [
                "--vllm.num_engines",
                "--vllm.tensor_parallel_size",
                "--vllm.gpu_memory_utilization",
                "--vllm.enable_sleep"
            ]
        );
        let memory = &c.items[2];
        assert_eq!(memory.text, "--vllm.gpu_memory_utilization");
        assert_eq!(memory.doc.source.as_deref(), Some("openrlhf/cli/train_ppo_ray.py"));
        let (_, c) = at("deepspeed --module openrlhf.cli.train_sft --pretrain x --zero|");
        assert_eq!(labels(&c), ["--zero_stage"]);
        assert_eq!(c.items[0].doc.default, Some(json!(2)));
    }

    #[test]
    fn schema_keys_as_flags_and_assignments() {
        let (_, c) = at("trl sft --model_name_or_path x --per_device_tr|");
        assert_eq!(labels(&c), ["--per_device_train_batch_size"]);
        let (_, c) = at("trl sft --model_name_or_path x --num_pro|");
        assert!(labels(&c).contains(&"--num_processes"), "the TRL CLI takes accelerate's options: {:?}", labels(&c));
        assert!(labels(&c).contains(&"--dataset_num_proc"), "a part after `_`: {:?}", labels(&c));
        let (_, c) = at(
            "accelerate launch trl_sft.py --model_name_or_path x --max_length 4096 --bf16 --output_dir o --num_pro|",
        );
        assert_eq!(labels(&c), ["--dataset_num_proc"], "a script takes no accelerate options");
        let (_, c) = at("llamafactory-cli train cfg.yaml per_device_train|");
        assert_eq!(c.items[0].text, "per_device_train_batch_size=");
        let (_, c) = at("accelerate launch --mixed_precision bf16 --num|");
        assert_eq!(labels(&c), ["--num_processes", "--num_machines", "--num_cpu_threads_per_process"]);
        let (_, c) = at("litgpt finetune_lora ckpt --train.micro|");
        assert_eq!(labels(&c), ["--train.micro_batch_size"]);
    }

    #[test]
    fn hover_documentation_of_overrides_and_flags() {
        let doc = flag_doc(Format::Verl, None, "actor_rollout_ref.rollout.n").unwrap();
        assert_eq!(doc.default, Some(json!(1)));
        let mut plan = Plan::new(crate::plan::Framework::Verl);
        plan.command = Some("fsdp_sft_trainer".into());
        let sft = flag_doc(Format::Verl, Some(&plan), "data.micro_batch_size_per_gpu").unwrap();
        assert_eq!(sft.source.as_deref(), Some("verl/trainer/config/sft_trainer.yaml"));
        let old = flag_doc(Format::Openrlhf, None, "micro_train_batch_size").unwrap();
        assert_eq!(old.default, Some(json!(4)));
        assert!(old.description.unwrap().contains("v0.8.0"));
        assert!(flag_doc(Format::TrlSft, None, "per_device_train_batch_size").is_none());
        assert_eq!(json_value("1.0e-06"), json!(1e-6));
        assert_eq!(json_value("[0.9, 0.999]"), json!([0.9, 0.999]));
        assert_eq!(json_value("None"), Value::Null);
    }
}
