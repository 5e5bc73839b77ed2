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

use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    for unknown in &ctx.schema.unknown_keys {
        let place = if unknown.parent.is_empty() { String::new() } else { format!(" in `{}`", unknown.parent) };
        let mut message = format!("unknown key `{}`{place} for {}", unknown.key, ctx.format);
        let suggestion = unknown.suggestion();
        if let Some(suggestion) = &suggestion {
            message.push_str(&format!("; did you mean `{suggestion}`?"));
        } else if let Some(owner) = unknown.belongs_under() {
            message.push_str(&format!("; `{}` belongs under `{owner}:`", unknown.key));
        }
        let diagnostic = out.report(unknown.span, message);
        if let Some(suggestion) = &suggestion {
            diagnostic.with_fix(Fix {
                title: format!("Rename to `{suggestion}`"),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace_keeping_quotes(ctx.text, unknown.span, suggestion, ctx.document.language)],
            });
        }
    }
}
