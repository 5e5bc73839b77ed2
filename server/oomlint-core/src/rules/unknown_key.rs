//! ## What it does
//! Reports a key that the format's schema does not know, with the closest known key
//! when one is close enough ("did you mean `precision`?"), or the block where the key
//! belongs (LitGPT's `micro_batch_size` goes under `train:`).
//!
//! ## Why
//! Most training CLIs refuse unknown keys, but only after start-up: `HfArgumentParser`
//! (`parse_yaml_file`, `parse_dict`) raises `ValueError: Some keys are not used by the
//! HfArgumentParser`, the TRL CLI forwards unknown keys to `accelerate launch`, which
//! rejects them, LitGPT's jsonargparse fails with "Key 'x' is not expected", and
//! DeepSpeed's `zero_optimization` model forbids extra fields. A misspelt key
//! (`gradient_checkpoiting`) is, at best, silently ignored by tolerant loaders
//! (Axolotl's pydantic model): the setting you meant never applies.
//!
//! In a TRL or transformers config that lives in a repository which builds its own Python
//! package (its `setup.py` or `pyproject.toml` names one: open-r1, alignment-handbook),
//! an unknown key is a warning: the project's own scripts read such configs with config
//! classes that extend TRL's (`class GRPOConfig(trl.GRPOConfig)` with extra fields), so
//! the key may be theirs; `trl grpo` itself would still reject it.
//!
//! Likewise when the repository holds scripts that parse such configs with dataclasses of
//! their own (`@dataclass class ScriptArguments: dataset_id_or_path: str` passed to
//! `TrlParser((ScriptArguments, SFTConfig, ModelConfig))` or `HfArgumentParser(...)`): a key
//! that is a field of one of them is not reported, and any other unknown key is a warning,
//! since which script reads the file is not known. oomlint reads the Python files in the
//! config's directory and those above it up to the repository's root, and their
//! subdirectories two levels down, as text; it runs nothing.
//!
//! A Hydra config that names a TRL or transformers class (`_target_: trl.DPOConfig`) is
//! read as that class's file; `_target_` itself is Hydra's and is not reported.
//!
//! In a TRL config file, whether an unknown key fails depends on the TRL release
//! (`format/trl_unknown_keys.rs`): TRL 0.13 to 0.18 drop such keys, and some releases
//! reject them from the `trl` CLI but not from scripts; there the finding is a warning.
//!
//! ## Example
//! ```yaml
//! checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B
//! precison: bf16-true   # unknown key; did you mean `precision`?
//! ```
//!
//! ## Fix
//! Rename the key to the suggestion. Fix safety: **unsafe**: the suggestion is a guess
//! at what was meant, and the renamed setting starts to take effect.
//!
//! ## Source
//! The format's JSON Schema in `schema/` (`additionalProperties: false`), built from
//! transformers `hf_argparser.py`, TRL `trl/scripts/utils.py` (`TrlParser`), LitGPT's
//! jsonargparse CLI (`litgpt/__main__.py`), accelerate `commands/config/config_args.py`
//! and DeepSpeed `runtime/zero/config.py`.

use super::trl_unknown_keys::{self, Outcome};
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix, Severity};
use crate::format::Format;
use crate::syntax::Language;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let parser = trl_unknown_keys::for_config_file(ctx);
    let package = own_config_classes(ctx);
    let own = ctx.own_arguments.filter(|_| hf_config_file(ctx));
    for unknown in &ctx.schema.unknown_keys {
        // Hydra's own key: `instantiate` takes the class from it and passes the others on.
        if unknown.parent.is_empty() && unknown.key == "_target_" {
            continue;
        }
        // A field of the repository's own argument dataclasses.
        if unknown.parent.is_empty() && own.is_some_and(|own| own.defines(&unknown.key)) {
            continue;
        }
        let place = if unknown.parent.is_empty() { String::new() } else { format!(" in `{}`", unknown.parent) };
        let mut message = format!("unknown key `{}`{place} for {}", unknown.key, ctx.format);
        let suggestion = unknown.suggestion();
        if let Some(suggestion) = &suggestion {
            message.push_str(&format!(" (did you mean `{suggestion}`?)"));
        } else if let Some(owner) = unknown.belongs_under() {
            message.push_str(&format!("; `{}` belongs under `{owner}:`", unknown.key));
        }
        let lenient = match (parser, package) {
            (Some(Outcome::Ignored(why)), None) => {
                message.push_str(&format!("; {why}, so it has no effect"));
                true
            }
            (Some(Outcome::Ignored(why)), Some(package)) => {
                message.push_str(&format!("; {why}, and the repository's own package (`{package}`) may read it"));
                true
            }
            (_, Some(package)) => {
                message.push_str(&format!("; the repository builds its own package (`{package}`), whose scripts may add it to TRL's config classes (the `trl` CLI rejects it)"));
                true
            }
            (_, None) if own.is_some() => {
                let classes = own.map(|own| own.describe()).unwrap_or_default();
                message.push_str(&format!("; scripts of this repository parse configs with argument classes of their own ({classes}), none of which defines it, but which script reads this file is not known"));
                true
            }
            (Some(Outcome::Depends(why)), None) => {
                message.push_str(&format!("; {why}"));
                true
            }
            _ => false,
        };
        let diagnostic = out.report(unknown.span, message);
        if lenient {
            diagnostic.severity = diagnostic.severity.min(Severity::Warning);
        }
        if let Some(suggestion) = &suggestion {
            diagnostic.with_fix(Fix {
                title: format!("Rename to `{suggestion}`"),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace_keeping_quotes(ctx.text, unknown.span, suggestion, ctx.document.language)],
            });
        }
    }
}

/// The package of a repository whose own scripts may read a TRL-style config with config
/// classes of their own (see the rule's documentation).
fn own_config_classes<'c>(ctx: &Context<'c>) -> Option<&'c str> {
    hf_config_file(ctx).then(|| ctx.versions.project_package()).flatten()
}

/// A TRL or transformers config file: a script names its config class; only a config file
/// leaves its reader open.
pub(super) fn hf_config_file(ctx: &Context) -> bool {
    let hf_arguments = matches!(ctx.format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Transformers);
    hf_arguments && matches!(ctx.document.language, Language::Yaml | Language::Json)
}
