//! `removed-key` findings of Python scripts and notebooks: the schema speaks of the TRL
//! CLI; a script's config class and trainer take or reject the same keys as calls.

use super::{Findings, RemovedKey};
use crate::format::python::{script, ArgValue, Call, Callee};
use crate::span::Span;
use crate::syntax::Document;
use crate::versions::Version;

/// `SFTTrainer` keyword arguments TRL removed: (name, TRL minor release, replacement).
/// TRL 0.13 moved the dataset and packing arguments into `SFTConfig` (deprecated in 0.12,
/// `trl/trainer/sft_trainer.py`); 0.16 removed `tokenizer` (0.12: `processing_class`).
const SFT_TRAINER_REMOVED: &[(&str, u64, Option<&str>)] = &[
    ("dataset_text_field", 13, None),
    ("packing", 13, None),
    ("max_seq_length", 13, None),
    ("infinite", 13, None),
    ("num_of_sequences", 13, None),
    ("chars_per_token", 13, None),
    ("dataset_num_proc", 13, None),
    ("dataset_batch_size", 13, None),
    ("neftune_noise_alpha", 13, None),
    ("model_init_kwargs", 13, None),
    ("dataset_kwargs", 13, None),
    ("eval_packing", 13, None),
    ("tokenizer", 16, Some("processing_class")),
];

/// `removed-key` findings as a script's calls meet them (the schema speaks of the TRL CLI):
///
/// * a removed keyword of the config class raises `TypeError` when the class is built;
///   under Unsloth, whose config classes (`unsloth/models/rl.py`) re-add `max_seq_length`
///   and drop other retired arguments with a warning (`unsloth/models/rl_config_compat.py`),
///   `max_seq_length` is no finding and the others have no effect;
/// * `SFTTrainer` keyword arguments TRL removed are added, in place of the schema's finding
///   for the same key (the schema describes `SFTConfig`). Scripts that import Unsloth get
///   none: Unsloth wraps every TRL trainer (`unsloth/trainer.py`
///   `_backwards_compatible_trainer`) to rename `tokenizer` and, when the config is passed
///   as `args=`, to move the other arguments onto it.
pub(crate) fn removed_keys(doc: &Document, findings: &mut Findings) {
    let Some(script) = script(doc) else { return };
    let unsloth = script.program.modules.iter().any(|m| m == "unsloth");
    let roles = script.roles();
    if let Some(config) = script.call(roles.config) {
        config_removed_keys(config, unsloth, findings);
    }
    let trainer = script.call(roles.trainer).filter(|t| t.callee == Callee::SftTrainer);
    if let Some(trainer) = trainer {
        sft_trainer_removed_keys(trainer, unsloth, findings);
    }
}

/// A script whose config class has no schema of its own (`ORPOConfig`, `KTOConfig`,
/// `CPOConfig`, `RewardConfig`, read against the `TrainingArguments` they extend): the keys
/// that schema does not know are the class's own fields, not unknown keys.
pub(crate) fn subclass_keys(doc: &Document, findings: &mut Findings) {
    let Some(script) = script(doc) else { return };
    let roles = script.roles();
    let preference = |i: Option<usize>| {
        script.call(i).is_some_and(|c| matches!(c.callee, Callee::PreferenceConfig(_) | Callee::PreferenceTrainer(_)))
    };
    if preference(roles.config) || preference(roles.trainer) {
        findings.unknown_keys.clear();
    }
}

/// What a removed keyword of the config class does in Python (see [`removed_keys`]).
fn config_removed_keys(config: &Call, unsloth: bool, findings: &mut Findings) {
    let class = config.path.last().map_or("the config", String::as_str);
    findings.removed_keys.retain_mut(|removed| {
        if !config.args.iter().any(|a| a.key_span == removed.key_span) {
            return true;
        }
        if unsloth && removed.key == "max_seq_length" {
            return false;
        }
        // The schema's note on the TRL CLI (`Under `trl grpo` …`) does not apply to a call.
        let cli_note = removed.message.find(" Under `").unwrap_or(removed.message.len());
        let consequence = if removed.deprecated_only {
            String::new()
        } else if unsloth {
            // What Unsloth does depends on its release: `removed-key` says it.
            String::new()
        } else {
            format!("`{class}(...)` raises TypeError: unexpected keyword argument")
        };
        let base = removed.message[..cli_note].trim_end();
        removed.message =
            [base, consequence.as_str()].into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
        true
    });
}

fn sft_trainer_removed_keys(trainer: &Call, unsloth: bool, findings: &mut Findings) {
    for arg in &trainer.args {
        let Some(&(name, minor, replacement)) = SFT_TRAINER_REMOVED.iter().find(|(n, _, _)| *n == arg.name) else {
            continue;
        };
        findings.removed_keys.retain(|r| r.key_span != arg.key_span);
        let accepted = unsloth && (replacement.is_some() || trainer.arg("args").is_some());
        if accepted {
            continue;
        }
        let message = match replacement {
            Some(new) => format!("`SFTTrainer` takes it as `{new}` (deprecated in TRL 0.12)"),
            None => format!(
                "`SFTTrainer` no longer takes it (TypeError: unexpected keyword argument); set `{}` in `SFTConfig(...)` (deprecated in TRL 0.12)",
                if name == "max_seq_length" { "max_length" } else { name }
            ),
        };
        let value_span = match &arg.value {
            ArgValue::Known(v) => v.span,
            _ => Span::empty(arg.key_span.end),
        };
        findings.removed_keys.push(RemovedKey {
            key: format!("SFTTrainer({name}=…)"),
            key_span: arg.key_span,
            value_span,
            since: Some(("trl".into(), Version::release(&[0, minor]))),
            replacement: replacement.map(str::to_string),
            message,
            deprecated_only: false,
            replacement_present: replacement.is_some_and(|r| trainer.arg(r).is_some()),
            value_fits_replacement: true,
            trainer_argument: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::check;
    use super::*;
    use crate::format::{self, python::detect};
    use crate::syntax::Language;

    const OLD_SFT_TRAINER: &str = r#"
from transformers import TrainingArguments
from trl import SFTTrainer
trainer = SFTTrainer(model="Qwen/Qwen2.5-0.5B", tokenizer=tok, max_seq_length=512, packing=True,
                     args=TrainingArguments(output_dir="o", max_seq_length=1), dataset_text_field="text")
"#;

    fn found(text: &str) -> Vec<String> {
        let doc = format::document(text, Language::Python);
        let mut findings = check(detect(&script(&doc).unwrap()), &doc);
        removed_keys(&doc, &mut findings);
        findings
            .removed_keys
            .iter()
            .map(|r| format!("{} {:?}", r.key, r.since.as_ref().map(|s| s.1.to_string())))
            .collect()
    }

    #[test]
    fn old_sft_trainer_arguments_are_reported_as_removed() {
        assert_eq!(
            found(OLD_SFT_TRAINER),
            [
                "SFTTrainer(tokenizer=…) Some(\"0.16\")",
                "SFTTrainer(max_seq_length=…) Some(\"0.13\")",
                "SFTTrainer(packing=…) Some(\"0.13\")",
                "SFTTrainer(dataset_text_field=…) Some(\"0.13\")",
            ]
        );
    }

    #[test]
    fn unsloth_keeps_accepting_old_sft_trainer_arguments() {
        let with_unsloth = format!("from unsloth import FastLanguageModel\n{OLD_SFT_TRAINER}");
        assert!(found(&with_unsloth).is_empty(), "{:?}", found(&with_unsloth));
        // Without `args=`, Unsloth's wrapper passes the arguments on to TRL unchanged.
        let no_args = "import unsloth\nfrom trl import SFTTrainer\nSFTTrainer(model='m', tokenizer=t, packing=True)\n";
        assert_eq!(found(no_args), ["SFTTrainer(packing=…) Some(\"0.13\")"]);
    }

    #[test]
    fn removed_config_keywords_speak_of_the_call() {
        let grpo = "from trl import GRPOConfig as C\nargs = C(max_prompt_length=256)\n";
        let doc = format::document(grpo, Language::Python);
        let mut findings = check(detect(&script(&doc).unwrap()), &doc);
        removed_keys(&doc, &mut findings);
        let message = &findings.removed_keys[0].message;
        assert!(message.ends_with("`GRPOConfig(...)` raises TypeError: unexpected keyword argument"), "{message}");
        assert!(!message.contains("accelerate launch"), "{message}");
        // Unsloth's config classes take `max_seq_length` and drop retired arguments.
        let unsloth =
            "from unsloth import FastLanguageModel\nfrom trl import SFTConfig, GRPOConfig\nSFTConfig(max_seq_length=512)\n";
        assert!(found(unsloth).is_empty(), "{:?}", found(unsloth));
        let plain = "from trl import SFTConfig\nSFTConfig(max_seq_length=512)\n";
        assert_eq!(found(plain), ["max_seq_length Some(\"0.20\")"]);
    }
}
