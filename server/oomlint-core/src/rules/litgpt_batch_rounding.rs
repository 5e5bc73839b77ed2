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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(batch) = support::litgpt_batch(ctx) else { return };
    let Some(world) = batch.world else { return };
    let (global, micro) = (batch.global.value, batch.micro.value);
    let step = micro.saturating_mul(world);
    let accumulation = (global / world.max(1)).checked_div(micro).unwrap_or(0);
    if step == 0 || accumulation == 0 || global.is_multiple_of(step) {
        return;
    }
    let effective = accumulation * step;
    let Some(span) = batch.global.value_span() else { return };
    out.report(
        span,
        format!("global_batch_size {global} is not a multiple of micro_batch_size x devices x num_nodes = {step}: LitGPT floors it and trains with {effective} samples per optimizer step"),
    )
    .with_fix(support::set(ctx,batch.global, Literal::from(effective), format!("Write the effective batch {effective}"), Applicability::Safe));
}
