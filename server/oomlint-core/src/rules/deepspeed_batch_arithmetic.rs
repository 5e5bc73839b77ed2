//! ## What it does
//! Reports a DeepSpeed JSON whose numeric `train_batch_size` is not a multiple of
//! `train_micro_batch_size_per_gpu × gradient_accumulation_steps` (or of the one of the
//! two it gives as a number), so no world size makes them agree; and any of the three at
//! 0 or below. The world size is set at launch, so a `train_batch_size` that some world
//! size reaches is not reported. (`"auto"` values are filled by the HF Trainer and are
//! not checked.)
//!
//! In a launch script the world size is the launch's (processes × machines), and the
//! DeepSpeed file is the one the launch names (`--deepspeed F` of the program, or the
//! `deepspeed_config_file` of the accelerate config it passes): when all three are numbers,
//! `train_batch_size` must equal their product with that world size. The finding lands on
//! the word of the script that names the file, saying where the value is set.
//!
//! ## Why
//! DeepSpeed asserts `train_batch_size == micro × gradient_accumulation_steps ×
//! world_size` in `DeepSpeedConfig._batch_assertion`: `AssertionError: Check batch
//! related parameters. train_batch_size is not equal to micro_batch_per_gpu *
//! gradient_acc_step * world_size 30 != 4 * 4 * …`.
//!
//! ## Example
//! ```json
//! {"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4,
//!  "gradient_accumulation_steps": 4}
//! ```
//!
//! ## Fix
//! Give two of the three (DeepSpeed derives the third), make them agree, or use
//! `"auto"` under the HF Trainer. A DeepSpeed file alone gets no automatic fix: the
//! intended world size is unknown. Under a launch that states it, an unsafe fix sets
//! `train_batch_size` to the product where the DeepSpeed file writes it (in that file):
//! the per-GPU batch and accumulation stay, the global batch the file wrote changes.
//!
//! ## Source
//! DeepSpeed `deepspeed/runtime/config.py` (`DeepSpeedConfig._batch_assertion`): "Check
//! batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *
//! gradient_acc_step * world_size {t} != {m} * {g} * {w}", "Train batch size: {t} has to
//! be greater than 0"; `DeepSpeedConfig._set_batch_related_parameters` derives a missing
//! micro batch (`train_batch // world_size // grad_acc`) or accumulation count
//! (`train_batch // micro_batch // world_size`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::plan::Sourced;
use crate::syntax::Literal;

/// An integer batch value (DeepSpeed asserts on integers; other numbers are left to the schema).
fn integer(setting: &Option<Sourced<f64>>) -> Option<(i64, &Sourced<f64>)> {
    let s = setting.as_ref().filter(|s| s.value.fract() == 0.0 && s.value.abs() < 9.0e15)?;
    Some((s.value as i64, s))
}

/// A launch's DeepSpeed file, when the launch states its world size.
fn launched<'p>(ctx: &Context<'p>) -> Option<(&'p crate::plan::DeepspeedSettings, u64)> {
    let plan = ctx.plan?;
    let launch = plan.launch.as_ref()?;
    let ds = plan.trainer.as_ref().and_then(|t| t.deepspeed.as_ref()).or(launch.deepspeed.as_ref())?;
    Some((ds, plan.stated_world_size()?))
}

/// `train_batch_size` against micro × accumulation × the launch's world size.
fn check_with_world(ctx: &Context, out: &mut Reporter, ds: &crate::plan::DeepspeedSettings, world: u64) {
    let Some(plan) = ctx.plan else { return };
    let (Some((train, t)), Some((micro, _)), Some((accumulation, _))) = (
        integer(&ds.train_batch_size),
        integer(&ds.train_micro_batch_size_per_gpu),
        integer(&ds.gradient_accumulation_steps),
    ) else {
        return;
    };
    let world = i64::try_from(world).unwrap_or(i64::MAX);
    let product = micro.saturating_mul(accumulation).saturating_mul(world);
    if train <= 0 || micro <= 0 || accumulation <= 0 || train == product {
        return;
    }
    let Some((span, set_in)) = plan.place(t) else { return };
    let title =
        format!("Set train_batch_size to {product} ({micro} x {accumulation} x the launch's {world} processes)");
    out.report(span, format!("train_batch_size {train}{set_in} is not train_micro_batch_size_per_gpu x gradient_accumulation_steps x world size = {micro} x {accumulation} x {world} = {product} for the {world} processes this launch starts: DeepSpeed asserts \"train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {train} != {micro} * {accumulation} * {world}\""))
        .with_fix(support::set(ctx, t, Literal::Int(product.into()), title, Applicability::Unsafe));
}

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if let Some((ds, world)) = launched(ctx) {
        return check_with_world(ctx, out, ds, world);
    }
    let Some(ds) = support::deepspeed(ctx) else { return };
    let keys = [
        ("train_batch_size", integer(&ds.train_batch_size)),
        ("train_micro_batch_size_per_gpu", integer(&ds.train_micro_batch_size_per_gpu)),
        ("gradient_accumulation_steps", integer(&ds.gradient_accumulation_steps)),
    ];
    for (key, value) in keys {
        if let Some((v, setting)) = value.filter(|(v, _)| *v <= 0) {
            if let Some(span) = setting.value_span() {
                out.report(span, format!("`{key}` is {v}: DeepSpeed asserts it \"has to be greater than 0\""));
                return;
            }
        }
    }
    let (_, Some((train, train_setting))) = keys[0] else { return };
    // The world size is the launch's: only a train_batch_size that no world size reaches is
    // reported. DeepSpeed derives a missing micro batch or accumulation count by floor
    // division (`_set_batch_related_parameters`) and the HF integration fills an `"auto"`
    // one, but the assertion still multiplies the written ones, so each must divide it.
    let (micro, accumulation) = (keys[1].1.map(|(v, _)| v), keys[2].1.map(|(v, _)| v));
    let (step, what) = match (micro, accumulation) {
        (Some(m), Some(g)) => (m.saturating_mul(g), "train_micro_batch_size_per_gpu x gradient_accumulation_steps"),
        (Some(m), None) => (m, "train_micro_batch_size_per_gpu"),
        (None, Some(g)) => (g, "gradient_accumulation_steps"),
        (None, None) => return,
    };
    if step <= 0 || train % step == 0 {
        return;
    }
    let Some(span) = train_setting.value_span() else { return };
    let diagnostic = out.report(span, format!("train_batch_size {train} is not a multiple of {what} = {step}, so no world size satisfies DeepSpeed's \"train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size\" assertion"));
    for (key, value) in &keys[1..] {
        if let Some(span) = value.and_then(|(_, s)| s.key_span()) {
            diagnostic.with_related(span, format!("{key} set here"));
        }
    }
}
