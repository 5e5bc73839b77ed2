//! ## What it does
//! Reports a TRL GRPO config that evaluates (`eval_strategy` other than `no`) with a
//! global eval batch (`per_device_eval_batch_size × num_processes`) that is not a
//! multiple of the evaluation generations (`num_generations_eval`, else
//! `num_generations`).
//!
//! ## Why
//! Evaluation samples whole prompt groups too, so `GRPOConfig.__post_init__` raises
//! `ValueError: The global eval batch size (4 * 1) must be divisible by the number of
//! generations used for evaluation (8).` before training starts.
//!
//! ## Example
//! ```yaml
//! eval_strategy: steps
//! per_device_eval_batch_size: 4
//! num_generations: 8    # error
//! ```
//!
//! ## Fix
//! Make `per_device_eval_batch_size × num_processes` a multiple of the generations,
//! or set `num_generations_eval`. The fix sets `per_device_eval_batch_size` to the
//! generation count when that key is written and one process is used.
//!
//! Fix safety: **unsafe**: a larger eval batch needs more memory during evaluation.
//!
//! ## Source
//! TRL `trl/trainer/grpo_config.py` (`GRPOConfig.__post_init__`): "The global eval batch
//! size ({b} * {p}) must be divisible by the number of generations used for evaluation ({n})."

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    // TRL 0.14 has no such check; it comes with the train batch's in 0.15 (`GRPOTrainer.__init__`).
    if ctx.format != Format::TrlGrpo || !support::trl_at_least(ctx, "0.15") {
        return;
    }
    let Some(plan) = ctx.plan else { return };
    let (Some(trainer), Some(rl)) = (plan.trainer.as_ref(), plan.rl.as_ref()) else { return };
    let Some(grpo) = trainer.grpo.as_ref() else { return };
    if trainer.eval_strategy.value == "no" {
        return;
    }
    let generations = grpo.num_generations_eval.value;
    let per_device_setting = &trainer.per_device_eval_batch_size;
    let per_device = per_device_setting.value;
    let processes = plan.world_size();
    if generations == 0 || (per_device * processes) % generations == 0 {
        return;
    }
    let span = support::first_key(&[
        per_device_setting.key_span(),
        grpo.num_generations_eval.key_span(),
        rl.num_generations.key_span(),
        trainer.eval_strategy.key_span(),
    ]);
    let mut message = format!("the global eval batch ({per_device} * {processes} processes) is not a multiple of the {generations} generations used for evaluation: TRL raises \"The global eval batch size ({per_device} * {processes}) must be divisible by the number of generations used for evaluation ({generations}).\"");
    // The world size is the launch's unless the file states it (or a notebook runs one process).
    let world_known = plan.stated_world_size().is_some();
    if !world_known {
        message.push_str(" on one process; the world size is set at launch, and other world sizes may divide it");
    }
    let diagnostic = out.report(span, message);
    if !world_known {
        diagnostic.severity = crate::diagnostic::Severity::Warning;
    }
    if processes == 1 {
        diagnostic.with_fix(support::set(
            ctx,
            per_device_setting,
            Literal::from(generations),
            format!("Evaluate {generations} completions per device"),
            Applicability::Unsafe,
        ));
    }
}
