//! ## What it does
//! Reports a GRPO generation batch that does not hold whole prompt groups: the
//! generation batch (TRL: `per_device_train_batch_size × num_processes ×
//! steps_per_generation`, or `generation_batch_size`; Axolotl: `micro_batch_size ×
//! gradient_accumulation_steps` per rank, or `trl.generation_batch_size`) is not a
//! multiple of `num_generations`. Also an explicit `generation_batch_size` that is not
//! a multiple of the global batch (`per_device_train_batch_size × num_processes`).
//!
//! ## Why
//! Each prompt is sampled `num_generations` times and the advantages are computed per
//! group, so TRL's `GRPOConfig.__post_init__` raises `ValueError: generation_batch_size
//! (…) must be divisible by num_generations (…).` (Axolotl raises its own "GRPO:
//! generation batch size must be divisible by `trl.num_generations`" at validation). In
//! GRPO `per_device_train_batch_size` counts completions, not prompts.
//!
//! ## Example
//! ```yaml
//! per_device_train_batch_size: 4
//! gradient_accumulation_steps: 1
//! num_generations: 8      # error: 4 × 1 process × 1 step = 4 completions
//! ```
//!
//! ## Fix
//! Raise `gradient_accumulation_steps` (or `steps_per_generation`) until the product
//! is a multiple of `num_generations`, or lower `num_generations`. The fix sets
//! `gradient_accumulation_steps` to the smallest value that divides, when that key is
//! written and nothing else fixes the generation batch.
//!
//! Fix safety: **unsafe**: more accumulation steps change the batch per optimizer step.
//!
//! ## Source
//! TRL `trl/trainer/grpo_config.py` (`GRPOConfig.__post_init__`): "generation_batch_size
//! ({g}) must be divisible by num_generations ({n}).", "generation_batch_size ({g}) must
//! be divisible by the global batch size ({b})."; Axolotl
//! `src/axolotl/utils/schemas/validation.py` (`check_grpo_batch_size_divisibility`).

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(r) = support::reader(ctx) else { return };
    let Some(b) = support::grpo_batch(ctx, &r) else { return };
    if b.num_generations < 2 || (b.generation_batch_size.is_some() && b.steps_per_generation.is_some()) {
        return; // grpo-min-generations, grpo-generation-batch-and-steps
    }
    let global = b.per_device.saturating_mul(b.processes);
    if let (false, Some(g)) = (b.axolotl, b.generation_batch_size) {
        if global > 0 && g % global != 0 {
            out.report(
                support::anchor(&r, &[b.generation_batch_path]),
                format!("generation_batch_size ({g}) must be divisible by the global batch size ({global} = per_device_train_batch_size {} x {} processes), as TRL's GRPOConfig requires", b.per_device, b.processes),
            );
            return;
        }
    }
    let steps = b.steps_per_generation.unwrap_or(b.accumulation);
    let generation = b.generation_batch_size.unwrap_or(global.saturating_mul(steps));
    if b.num_generations == 0 || generation % b.num_generations == 0 {
        return;
    }
    let how = match (b.generation_batch_size, b.axolotl) {
        (Some(_), _) => format!("{} = {generation}", b.generation_batch_path),
        (None, true) => {
            format!("micro_batch_size {} x gradient_accumulation_steps {} = {generation}", b.per_device, b.accumulation)
        }
        (None, false) => format!(
            "per_device_train_batch_size {} x {} processes x {} {steps} = {generation}",
            b.per_device,
            b.processes,
            if b.steps_per_generation.is_some() { "steps_per_generation" } else { "gradient_accumulation_steps" }
        ),
    };
    let framework = if b.axolotl {
        "Axolotl raises \"GRPO: generation batch size must be divisible by `trl.num_generations`\""
    } else {
        "TRL raises \"generation_batch_size (…) must be divisible by num_generations (…).\""
    };
    let span = support::anchor(&r, &[b.num_generations_path]);
    let diagnostic = out.report(
        span,
        format!(
            "the generation batch ({how}) is not a multiple of num_generations ({}): {framework}",
            b.num_generations
        ),
    );
    for path in [
        "per_device_train_batch_size",
        "micro_batch_size",
        "gradient_accumulation_steps",
        "steps_per_generation",
        b.generation_batch_path,
    ] {
        if let Some(key) = support::key_of(&r, path) {
            diagnostic.with_related(key, format!("{path} set here"));
        }
    }
    let fixable = b.generation_batch_size.is_none() && b.steps_per_generation.is_none();
    if let (true, Some(entry)) = (fixable, r.entry("gradient_accumulation_steps")) {
        let unit = global.max(1);
        let needed = b.num_generations / gcd(b.num_generations, unit);
        let accumulation = needed * b.accumulation.div_ceil(needed).max(1);
        diagnostic.with_fix(set_value(
            ctx,
            entry,
            Literal::from(accumulation),
            format!("Set gradient_accumulation_steps to {accumulation}"),
            Applicability::Unsafe,
        ));
    }
}
