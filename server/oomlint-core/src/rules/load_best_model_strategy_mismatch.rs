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
    let Some(t) = support::trainer(ctx) else { return };
    let (true, Some(flag_key)) = (t.load_best_model_at_end.value, t.load_best_model_at_end.key_span()) else {
        return;
    };
    let (eval, save) = (t.eval_strategy.value.as_str(), t.save_strategy.value.as_str());
    if save == "best" {
        return;
    }
    let message = if eval != save {
        format!("`load_best_model_at_end` with eval strategy `{eval}` and save strategy `{save}`: transformers raises \"--load_best_model_at_end requires the save and eval strategy to match, except when --save_strategy=\\\"best\\\"\"")
    } else if eval == "steps" {
        let (eval_steps, save_steps) = (t.eval_steps.value, t.save_steps.value);
        let whole = eval_steps >= 1.0 && save_steps >= 1.0;
        if !whole || eval_steps == 0.0 || save_steps % eval_steps == 0.0 {
            return;
        }
        format!("`load_best_model_at_end` with save_steps {save_steps} not a multiple of eval_steps {eval_steps}: transformers raises \"--load_best_model_at_end requires the saving steps to be a round multiple of the evaluation steps\"")
    } else {
        return;
    };
    let span = if eval != save {
        support::first_key(&[t.save_strategy.key_span(), t.eval_strategy.key_span(), t.save_steps.key_span()])
    } else {
        support::first_key(&[t.save_steps.key_span(), t.eval_steps.key_span()])
    };
    out.report(span, message).with_related(flag_key, "load_best_model_at_end set here");
}
