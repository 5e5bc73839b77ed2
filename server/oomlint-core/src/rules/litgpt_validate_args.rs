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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::{litgpt, Format};
use crate::plan::{LitgptSettings, Sourced};
use crate::syntax::Literal;

/// Arguments by name, each given a value, null, or absent.
type Arguments<'a> = Vec<(&'static str, &'a Option<Sourced<bool>>)>;

/// Whether `validate_args` sees the argument given: set and not null.
fn given(setting: &Option<Sourced<bool>>) -> Option<&Sourced<bool>> {
    setting.as_ref().filter(|s| s.value)
}

/// The argument is written as null.
fn null(setting: &Option<Sourced<bool>>) -> Option<&Sourced<bool>> {
    setting.as_ref().filter(|s| !s.value && s.is_from_file())
}

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) {
        return;
    }
    let Some(l) = support::litgpt(ctx) else { return };
    let script = litgpt::script(ctx.format);
    let pretrain = ctx.format == Format::LitgptPretrain;
    let fraction = l.lr_warmup_fraction.as_ref().map(|f| f.clone().map(|v| v.is_some()));
    let (unsupported, required): (Arguments, Arguments) = if pretrain {
        (
            vec![("epochs", &l.epochs), ("max_new_tokens", &l.max_new_tokens)],
            vec![("max_tokens", &l.max_tokens), ("max_norm", &l.max_norm)],
        )
    } else {
        (
            vec![
                ("max_tokens", &l.max_tokens),
                ("max_norm", &l.max_norm),
                ("tie_embeddings", &l.tie_embeddings),
                ("lr_warmup_fraction", &fraction),
            ],
            vec![("epochs", &l.epochs), ("max_new_tokens", &l.max_new_tokens)],
        )
    };
    for (name, setting) in unsupported {
        let Some(setting) = given(setting) else { continue };
        let Some(key) = setting.key_span() else { continue };
        out.report(key, format!("`litgpt {script}` doesn't support the '{name}' argument: LitGPT's validate_args raises \"… doesn't support the '{name}' argument\""))
            .with_fix(support::set(ctx,setting, Literal::Null, format!("Set `{name}` to null"), Applicability::Unsafe));
    }
    for (name, setting) in required {
        // Absent keys take the script's default, which is set; only an explicit null fails.
        let Some(key) = null(setting).and_then(|s| s.key_span()) else { continue };
        out.report(key, format!("`litgpt {script}` requires the '{name}' argument, but it is null: LitGPT's validate_args raises \"… requires the '{name}' argument\""));
    }
    if pretrain {
        resume_and_initial_checkpoint(l, out);
    }
}

fn resume_and_initial_checkpoint(l: &LitgptSettings, out: &mut Reporter) {
    let (resume, initial) = (&l.resume, &l.initial_checkpoint_dir);
    if !(resume.value && initial.value) {
        return;
    }
    let span = support::first_key(&[initial.key_span()]);
    let diagnostic = out.report(span, "`resume` together with `initial_checkpoint_dir`: LitGPT raises \"Can't provide both `--resume` and `--initial_checkpoint_dir`. Choose one.\"");
    if let Some(key) = resume.key_span() {
        diagnostic.with_related(key, "resume set here");
    }
}
