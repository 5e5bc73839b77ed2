//! ## What it does
//! Warns when a LitGPT `global_batch_size` is not a multiple of
//! `micro_batch_size * devices * num_nodes`. Without a numeric `devices` in the file
//! (unset: the launch's `--devices`, else 1; `auto`: every visible GPU) it warns only
//! when the batch is not a multiple of `micro_batch_size`, which every device count floors.
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
//! Fix safety: **safe**: the run trains exactly as before; the file now says so. Without
//! the device count the fix writes the multiple of `micro_batch_size` below the batch, which
//! every device count floors to the same batch as before.
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
    let (global, micro) = (batch.global.value, batch.micro.value);
    // Without `devices` in the file the launch sets the world size: only a batch that is
    // not a multiple of the micro batch is floored on every device count.
    let world = batch.world.unwrap_or(1);
    let step = micro.saturating_mul(world);
    let accumulation = (global / world.max(1)).checked_div(micro).unwrap_or(0);
    if step == 0 || accumulation == 0 || global.is_multiple_of(step) {
        return;
    }
    let effective = accumulation * step;
    let Some(span) = batch.global.value_span() else { return };
    let message = if batch.world.is_some() {
        format!("global_batch_size {global} is not a multiple of micro_batch_size x devices x num_nodes = {micro} x {world} ranks = {step}: LitGPT floors it and trains with {effective} samples per optimizer step")
    } else {
        format!("global_batch_size {global} is not a multiple of micro_batch_size {micro}: LitGPT floors it on any number of devices (with 1 device it trains with {effective} samples per optimizer step; the launch sets the device count)")
    };
    // Writing the floored batch keeps every device count's batch: (g // m * m) // w // m == g // w // m.
    out.report(span, message).with_fix(support::set(
        ctx,
        batch.global,
        Literal::from(effective),
        format!("Write the effective batch {effective}"),
        Applicability::Safe,
    ));
}
