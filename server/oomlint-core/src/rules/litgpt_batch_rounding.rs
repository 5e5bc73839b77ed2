//! ## What it does
//! Warns when a LitGPT `global_batch_size` is not a multiple of
//! `micro_batch_size * devices * num_nodes`.
//!
//! ## Why
//! LitGPT floors both divisions (`global // world // micro`), so the batch per
//! optimizer step is silently smaller than the file says: `global_batch_size: 10` with
//! `micro_batch_size: 4` trains with 8 samples per step. Learning-rate and step
//! counts tuned for the written batch are then off.
//!
//! ## Example
//! ```yaml
//! train:
//!   global_batch_size: 10   # warning: effective 8
//!   micro_batch_size: 4
//! ```
//!
//! ## Fix
//! Make `global_batch_size` a multiple of `micro_batch_size * devices * num_nodes`.
//! The fix writes the effective value, which keeps what the run already does.
//!
//! Fix safety: **safe**: the run trains exactly as before; the file now says so.
//!
//! ## Source
//! LitGPT `litgpt/args.py` (`TrainArgs.batch_size`: `global_batch_size // (devices * num_nodes)`;
//! `gradient_accumulation_iters`: `batch_size // micro_batch_size`).

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let batch = support::litgpt_batch(ctx.format, &r);
    let Some(world) = batch.world else { return };
    let step = batch.micro.saturating_mul(world);
    let accumulation = (batch.global / world.max(1)).checked_div(batch.micro).unwrap_or(0);
    if step == 0 || accumulation == 0 || batch.global.is_multiple_of(step) {
        return;
    }
    let effective = accumulation * step;
    let Some(entry) = r.entry("train.global_batch_size") else { return };
    out.report(
        entry.value.span,
        format!(
            "global_batch_size {} is not a multiple of micro_batch_size x devices x num_nodes = {step}: LitGPT floors it and trains with {effective} samples per optimizer step",
            batch.global
        ),
    )
    .with_fix(set_value(ctx, entry, Literal::from(effective), format!("Write the effective batch {effective}"), Applicability::Safe));
}
