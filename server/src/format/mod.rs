//! Which framework a file is for, and the mapping from its document to the [`Plan`].
//!
//! Detection looks, in order, at a modeline (`# oomlint: format=<name>`), a
//! `# yaml-language-server: $schema=` modeline naming one of our schemas, the file name,
//! and the keys the document uses. Anything else is [`Format::Unknown`] and gets no
//! findings. Each framework module turns a document into a plan with its defaults.

pub mod detect;
mod read;

pub mod accelerate;
pub mod axolotl;
pub mod deepspeed;
pub mod env;
pub mod hf_names;
pub mod litgpt;
pub mod llamafactory;
pub mod oomlint;
pub mod python;
#[cfg(test)]
mod test_support;
pub mod trl;

pub use detect::{detect, language_of};
pub use read::Reader;

use crate::plan::{Framework, Plan};
use crate::syntax::{Document, Language};
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
    /// Allocator and device variables in env files, shell scripts and YAML `env:` blocks.
    Env,
    /// `oomlint.toml` or `[tool.oomlint]` in `pyproject.toml`.
    Oomlint,
    Unknown,
}

impl Format {
    pub const ALL: [Format; 16] = [
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
            Format::Env => "env",
            Format::Oomlint => "oomlint",
            Format::Unknown => "unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The framework family (the `format` column of the corpus manifest).
    pub fn framework(self) -> Option<Framework> {
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
            Format::Env => Framework::Env,
            Format::Oomlint => Framework::Oomlint,
            Format::Unknown => return None,
        })
    }

    /// The syntax a file of this format is written in, when its name does not say.
    pub fn language(self) -> Language {
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

/// Builds the training plan of a document in `format` (None for formats without one).
pub fn build_plan(format: Format, doc: &Document, text: &str) -> Option<Plan> {
    let root = doc.root_mapping()?;
    let reader = Reader::new(root);
    let mut plan = match format {
        _ if matches!(doc.language, Language::Python | Language::Notebook) => python::plan(format, doc, text)?,
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
        Format::Env => Plan::new(Framework::Env),
        Format::Oomlint | Format::Unknown => return None,
    };
    plan.allocator = env::allocator_settings(doc, text);
    if plan.visible_devices.is_none() {
        plan.visible_devices = env::visible_devices(doc);
    }
    Some(plan)
}
