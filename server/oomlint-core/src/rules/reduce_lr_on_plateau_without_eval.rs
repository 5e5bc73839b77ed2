//! ## What it does
//! Reports `lr_scheduler_type: reduce_lr_on_plateau` (or `greedy`) without an eval
//! strategy (`eval_strategy` absent or `no`) in TRL, transformers and LLaMA-Factory
//! configs.
//!
//! ## Why
//! These schedulers step on the evaluation metric; with no evaluation there is none.
//! `TrainingArguments` raises `ValueError: lr_scheduler_type reduce_lr_on_plateau requires
//! an eval strategy` at start-up.
//!
//! ## Example
//! ```yaml
//! lr_scheduler_type: reduce_lr_on_plateau   # error: eval_strategy defaults to "no"
//! ```
//!
//! ## Fix
//! Add `eval_strategy: steps` (or `epoch`) and an eval dataset, or pick another
//! scheduler. No automatic fix: evaluation needs a dataset.
//!
//! ## Source
//! transformers `src/transformers/training_args.py` (`_validate_args`): "lr_scheduler_type
//! reduce_lr_on_plateau requires an eval strategy", "lr_scheduler_type greedy requires an
//! eval strategy".

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::has_training_arguments(ctx.format) {
        return;
    }
    let Some(trainer) = support::trainer(ctx) else { return };
    let scheduler = &trainer.lr_scheduler_type;
    if !matches!(scheduler.value.as_str(), "reduce_lr_on_plateau" | "greedy") || trainer.eval_strategy.value != "no" {
        return;
    }
    let Some(span) = scheduler.value_span() else { return };
    out.report(span, format!("`lr_scheduler_type: {}` without an eval strategy: transformers raises \"lr_scheduler_type {} requires an eval strategy\"", scheduler.value, scheduler.value));
}
