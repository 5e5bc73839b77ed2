//! ## What it does
//! Reports a key that the framework renamed or removed, from the release that did so
//! on: `evaluation_strategy` (transformers 4.46: `eval_strategy`), `torch_dtype` (TRL
//! 0.27: `dtype`), `max_prompt_length` in GRPO (TRL 0.28). A key that is only
//! deprecated (still accepted, to be removed) is a warning.
//!
//! In a TRL or transformers config file of a repository whose own scripts parse configs
//! with argument dataclasses that have a field of the key's name (`rules/unknown_key.rs`),
//! the finding is a warning: a script that parses with that class takes the key.
//!
//! ## Why
//! Configs outlive the framework version they were written for. A removed key is an
//! unknown key to the new release: `HfArgumentParser` raises "Some keys are not used",
//! the TRL CLI forwards it to `accelerate launch`, which rejects it. The version is
//! taken from the dependency files near the config (`requirements*.txt`,
//! `pyproject.toml`, `uv.lock`, …) or `framework-versions` in `oomlint.toml`; with no
//! pin, the newest release oomlint knows is assumed, except for the frameworks a launcher
//! checks at start-up (LLaMA-Factory refuses transformers > 5.8, TRL > 0.24). A config
//! pinned to a release before the removal gets no finding.
//!
//! ## Example
//! ```yaml
//! model_name_or_path: Qwen/Qwen2.5-0.5B
//! evaluation_strategy: steps   # removed in transformers 4.46: use eval_strategy
//! ```
//!
//! Under Unsloth (from 2026.8.11, `unsloth/models/rl_config_compat.py`) a key the
//! installed TRL no longer has is dropped from a patched TRL config with a notice
//! ("… will be IGNORED"), so the run starts: there the finding is a warning.
//!
//! A notebook or script that installs the framework from a URL (`pip install
//! git+https://github.com/huggingface/transformers.git@<commit>`) runs a release oomlint
//! cannot tell: there the finding is a note.
//!
//! ## Fix
//! Rename the key to its replacement. Fix safety: **safe** when the replacement is not
//! already set, the value is valid for it (a pure rename keeps the meaning), and the
//! framework's version is pinned (so the release that runs has the new name); with no
//! pin the rename is **unsafe**: an older install may not know the new name, or give it
//! another meaning (`warmup_steps` takes no ratio before transformers 5). When the
//! replacement is already set, the fix deletes the old entry: **unsafe**, since the two
//! values may differ. No fix when the key has no replacement or the value must change
//! shape.
//!
//! ## Source
//! `x-removed` / `x-deprecated` in `schema/*.json`, from transformers
//! `training_args.py`, TRL `trl/trainer/*_config.py` and `model_config.py`, Axolotl
//! `utils/schemas/deprecated.py` (each entry names the release).

use super::trl_unknown_keys::{self, Outcome};
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix, Severity};
use crate::format::Format;
use crate::span::Span;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let language = ctx.document.language;
    let own = ctx.own_arguments.filter(|_| super::unknown_key::hf_config_file(ctx));
    for removed in &ctx.schema.removed_keys {
        // A field of the repository's own argument dataclasses (`rules/unknown_key.rs`):
        // the script that parses with that class takes the key; which script reads this
        // file is not known.
        let owner = own.and_then(|own| own.owner(&removed.key));
        let applies =
            removed.since.as_ref().is_none_or(|(framework, version)| ctx.versions.at_least(framework, version));
        if !applies {
            continue;
        }
        let pinned = removed.since.as_ref().and_then(|(framework, _)| ctx.versions.get(framework));
        let when = match &removed.since {
            Some((framework, version)) => {
                let pin = match pinned {
                    Some(p) => format!(", pinned {}", p.describe()),
                    None if ctx.versions.installed_from_url(framework) => format!(
                        " (the file installs {framework} from a URL, whose release oomlint cannot tell: the newest is assumed)"
                    ),
                    None => format!(" (no {framework} version is pinned: the newest release is assumed)"),
                };
                let verb = if removed.deprecated_only { "deprecated" } else { "removed" };
                format!("{verb} in {framework} {version}{pin}")
            }
            None => (if removed.deprecated_only { "deprecated" } else { "removed" }).to_string(),
        };
        let detail = if removed.message.is_empty() { String::new() } else { format!(": {}", removed.message) };
        // To TRL's parser a removed key is an unknown key: some releases drop those.
        let from_hf = removed.since.as_ref().is_some_and(|(f, _)| matches!(f.as_str(), "trl" | "transformers"));
        let parser = match trl_unknown_keys::for_config_file(ctx).filter(|_| from_hf && !removed.deprecated_only) {
            Some(Outcome::Depends(why) | Outcome::Ignored(why)) => Some(why),
            _ => None,
        };
        let unsloth = if removed.deprecated_only { None } else { unsloth_config(ctx, removed) };
        let ignored_by_unsloth = unsloth == Some(true);
        let after = match unsloth {
            Some(true) => "Unsloth (2026.8.11 and newer) drops it from its patched TRL config with a notice (\"… will be IGNORED\"), so it has no effect",
            Some(false) => "The pinned Unsloth (before 2026.8.11) passes it on, and the config raises TypeError: unexpected keyword argument",
            None => parser.unwrap_or(""),
        };
        let after = capitalized(after);
        let sep = match (after.is_empty(), detail.ends_with('.')) {
            (true, _) => "",
            (false, true) => " ",
            (false, false) => ". ",
        };
        let mut message = format!("`{}` was {when}{detail}{sep}{after}", removed.key);
        if let Some(owner) = owner {
            let end = if message.ends_with('.') { " " } else { "; " };
            message.push_str(&format!("{end}{owner} of this repository has a field of that name, so a script that parses with it takes the key"));
        }
        let diagnostic = out.report(removed.key_span, message);
        if removed.deprecated_only || ignored_by_unsloth || parser.is_some() || owner.is_some() {
            diagnostic.severity = diagnostic.severity.min(Severity::Warning);
        }
        // Installed from a commit: the key may well exist there, so only a note.
        let unknown_release = removed
            .since
            .as_ref()
            .is_some_and(|(framework, _)| pinned.is_none() && ctx.versions.installed_from_url(framework));
        if unknown_release {
            diagnostic.severity = Severity::Info;
        }
        let Some(replacement) = &removed.replacement else { continue };
        if !removed.replacement_present && removed.value_fits_replacement {
            let (applicability, title) = match (pinned, &removed.since) {
                (None, Some((framework, _))) => (
                    Applicability::Unsafe,
                    format!("Rename to `{replacement}` (for the newest {framework}: no version is pinned)"),
                ),
                _ => (Applicability::Safe, format!("Rename to `{replacement}`")),
            };
            diagnostic.with_fix(Fix {
                title,
                applicability,
                edits: vec![Edit::replace_keeping_quotes(ctx.text, removed.key_span, replacement, language)],
            });
        } else if removed.replacement_present && ctx.document.program.is_none() {
            // (A script's keyword argument is no line of its own to delete.)
            if let Some(lines) = entry_lines(ctx.text, removed.key_span, removed.value_span) {
                diagnostic.with_fix(Fix {
                    title: format!("Remove `{}` (`{replacement}` is set)", removed.key),
                    applicability: Applicability::Unsafe,
                    edits: vec![Edit::delete(lines)],
                });
            }
        }
    }
}

/// For a config key (not a trainer argument) of TRL or transformers in an Unsloth script's
/// patched TRL config: whether Unsloth drops it instead of failing (2026.8.11 and newer,
/// `rl_config_compat.py`, `_unsloth_filter_config_init_kwargs`). None elsewhere.
fn unsloth_config(ctx: &Context, removed: &crate::schema::RemovedKey) -> Option<bool> {
    // Unsloth patches TRL's configs, not transformers' `TrainingArguments`.
    let trl_config = matches!(ctx.format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo);
    let unsloth = trl_config && ctx.plan.is_some_and(|p| p.framework == crate::plan::Framework::Unsloth);
    let config_key = !removed.trainer_argument
        && removed.since.as_ref().is_some_and(|(framework, _)| matches!(framework.as_str(), "trl" | "transformers"));
    (unsloth && config_key)
        .then(|| ctx.versions.at_least("unsloth", &crate::versions::Version::release(&[2026, 8, 11])))
}

/// The whole lines of an entry that starts its line and ends its last one (a trailing
/// comment goes with it); None when other content shares those lines.
fn entry_lines(text: &str, key: Span, value: Span) -> Option<Span> {
    let start = text[..key.start].rfind('\n').map_or(0, |i| i + 1);
    if !text[start..key.start].trim().is_empty() {
        return None;
    }
    let end = text[value.end..].find('\n').map_or(text.len(), |i| value.end + i + 1);
    // An empty value's span sits at the key's end, before the colon.
    let rest = text[value.end..end].trim();
    let rest = if value.is_empty() { rest.trim_start_matches(':').trim() } else { rest };
    (rest.is_empty() || rest.starts_with('#')).then_some(Span::new(start, end))
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}
