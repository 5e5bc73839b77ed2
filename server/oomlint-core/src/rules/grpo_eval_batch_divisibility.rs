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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let strategy = support::text(&r, "eval_strategy").or_else(|| support::text(&r, "evaluation_strategy"));
    if strategy.is_none_or(|s| s == "no") {
        return;
    }
    let Some(b) = support::grpo_batch(ctx, &r) else { return };
    let generations = r
        .u64("num_generations_eval")
        .filter(|_| support::is_set(&r, "num_generations_eval"))
        .map_or(b.num_generations, |v| v.value);
    let per_device = r.u64("per_device_eval_batch_size").map_or(8, |v| v.value);
    if generations == 0 || (per_device * b.processes) % generations == 0 {
        return;
    }
    let span = support::anchor(
        &r,
        &["per_device_eval_batch_size", "num_generations_eval", "num_generations", "eval_strategy"],
    );
    let diagnostic = out.report(span, format!("the global eval batch ({per_device} * {} processes) is not a multiple of the {generations} generations used for evaluation: TRL raises \"The global eval batch size ({per_device} * {}) must be divisible by the number of generations used for evaluation ({generations}).\"", b.processes, b.processes));
    if let (1, Some(entry)) = (b.processes, r.entry("per_device_eval_batch_size")) {
        diagnostic.with_fix(set_value(
            ctx,
            entry,
            Literal::from(generations),
            format!("Evaluate {generations} completions per device"),
            Applicability::Unsafe,
        ));
    }
}
