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
    let Some(r) = support::reader(ctx) else { return };
    let Some(scheduler) =
        support::text(&r, "lr_scheduler_type").filter(|s| matches!(*s, "reduce_lr_on_plateau" | "greedy"))
    else {
        return;
    };
    let eval = support::text(&r, "eval_strategy").or_else(|| support::text(&r, "evaluation_strategy")).unwrap_or("no");
    if eval != "no" {
        return;
    }
    let Some(entry) = r.entry("lr_scheduler_type") else { return };
    out.report(entry.value.span, format!("`lr_scheduler_type: {scheduler}` without an eval strategy: transformers raises \"lr_scheduler_type {scheduler} requires an eval strategy\""));
}
