//! Which framework a file is for, on the weight of its evidence.
//!
//! `format::detect` proposes a format from marker keys (`model_name_or_path`, `num_epochs`,
//! `base_model`…). Many tools share such keys, so the proposal stands only when the rest of
//! the file agrees: no key that belongs to a tool oomlint does not read, and few top-level
//! keys unknown to the proposed format's schema. Otherwise the file is `Unknown`, with the
//! reason, and gets no finding: a false error costs more than a missed one.

use crate::format::{self, Format};
use crate::schema;
use crate::syntax::{Document, Mapping, Node};
use std::path::Path;

/// The format of a file, and why none was claimed when it is `Unknown`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recognition {
    pub(crate) format: Format,
    /// Why the file is not taken for a format oomlint reads (`None` when it is one).
    pub(crate) reason: Option<String>,
}

/// Keys of tools oomlint does not read, each a sure sign of that tool.
const FOREIGN: [(&str, &str); 3] = [
    // torchtune builds every object from a `_component_` dotted path (torchtune/config/_instantiate.py).
    ("_component_", "torchtune (`_component_`)"),
    // ms-swift's RLHF arguments.
    ("rlhf_type", "ms-swift (`rlhf_type`)"),
    // verl's Hydra trainer config (verl/trainer/config/ppo_trainer.yaml).
    ("actor_rollout_ref", "verl (`actor_rollout_ref`)"),
];

/// A proposal stands with at most this many top-level keys its schema does not know …
const UNKNOWN_KEYS_TOLERATED: usize = 2;
/// … or, beyond that, with at most this share of the top-level keys unknown. A typo or two
/// in a real config stays under it; another tool's arguments file (a different dataclass
/// read by the same `HfArgumentParser`) does not.
const UNKNOWN_SHARE_TOLERATED: f64 = 0.2;

/// The format of `doc`, read from `path`.
pub(crate) fn recognize(path: &Path, text: &str, doc: &Document) -> Recognition {
    let proposed = format::detect(path, text, doc);
    let claimed = |format| Recognition { format, reason: None };
    if let Some(target) = hydra_target(doc).filter(|_| format::detect::modeline_format(text).is_none()) {
        return match target_format(target) {
            Some(format) => claimed(format),
            None => {
                unknown(format!("Hydra instantiates `{target}` from it (`_target_`), a class oomlint does not read"))
            }
        };
    }
    // A script's format comes from the classes it calls, not from how many keys its calls share.
    let Some(root) = doc.root_mapping().filter(|_| weighed(proposed) && doc.program.is_none()) else {
        return claimed(proposed);
    };
    if let Some(tool) = foreign_tool(root) {
        return unknown(format!("its keys belong to {tool}, which oomlint does not read"));
    }
    let Some(known) = schema::top_level_keys(proposed).filter(|_| !extended_by_plugins(proposed, root)) else {
        return claimed(proposed);
    };
    let keys: Vec<&str> = root.entries.iter().map(|e| e.key.as_str()).collect();
    let strangers: Vec<&str> = keys.iter().copied().filter(|k| !known.contains(k)).collect();
    let share = strangers.len() as f64 / keys.len().max(1) as f64;
    if strangers.len() > UNKNOWN_KEYS_TOLERATED && share > UNKNOWN_SHARE_TOLERATED {
        let shown: Vec<String> = strangers.iter().take(5).map(|k| format!("`{k}`")).collect();
        let more = if strangers.len() > shown.len() { ", …" } else { "" };
        return unknown(format!(
            "{} of its {} top-level keys are not {} keys ({}{more}): it looks like another tool's config",
            strangers.len(),
            keys.len(),
            proposed.name(),
            shown.join(", ")
        ));
    }
    claimed(proposed)
}

/// The class a Hydra config names at its top (`_target_: trl.GRPOConfig`): `instantiate`
/// builds that class from the other keys, so the class, not the keys, says what reads them.
fn hydra_target(doc: &Document) -> Option<&str> {
    doc.root_mapping()?.get("_target_")?.as_scalar()?.as_str().map(str::trim)
}

/// The format whose schema is the class's own arguments; None for any other class (TRL's
/// experimental and KTO configs, a project's own classes).
fn target_format(target: &str) -> Option<Format> {
    let (module, class) = target.rsplit_once('.').unwrap_or(("", target));
    let trl = module == "trl" || module.starts_with("trl.trainer");
    let transformers = module == "transformers" || module.starts_with("transformers.training_args");
    match class {
        "SFTConfig" if trl => Some(Format::TrlSft),
        "DPOConfig" if trl => Some(Format::TrlDpo),
        "GRPOConfig" if trl => Some(Format::TrlGrpo),
        "TrainingArguments" | "Seq2SeqTrainingArguments" if transformers => Some(Format::Transformers),
        _ => None,
    }
}

/// Axolotl plugins bring their own config keys (`axolotl/integrations/base.py`,
/// `BasePlugin.get_input_args`, merged into the config model at load).
fn extended_by_plugins(format: Format, root: &Mapping) -> bool {
    format == Format::Axolotl && root.contains("plugins")
}

fn unknown(reason: String) -> Recognition {
    Recognition { format: Format::Unknown, reason: Some(reason) }
}

/// Formats proposed from keys that other tools share (not from a file name or an
/// unambiguous structure such as accelerate's `distributed_type` or an `env:` block).
fn weighed(format: Format) -> bool {
    !matches!(format, Format::Unknown | Format::Env | Format::Oomlint | Format::Accelerate | Format::Deepspeed)
}

/// The tool a foreign key anywhere in the mapping names.
fn foreign_tool(root: &Mapping) -> Option<&'static str> {
    fn visit(mapping: &Mapping, depth: usize) -> Option<&'static str> {
        for entry in &mapping.entries {
            if let Some((_, tool)) = FOREIGN.iter().find(|(key, _)| *key == entry.key) {
                return Some(tool);
            }
            // Those keys sit at the top or one level down (torchtune's `model:`, `optimizer:`).
            if depth < 2 {
                if let Some(found) = children(&entry.value).find_map(|m| visit(m, depth + 1)) {
                    return Some(found);
                }
            }
        }
        None
    }
    visit(root, 0)
}

/// The mappings directly under a node (its own, or those of a list's items).
fn children(node: &Node) -> impl Iterator<Item = &Mapping> {
    let own = node.as_mapping();
    let items = node.as_sequence().into_iter().flatten().filter_map(Node::as_mapping);
    own.into_iter().chain(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{self, Language};

    fn recognized(name: &str, text: &str) -> Recognition {
        recognize(Path::new(name), text, &syntax::parse(text, Language::Yaml))
    }

    #[test]
    fn a_config_of_the_proposed_format_is_claimed() {
        let sft = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\nlearning_rate: 2.0e-5\nper_device_train_batch_size: 4\noutput_dir: out\n";
        assert_eq!(recognized("sft.yaml", sft), Recognition { format: Format::TrlSft, reason: None });
        // Two typos are two findings, not another tool.
        let typos = format!("{sft}learnig_rate: 1\nnum_train_epoch: 3\n");
        assert_eq!(recognized("sft.yaml", &typos).format, Format::TrlSft);
    }

    #[test]
    fn another_tools_arguments_with_shared_markers_are_unknown() {
        // The arguments of a training script that are not TRL's, sharing `model_name_or_path`.
        let other = "model_name_or_path: m\ntokenizer_name: m\nuse_slow_tokenizer: true\nwith_tracking: true\ncheckpointing_steps: epoch\nkeep_last_n_checkpoints: 3\nlearning_rate: 1.0e-5\noutput_dir: out\n";
        let r = recognized("train.yaml", other);
        assert_eq!(r.format, Format::Unknown);
        assert!(r.reason.unwrap().contains("5 of its 8 top-level keys are not trl-sft keys"));
    }

    #[test]
    fn keys_of_tools_oomlint_does_not_read_decide() {
        let torchtune =
            "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\nbatch_size: 4\nnum_epochs: 1\n";
        let r = recognized("lora.yaml", torchtune);
        assert_eq!(r.format, Format::Unknown);
        assert!(r.reason.unwrap().contains("torchtune"));
        let swift = "model: Qwen/Qwen2.5-7B\nrlhf_type: grpo\nnum_generations: 8\n";
        assert_eq!(recognized("grpo.yaml", swift).format, Format::Unknown);
    }

    #[test]
    fn axolotl_plugins_bring_their_own_keys() {
        let base = "base_model: Qwen/Qwen2.5-0.5B\nsequence_len: 2048\nmicro_batch_size: 1\ngym_dir: x\ngym_port: 1\ngym_timeout: 2\n";
        assert_eq!(recognized("a.yaml", base).format, Format::Unknown);
        let with_plugin = format!("plugins:\n  - axolotl.integrations.gym.GymPlugin\n{base}");
        assert_eq!(recognized("a.yaml", &with_plugin).format, Format::Axolotl);
    }

    #[test]
    fn a_hydra_target_names_the_class() {
        let keys = "max_prompt_length: 512\nper_device_train_batch_size: 2\noutput_dir: out\n";
        let experimental = format!("_target_: trl.experimental.sdpo.SDPOConfig\n{keys}");
        let r = recognized("configs/training/sdpo.yaml", &experimental);
        assert_eq!(r.format, Format::Unknown);
        assert!(r.reason.unwrap().contains("trl.experimental.sdpo.SDPOConfig"));
        assert_eq!(
            recognized("configs/training/x.yaml", &format!("_target_: trl.DPOConfig\n{keys}")).format,
            Format::TrlDpo
        );
        let own = "_target_: src.rewards.RewardManager\nmodel_name_or_path: m\n";
        assert_eq!(recognized("rewards.yaml", own).format, Format::Unknown);
    }

    #[test]
    fn structural_formats_are_not_weighed() {
        let accelerate = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\nmy_own: 1\nother: 2\nthird: 3\n";
        assert_eq!(recognized("accelerate.yaml", accelerate).format, Format::Accelerate);
    }
}
