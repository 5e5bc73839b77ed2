//! ## What it does
//! Reports GRPO `num_generations` below 2 (TRL `num_generations`, Axolotl
//! `trl.num_generations`).
//!
//! ## Why
//! Advantages are rewards relative to the other completions of the same prompt; with
//! one completion every advantage is zero and the policy never updates. TRL raises
//! `ValueError: GRPO requires at least 2 generations per prompt to calculate the
//! advantages. You provided 1, which is less than the minimum required.`; Axolotl raises
//! "GRPO requires `trl.num_generations >= 2` …".
//!
//! ## Example
//! ```yaml
//! num_generations: 1    # error
//! ```
//!
//! ## Fix
//! Use at least 2 (TRL's default is 8). The fix writes 2.
//!
//! Fix safety: **unsafe**: more generations per prompt change the generation batch
//! (and may need a matching `per_device_train_batch_size`).
//!
//! ## Source
//! TRL `trl/trainer/grpo_config.py` (`GRPOConfig.__post_init__`): "GRPO requires at least
//! 2 generations per prompt to calculate the advantages. …"; Axolotl
//! `src/axolotl/utils/schemas/validation.py` (`check_grpo_batch_size_divisibility`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(b) = support::grpo_batch(ctx) else { return };
    let generations = b.num_generations;
    if generations.value >= 2 {
        return;
    }
    let Some(span) = generations.value_span() else { return };
    let framework = if b.axolotl {
        "Axolotl raises \"GRPO requires `trl.num_generations >= 2`\""
    } else {
        "TRL raises \"GRPO requires at least 2 generations per prompt to calculate the advantages.\""
    };
    out.report(span, format!("num_generations {}: {framework}", generations.value)).with_fix(support::set(
        ctx,
        generations,
        Literal::Int(2),
        "Use 2 generations per prompt",
        Applicability::Unsafe,
    ));
}
