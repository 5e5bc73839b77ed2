//! ## What it does
//! Reports the `train`/`eval` settings a LitGPT script refuses in `validate_args`:
//! the fine-tuning scripts reject `train.max_tokens`, `train.max_norm`,
//! `train.tie_embeddings` and `train.lr_warmup_fraction` and need `train.epochs` and
//! `eval.max_new_tokens`; `pretrain` rejects `train.epochs` and `eval.max_new_tokens`,
//! needs `train.max_tokens` and `train.max_norm`, and refuses `resume` together with
//! `initial_checkpoint_dir`.
//!
//! ## Why
//! Every rank raises one `ValueError` listing all issues, e.g. `…/finetune/lora.py
//! doesn't support the 'max_norm' argument. This is set in TrainArgs(...)` or `…requires
//! the 'epochs' argument…`, after the model has been set up. Note the consequence:
//! LitGPT fine-tuning has no gradient clipping at all.
//!
//! ## Example
//! ```yaml
//! checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B
//! train:
//!   max_norm: 1.0     # error: finetune_lora doesn't support 'max_norm'
//! ```
//!
//! ## Fix
//! Remove the unsupported keys (or set them to `null`), and give the required ones a
//! value. The fix sets an unsupported key to `null`.
//!
//! Fix safety: **unsafe**: it drops a setting the author asked for (for example
//! gradient clipping), which the script would never have honoured.
//!
//! ## Source
//! LitGPT `litgpt/finetune/lora.py`, `full.py`, `adapter.py`, `adapter_v2.py` and
//! `litgpt/pretrain.py` (`validate_args`): "{script} doesn't support the {name!r}
//! argument. This is set in {args}", "{script} requires the {name!r} argument. This is
//! set in {args}", "Can't provide both `--resume` and `--initial_checkpoint_dir`. Choose one."

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::{litgpt, Format};
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let script = litgpt::script(ctx.format);
    let (unsupported, required): (&[&str], &[&str]) = if ctx.format == Format::LitgptPretrain {
        (&["train.epochs", "eval.max_new_tokens"], &["train.max_tokens", "train.max_norm"])
    } else {
        (
            &["train.max_tokens", "train.max_norm", "train.tie_embeddings", "train.lr_warmup_fraction"],
            &["train.epochs", "eval.max_new_tokens"],
        )
    };
    for path in unsupported {
        let Some(entry) = r.entry(path).filter(|_| support::is_set(&r, path)) else { continue };
        let name = path.rsplit('.').next().unwrap_or(path);
        out.report(entry.key_span, format!("`litgpt {script}` doesn't support the '{name}' argument: LitGPT's validate_args raises \"… doesn't support the '{name}' argument\""))
            .with_fix(set_value(ctx, entry, Literal::Null, format!("Set `{name}` to null"), Applicability::Unsafe));
    }
    for path in required {
        // Absent keys take the script's default, which is set; only an explicit null fails.
        let Some(entry) = r.entry(path).filter(|_| r.is_null(path)) else { continue };
        let name = path.rsplit('.').next().unwrap_or(path);
        out.report(entry.key_span, format!("`litgpt {script}` requires the '{name}' argument, but it is null: LitGPT's validate_args raises \"… requires the '{name}' argument\""));
    }
    if ctx.format == Format::LitgptPretrain
        && support::flag(&r, "resume")
        && support::is_set(&r, "initial_checkpoint_dir")
    {
        let span = support::anchor(&r, &["initial_checkpoint_dir"]);
        let diagnostic = out.report(span, "`resume` together with `initial_checkpoint_dir`: LitGPT raises \"Can't provide both `--resume` and `--initial_checkpoint_dir`. Choose one.\"");
        if let Some(key) = support::key_of(&r, "resume") {
            diagnostic.with_related(key, "resume set here");
        }
    }
}
