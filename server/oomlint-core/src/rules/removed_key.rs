//! ## What it does
//! Reports a key that the framework renamed or removed, from the release that did so
//! on: `evaluation_strategy` (transformers 4.46: `eval_strategy`), `torch_dtype` (TRL
//! 0.27: `dtype`), `max_prompt_length` in GRPO (TRL 0.28). A key that is only
//! deprecated (still accepted, to be removed) is a warning.
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
//! ## Fix
//! Rename the key to its replacement. Fix safety: **safe** when the replacement is not
//! already set and the value is valid for it (a pure rename keeps the meaning). When the
//! replacement is already set, the fix deletes the old entry: **unsafe**, since the two
//! values may differ. No fix when the key has no replacement or the value must change
//! shape.
//!
//! ## Source
//! `x-removed` / `x-deprecated` in `schema/*.json`, from transformers
//! `training_args.py`, TRL `trl/trainer/*_config.py` and `model_config.py`, Axolotl
//! `utils/schemas/deprecated.py` (each entry names the release).

use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix, Severity};
use crate::span::Span;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let language = ctx.document.language;
    for removed in &ctx.schema.removed_keys {
        let applies =
            removed.since.as_ref().is_none_or(|(framework, version)| ctx.versions.at_least(framework, version));
        if !applies {
            continue;
        }
        let when = match &removed.since {
            Some((framework, version)) => {
                let pinned =
                    ctx.versions.get(framework).map_or_else(String::new, |p| format!(", pinned {}", p.describe()));
                let verb = if removed.deprecated_only { "deprecated" } else { "removed" };
                format!("{verb} in {framework} {version}{pinned}")
            }
            None => (if removed.deprecated_only { "deprecated" } else { "removed" }).to_string(),
        };
        let detail = if removed.message.is_empty() { String::new() } else { format!(": {}", removed.message) };
        let diagnostic = out.report(removed.key_span, format!("`{}` was {when}{detail}", removed.key));
        if removed.deprecated_only {
            diagnostic.severity = diagnostic.severity.min(Severity::Warning);
        }
        let Some(replacement) = &removed.replacement else { continue };
        if !removed.replacement_present && removed.value_fits_replacement {
            diagnostic.with_fix(Fix {
                title: format!("Rename to `{replacement}`"),
                applicability: Applicability::Safe,
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
