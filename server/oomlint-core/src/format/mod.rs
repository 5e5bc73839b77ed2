//! Which framework a file is for, and the mapping from its document to the [`Plan`].
//!
//! Detection looks, in order, at a modeline (`# oomlint: format=<name>`), a
//! `# yaml-language-server: $schema=` modeline naming one of our schemas, the file name,
//! and the keys the document uses. Anything else is [`Format::Unknown`] and gets no
//! findings. Each framework module turns a document into a plan with its defaults.

pub(crate) mod detect;
mod read;

pub(crate) mod accelerate;
pub(crate) mod axolotl;
pub(crate) mod checkpoint_quantization;
pub(crate) mod deepspeed;
pub(crate) mod env;
pub(crate) mod facts;
pub(crate) mod hf_names;
pub(crate) mod launch;
pub(crate) mod litgpt;
pub(crate) mod llamafactory;
pub(crate) mod oomlint;
pub(crate) mod openrlhf;
pub mod python;
/// The framework ranges a config of `format` can run under, by what requires them: the
/// launcher's start-up check (LLaMA-Factory's `check_dependencies`), or the module its class
/// paths import (a LitGPT config naming `lit_gpt.*`: see [`litgpt::LIT_GPT_MODULE`]).
pub(crate) fn launcher_requirements(
    format: Format,
    document: &Document,
) -> Option<(&'static str, &'static [&'static str])> {
    match format {
        Format::Llamafactory => Some(("LLaMA-Factory", llamafactory::REQUIREMENTS)),
        _ if format.framework() == Some(Framework::Litgpt) && litgpt::names_lit_gpt_module(document) => {
            Some(litgpt::LIT_GPT_MODULE)
        }
        _ => None,
    }
}

#[cfg(test)]
mod test_support;
pub(crate) mod trl;
pub(crate) mod verl;

pub use detect::{detect, language_of};
pub(crate) use read::Reader;

use crate::plan::{Framework, Insertion, InsertionStyle, Plan};
use crate::syntax::{self, Document, Language};
use serde::Serialize;

/// A config format oomlint understands (its schema is `schema/<name>.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Format {
    LitgptLora,
    LitgptAdapter,
    LitgptAdapterV2,
    LitgptFull,
    LitgptPretrain,
    TrlSft,
    TrlDpo,
    TrlGrpo,
    Transformers,
    Axolotl,
    Llamafactory,
    Accelerate,
    Deepspeed,
    /// verl's Hydra overrides on a launch script's command line.
    Verl,
    /// OpenRLHF's trainer flags on a launch script's command line.
    Openrlhf,
    /// Allocator and device variables in env files, shell scripts and YAML `env:` blocks.
    Env,
    /// `oomlint.toml` or `[tool.oomlint]` in `pyproject.toml`.
    Oomlint,
    Unknown,
}

impl Format {
    pub(crate) const ALL: [Format; 18] = [
        Format::LitgptLora,
        Format::LitgptAdapter,
        Format::LitgptAdapterV2,
        Format::LitgptFull,
        Format::LitgptPretrain,
        Format::TrlSft,
        Format::TrlDpo,
        Format::TrlGrpo,
        Format::Transformers,
        Format::Axolotl,
        Format::Llamafactory,
        Format::Accelerate,
        Format::Deepspeed,
        Format::Verl,
        Format::Openrlhf,
        Format::Env,
        Format::Oomlint,
        Format::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::LitgptLora => "litgpt-lora",
            Format::LitgptAdapter => "litgpt-adapter",
            Format::LitgptAdapterV2 => "litgpt-adapter-v2",
            Format::LitgptFull => "litgpt-full",
            Format::LitgptPretrain => "litgpt-pretrain",
            Format::TrlSft => "trl-sft",
            Format::TrlDpo => "trl-dpo",
            Format::TrlGrpo => "trl-grpo",
            Format::Transformers => "transformers",
            Format::Axolotl => "axolotl",
            Format::Llamafactory => "llamafactory",
            Format::Accelerate => "accelerate",
            Format::Deepspeed => "deepspeed",
            Format::Verl => "verl",
            Format::Openrlhf => "openrlhf",
            Format::Env => "env",
            Format::Oomlint => "oomlint",
            Format::Unknown => "unknown",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Format> {
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The framework family (the `format` column of the corpus manifest).
    pub(crate) fn framework(self) -> Option<Framework> {
        Some(match self {
            Format::LitgptLora
            | Format::LitgptAdapter
            | Format::LitgptAdapterV2
            | Format::LitgptFull
            | Format::LitgptPretrain => Framework::Litgpt,
            Format::TrlSft | Format::TrlDpo | Format::TrlGrpo => Framework::Trl,
            Format::Transformers => Framework::Transformers,
            Format::Axolotl => Framework::Axolotl,
            Format::Llamafactory => Framework::Llamafactory,
            Format::Accelerate => Framework::Accelerate,
            Format::Deepspeed => Framework::Deepspeed,
            Format::Verl => Framework::Verl,
            Format::Openrlhf => Framework::Openrlhf,
            Format::Env => Framework::Env,
            Format::Oomlint => Framework::Oomlint,
            Format::Unknown => return None,
        })
    }

    /// The syntax a file of this format is written in, when its name does not say.
    pub(crate) fn language(self) -> Language {
        match self {
            Format::Deepspeed => Language::Json,
            Format::Oomlint => Language::Toml,
            _ => Language::Yaml,
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses `text` in `language` into the document the formats read: a script's or
/// notebook's recognized calls laid out as a config (`python::lay_out`), any other
/// language's tree as parsed.
pub fn document(text: &str, language: Language) -> Document {
    let mut document = python::parse(text, language).unwrap_or_else(|| syntax::parse(text, language));
    python::lay_out(&mut document);
    document
}

/// The plan inputs the file computes at run time, one sentence each, for the estimate's
/// missing inputs (a script's values known only when it runs; none for configs).
pub(crate) fn unknown_inputs(document: &Document, plan: &Plan) -> Vec<String> {
    if document.program.is_some() {
        python::unknown_inputs(plan)
    } else {
        Vec::new()
    }
}

/// Builds the training plan of a document in `format` (None for formats without one).
pub(crate) fn build_plan(format: Format, doc: &Document, text: &str) -> Option<Plan> {
    let root = doc.root_mapping()?;
    let reader = Reader::new(root);
    let mut plan = match format {
        _ if matches!(doc.language, Language::Python | Language::Notebook) => python::plan(format, doc)?,
        Format::LitgptLora
        | Format::LitgptAdapter
        | Format::LitgptAdapterV2
        | Format::LitgptFull
        | Format::LitgptPretrain => litgpt::plan(format, &reader),
        Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Transformers => trl::plan(format, &reader),
        Format::Axolotl => axolotl::plan(&reader),
        Format::Llamafactory => llamafactory::plan(&reader),
        Format::Accelerate => accelerate::plan(&reader),
        Format::Deepspeed => deepspeed::plan(&reader),
        Format::Verl => verl::plan(root, text),
        Format::Openrlhf => openrlhf::plan(root),
        Format::Env => Plan::new(Framework::Env),
        Format::Oomlint | Format::Unknown => return None,
    };
    plan.language = doc.language;
    if let (Some(trainer), Language::Python | Language::Notebook) = (plan.trainer.as_mut(), doc.language) {
        // TRL's ModelConfig belongs to the `trl` CLI: a script loads its model itself.
        trainer.model_config = false;
    }
    plan.allocator = env::allocator_settings(doc, text);
    if plan.visible_devices.is_none() {
        plan.visible_devices = env::visible_devices(doc);
    }
    if doc.language == Language::Yaml {
        plan.insertion = insertion(format, root, text);
    }
    Some(plan)
}

/// The top-level keys a lever may add, per format (plan field → key). Fields whose value
/// would need another shape in the format (LLaMA-Factory's `quantization_bit`, Axolotl's
/// nested TRL block) are left out: those levers then carry no edit.
pub(crate) fn insertable_keys(format: Format) -> &'static [(&'static str, &'static str)] {
    match format {
        Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Transformers => &[
            ("micro_batch_size", "per_device_train_batch_size"),
            ("gradient_accumulation", "gradient_accumulation_steps"),
            ("gradient_checkpointing", "gradient_checkpointing"),
            ("optimizer", "optim"),
            ("quantization", "load_in_4bit"),
            ("loss", "use_liger_kernel"),
            ("vllm_gpu_memory_utilization", "vllm_gpu_memory_utilization"),
            ("vllm_enable_sleep_mode", "vllm_enable_sleep_mode"),
        ],
        Format::Axolotl => &[
            ("micro_batch_size", "micro_batch_size"),
            ("gradient_accumulation", "gradient_accumulation_steps"),
            ("gradient_checkpointing", "gradient_checkpointing"),
            ("optimizer", "optimizer"),
        ],
        Format::Llamafactory => &[
            ("micro_batch_size", "per_device_train_batch_size"),
            ("gradient_accumulation", "gradient_accumulation_steps"),
            ("optimizer", "optim"),
        ],
        Format::LitgptLora | Format::LitgptAdapter | Format::LitgptAdapterV2 | Format::LitgptFull => {
            &[("quantization", "quantize")]
        }
        // Hydra overrides of keys `ppo_trainer.yaml` has (no `+` needed).
        Format::Verl => &[
            ("gradient_checkpointing", "actor_rollout_ref.model.enable_gradient_checkpointing"),
            ("verl_param_offload", "actor_rollout_ref.actor.fsdp_config.param_offload"),
            ("verl_optimizer_offload", "actor_rollout_ref.actor.fsdp_config.optimizer_offload"),
            ("verl_layered_summon", "actor_rollout_ref.rollout.layered_summon"),
            ("verl_load_format", "actor_rollout_ref.rollout.load_format"),
            ("verl_dynamic_bsz", "actor_rollout_ref.actor.use_dynamic_bsz"),
            ("verl_max_token_len", "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"),
        ],
        _ => &[],
    }
}

/// The start of the line after the last top-level entry of a block mapping whose keys
/// start their lines; None for flow mappings and formats with nothing to add.
fn insertion(format: Format, root: &syntax::Mapping, text: &str) -> Option<Insertion> {
    let keys = insertable_keys(format);
    let starts_line = |at: usize| at == 0 || text.as_bytes().get(at.wrapping_sub(1)) == Some(&b'\n');
    if keys.is_empty() || root.entries.is_empty() || !root.entries.iter().all(|e| starts_line(e.key_span.start)) {
        return None;
    }
    let end = root.entries.iter().map(|e| e.value.span.end.max(e.key_span.end)).max()?;
    let (offset, needs_newline) = match text.get(end..)?.find('\n') {
        Some(i) => (end + i + 1, false),
        None => (text.len(), true),
    };
    Some(Insertion { offset, needs_newline, keys, style: InsertionStyle::YamlLine })
}

#[cfg(test)]
mod insertion_tests {
    use super::*;
    use crate::syntax::Literal;

    fn insertion_of(format: Format, text: &str) -> Option<Insertion> {
        let doc = syntax::parse(text, Language::Yaml);
        build_plan(format, &doc, text)?.insertion
    }

    #[test]
    fn keys_are_added_after_the_last_top_level_entry() {
        let text = "lora_target_modules:\n  - q_proj\n  - v_proj\nmodel_name_or_path: m  # base\n# trailing comment\n";
        let at = insertion_of(Format::TrlSft, text).expect("a block mapping");
        assert_eq!(&text[..at.offset], "lora_target_modules:\n  - q_proj\n  - v_proj\nmodel_name_or_path: m  # base\n");
        assert!(!at.needs_newline);
        let two = Literal::Int(2);
        assert_eq!(at.line("gradient_accumulation", &two).as_deref(), Some("gradient_accumulation_steps: 2\n"));
        assert_eq!(at.line("max_seq_length", &Literal::Int(512)), None, "no top-level key for it in this table");
    }

    #[test]
    fn a_file_without_a_final_line_break_gets_one() {
        let text = "model_name_or_path: m\noutput_dir: out  # comment";
        let at = insertion_of(Format::TrlSft, text).expect("a block mapping");
        assert_eq!((at.offset, at.needs_newline), (text.len(), true));
    }

    #[test]
    fn flow_mappings_and_formats_without_keys_get_none() {
        assert!(insertion_of(Format::TrlSft, "{model_name_or_path: m, bf16: true}\n").is_none());
        assert!(insertion_of(Format::Accelerate, "distributed_type: FSDP\nnum_processes: 2\n").is_none());
        let litgpt = insertion_of(Format::LitgptLora, "checkpoint_dir: m\ntrain:\n  micro_batch_size: 4\n").unwrap();
        let nf4 = Literal::Str("bnb.nf4".into());
        assert_eq!(litgpt.line("quantization", &nf4).as_deref(), Some("quantize: bnb.nf4\n"));
        assert_eq!(litgpt.line("micro_batch_size", &Literal::Int(2)), None, "nested under train: not added at the top");
    }
}
