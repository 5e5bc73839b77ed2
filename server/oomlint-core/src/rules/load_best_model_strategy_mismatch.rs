//! ## What it does
//! Reports `load_best_model_at_end: true` when the save and eval strategies differ
//! (unless `save_strategy: best`), or when both are `steps` and `save_steps` is not a
//! multiple of `eval_steps`. Defaults count: `eval_strategy` is `no` and
//! `save_strategy` is `steps`, so the flag alone fails.
//!
//! ## Why
//! The best checkpoint can only be chosen among checkpoints that were evaluated.
//! `TrainingArguments` raises `ValueError: --load_best_model_at_end requires the save and
//! eval strategy to match, except when --save_strategy="best", but found …` or "…requires
//! the saving steps to be a round multiple of the evaluation steps…" at start-up.
//!
//! ## Example
//! ```yaml
//! load_best_model_at_end: true
//! eval_strategy: epoch
//! save_strategy: steps     # error
//! ```
//!
//! ## Fix
//! Use the same strategy for both (and `save_steps` a multiple of `eval_steps`). No
//! automatic fix: the checkpoint cadence is the author's choice.
//!
//! ## Source
//! transformers `src/transformers/training_args.py` (`_validate_args`):
//! "--load_best_model_at_end requires the save and eval strategy to match, except when
//! --save_strategy=\"best\", …", "…requires the saving steps to be a round multiple of the
//! evaluation steps, …".

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::has_training_arguments(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(flag) = r.entry("load_best_model_at_end").filter(|_| support::flag(&r, "load_best_model_at_end")) else {
        return;
    };
    let eval = support::text(&r, "eval_strategy").or_else(|| support::text(&r, "evaluation_strategy")).unwrap_or("no");
    let save = support::text(&r, "save_strategy").unwrap_or("steps");
    if save == "best" {
        return;
    }
    let message = if eval != save {
        format!("`load_best_model_at_end` with eval strategy `{eval}` and save strategy `{save}`: transformers raises \"--load_best_model_at_end requires the save and eval strategy to match, except when --save_strategy=\\\"best\\\"\"")
    } else if eval == "steps" {
        let logging =
            r.f64("logging_steps").map_or(if support::is_trl(ctx.format) { 10.0 } else { 500.0 }, |v| v.value);
        let eval_steps = r.f64("eval_steps").filter(|_| support::is_set(&r, "eval_steps")).map_or(logging, |v| v.value);
        let save_steps = r.f64("save_steps").map_or(500.0, |v| v.value);
        let whole = eval_steps >= 1.0 && save_steps >= 1.0;
        if !whole || eval_steps == 0.0 || save_steps % eval_steps == 0.0 {
            return;
        }
        format!("`load_best_model_at_end` with save_steps {save_steps} not a multiple of eval_steps {eval_steps}: transformers raises \"--load_best_model_at_end requires the saving steps to be a round multiple of the evaluation steps\"")
    } else {
        return;
    };
    let span = support::anchor(&r, &["save_strategy", "eval_strategy", "evaluation_strategy", "save_steps"]);
    let span = if eval != save { span } else { support::anchor(&r, &["save_steps", "eval_steps"]) };
    out.report(span, message).with_related(flag.key_span, "load_best_model_at_end set here");
}
