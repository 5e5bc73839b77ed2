//! A script's recognized arguments laid out the way a TRL CLI YAML is laid out, so the
//! schemas and rules apply unchanged: the config class's keyword arguments at the top
//! level, the LoRA arguments under `ModelConfig`'s names (`lora_r`, …), the loader's
//! arguments under `model_init_kwargs` and environment settings under `env`. Each entry's
//! key span is the keyword, its value span the literal that defines it. With
//! `TrainingArguments` (the `transformers` schema) only its own arguments are laid out.

use super::calls::{Arg, ArgValue, Callee, Script};
use crate::span::Span;
use crate::syntax::python::{PyValue, Spanned, Static};
use crate::syntax::{Entry, Mapping, Node, Scalar, ScalarKind, ScalarStyle, Value};

/// `SFTTrainer` keyword arguments of TRL before 0.13 that are `SFTConfig` fields the plan
/// reads (`trl/trainer/sft_trainer.py` at v0.12.0); laid out like the config's own.
const SFT_TRAINER_CONFIG_ARGS: &[&str] =
    &["max_seq_length", "packing", "eval_packing", "dataset_text_field", "dataset_num_proc", "neftune_noise_alpha"];

/// Fields `UnslothTrainingArguments` adds to the `SFTConfig` it extends (`unsloth/trainer.py`).
const UNSLOTH_CONFIG_FIELDS: &[&str] = &["embedding_learning_rate"];

/// The root node of a script's document (see the module docs).
pub(super) fn root(script: &Script) -> Node {
    let roles = script.roles();
    let mut root = Mapping::default();
    let config = script.call(roles.config);
    if let Some(config) = config {
        let unsloth = config.path.last().is_some_and(|c| c == "UnslothTrainingArguments");
        let own = |a: &&Arg| !(unsloth && UNSLOTH_CONFIG_FIELDS.contains(&a.name.as_str()));
        root.entries.extend(config.args.iter().filter(own).filter_map(|a| known_entry(&a.name, a)));
    }
    let trainer_call = script.call(roles.trainer);
    if let Some(trainer) = trainer_call.filter(|t| t.callee == Callee::SftTrainer) {
        // Before TRL 0.13 these went to `SFTTrainer` directly and overrode the config's.
        for arg in trainer.args.iter().filter(|a| SFT_TRAINER_CONFIG_ARGS.contains(&a.name.as_str())) {
            if let Some(entry) = known_entry(&arg.name, arg) {
                root.entries.retain(|e| e.key != entry.key);
                root.entries.push(entry);
            }
        }
    }
    // `TrainingArguments` given to a TRL trainer is read as that trainer's config.
    let transformers = match trainer_call.map(|c| c.callee) {
        Some(trainer) => trainer == Callee::Trainer,
        None => config.is_some_and(|c| c.callee == Callee::TrainingArguments),
    };
    if transformers {
        return Node { span: covering(&root), value: Value::Mapping(root) };
    }
    if let Some(peft) = script.call(roles.peft) {
        for arg in &peft.args {
            if let Some(name) = lora_key(&arg.name) {
                root.entries.extend(known_entry(name, arg));
            }
        }
    }
    if let Some(loader) = script.call(roles.loader) {
        if !root.contains("model_init_kwargs") {
            let mut kwargs = Mapping::default();
            for arg in &loader.args {
                if let ArgValue::Call(i) = arg.value {
                    if Some(i) == roles.quantization {
                        kwargs.entries.extend(call_entry(script, &arg.name, arg.key_span, i));
                    }
                    continue;
                }
                kwargs.entries.extend(known_entry(&arg.name, arg));
            }
            root.entries.push(Entry {
                key: "model_init_kwargs".into(),
                key_span: loader.name_span,
                value: Node { span: loader.args_span, value: Value::Mapping(kwargs) },
            });
        }
    }
    let env: Vec<Entry> = script
        .program
        .env
        .iter()
        .filter(|s| !s.dead)
        .filter_map(|s| match &s.value {
            Static::Known(v) => Some(Entry { key: s.name.clone(), key_span: s.name_span, value: node_of(v) }),
            Static::Unknown(_) => None,
        })
        .collect();
    if let (Some(first), Some(last)) = (env.first(), env.last()) {
        let span = first.key_span.cover(last.value.span);
        root.entries.push(Entry {
            key: "env".into(),
            key_span: Span::empty(first.key_span.start),
            value: Node { span, value: Value::Mapping(Mapping { entries: env }) },
        });
    }
    Node { span: covering(&root), value: Value::Mapping(root) }
}

/// A nested call's known keyword arguments as a mapping entry.
fn call_entry(script: &Script, key: &str, key_span: Span, index: usize) -> Option<Entry> {
    let call = script.calls.get(index)?;
    let entries = call.args.iter().filter_map(|a| known_entry(&a.name, a)).collect();
    Some(Entry {
        key: key.to_string(),
        key_span,
        value: Node { span: call.args_span, value: Value::Mapping(Mapping { entries }) },
    })
}

/// The span covering every entry of a mapping.
fn covering(mapping: &Mapping) -> Span {
    mapping.entries.iter().map(|e| e.key_span.cover(e.value.span)).reduce(Span::cover).unwrap_or_default()
}

/// `LoraConfig`/`get_peft_model` argument → TRL `ModelConfig` key.
fn lora_key(name: &str) -> Option<&'static str> {
    Some(match name {
        "r" => "lora_r",
        "lora_alpha" => "lora_alpha",
        "lora_dropout" => "lora_dropout",
        "target_modules" => "lora_target_modules",
        "modules_to_save" => "lora_modules_to_save",
        "use_rslora" => "use_rslora",
        "use_dora" => "use_dora",
        _ => return None,
    })
}

fn known_entry(key: &str, arg: &Arg) -> Option<Entry> {
    match &arg.value {
        ArgValue::Known(v) => Some(Entry { key: key.to_string(), key_span: arg.key_span, value: node_of(v) }),
        _ => None,
    }
}

/// A static Python value as a document node.
fn node_of(v: &Spanned) -> Node {
    let scalar = |text: String, style, kind| Value::Scalar(Scalar { text, style, kind });
    let value = match &v.value {
        PyValue::None => scalar("None".into(), ScalarStyle::Plain, ScalarKind::Null),
        PyValue::Bool(b) => scalar(if *b { "True" } else { "False" }.into(), ScalarStyle::Plain, ScalarKind::Bool(*b)),
        PyValue::Int(i) => scalar(i.to_string(), ScalarStyle::Plain, ScalarKind::Int(*i)),
        PyValue::Float(f) => scalar(f.to_string(), ScalarStyle::Plain, ScalarKind::Float(*f)),
        PyValue::Str(s, single) => scalar(
            s.clone(),
            if *single { ScalarStyle::SingleQuoted } else { ScalarStyle::DoubleQuoted },
            ScalarKind::Str,
        ),
        PyValue::List(items) => Value::Sequence(items.iter().map(node_of).collect()),
        PyValue::Dict(entries) => Value::Mapping(Mapping {
            entries: entries
                .iter()
                .map(|(key, key_span, value)| Entry { key: key.clone(), key_span: *key_span, value: node_of(value) })
                .collect(),
        }),
    };
    Node { span: v.span, value }
}
