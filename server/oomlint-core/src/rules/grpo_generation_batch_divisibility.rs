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
//! TRL's generation batch counts every process: when neither the file nor the launch gives
//! the world size (no `num_processes`; a notebook runs one process), a batch that fails on
//! one process but divides on others is a warning that says how many processes divide it.
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
//! TRL checks this from 0.15 (`GRPOTrainer.__init__`: "The global train batch size (…)
//! must be evenly divisible by the number of generations per prompt"), over
//! `per_device_train_batch_size × num_processes` alone through 0.16 and with the
//! accumulation steps from 0.17; TRL 0.14 repeats each prompt and checks nothing.
//!
//! ## Source
//! TRL `trl/trainer/grpo_config.py` (`GRPOConfig.__post_init__`): "generation_batch_size
//! ({g}) must be divisible by num_generations ({n}).", "generation_batch_size ({g}) must
//! be divisible by the global batch size ({b})."; Axolotl
//! `src/axolotl/utils/schemas/validation.py` (`check_grpo_batch_size_divisibility`).

use super::support;
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
    let Some(b) = support::grpo_batch(ctx) else { return };
    let num_generations = b.num_generations.value;
    let generation_batch_size = b.generation_batch_size.map(|g| g.value);
    let steps_per_generation = b.steps_per_generation.map(|s| s.value);
    if num_generations < 2 || (generation_batch_size.is_some() && steps_per_generation.is_some()) {
        return; // grpo-min-generations, grpo-generation-batch-and-steps
    }
    // TRL checks the batch from 0.15 on (`GRPOTrainer.__init__`): before, each prompt was
    // simply repeated `num_generations` times. Through 0.16 it checks the global batch alone;
    // 0.17 multiplies in the accumulation steps (`steps_per_generation` from 0.18).
    if !b.axolotl && !support::trl_at_least(ctx, "0.15") {
        return;
    }
    let accumulated = b.axolotl || support::trl_at_least(ctx, "0.17");
    let (per_device_key, generation_batch_key) = b.keys();
    let (per_device, accumulation) = (b.per_device_value(), b.accumulation_value());
    let global = per_device.saturating_mul(b.processes);
    if let (false, Some(g)) = (b.axolotl, generation_batch_size) {
        if global > 0 && g % global != 0 {
            out.report(
                support::first_key(&[b.generation_batch_size.and_then(|g| g.key_span())]),
                format!("generation_batch_size ({g}) must be divisible by the global batch size ({global} = per_device_train_batch_size {per_device} x {} processes), as TRL's GRPOConfig requires", b.processes),
            );
            return;
        }
    }
    let steps = steps_per_generation.unwrap_or(if accumulated { accumulation } else { 1 });
    let generation = generation_batch_size.unwrap_or(global.saturating_mul(steps));
    if num_generations == 0 || generation % num_generations == 0 {
        return;
    }
    let how = match (generation_batch_size, b.axolotl) {
        (Some(_), _) => format!("{generation_batch_key} = {generation}"),
        (None, true) => {
            format!("micro_batch_size {per_device} x gradient_accumulation_steps {accumulation} = {generation}")
        }
        (None, false) if !accumulated => {
            format!("per_device_train_batch_size {per_device} x {} processes = {generation}", b.processes)
        }
        (None, false) => format!(
            "per_device_train_batch_size {per_device} x {} processes x {} {steps} = {generation}",
            b.processes,
            if steps_per_generation.is_some() { "steps_per_generation" } else { "gradient_accumulation_steps" }
        ),
    };
    let framework = if b.axolotl {
        "Axolotl raises \"GRPO: generation batch size must be divisible by `trl.num_generations`\""
    } else if !accumulated {
        "TRL before 0.17 raises \"The global train batch size (…) must be evenly divisible by the number of generations per prompt (…)\" (it does not count accumulation steps)"
    } else {
        "TRL raises \"generation_batch_size (…) must be divisible by num_generations (…).\""
    };
    // TRL's generation batch grows with the world size, which the launch sets: unless the
    // file states it (or a notebook runs one process), it fails on some world sizes only.
    let world_known = ctx.plan.and_then(|p| p.stated_world_size()).is_some();
    let depends_on_world = !b.axolotl && generation_batch_size.is_none() && !world_known;
    let mut message =
        format!("the generation batch ({how}) is not a multiple of num_generations ({num_generations}): {framework}");
    if depends_on_world {
        let divides_with = num_generations / gcd(num_generations, per_device.saturating_mul(steps).max(1));
        message.push_str(&format!(
            " on one process; the world size is set at launch (`--num_processes`), and a multiple of {divides_with} processes divides it"
        ));
    }
    let span = support::first_key(&[b.num_generations.key_span()]);
    let diagnostic = out.report(span, message);
    if depends_on_world {
        diagnostic.severity = crate::diagnostic::Severity::Warning;
    }
    for (key, setting) in [
        (per_device_key, Some(b.per_device)),
        ("gradient_accumulation_steps", Some(b.accumulation)),
        ("steps_per_generation", b.steps_per_generation),
        (generation_batch_key, b.generation_batch_size),
    ] {
        if let Some(span) = setting.and_then(|s| s.key_span()) {
            diagnostic.with_related(span, format!("{key} set here"));
        }
    }
    if generation_batch_size.is_none() && steps_per_generation.is_none() && accumulated {
        let unit = global.max(1);
        let needed = num_generations / gcd(num_generations, unit);
        let accumulation = needed * accumulation.div_ceil(needed).max(1);
        diagnostic.with_fix(support::set(
            ctx,
            b.accumulation,
            Literal::from(accumulation),
            format!("Set gradient_accumulation_steps to {accumulation}"),
            Applicability::Unsafe,
        ));
    }
}
