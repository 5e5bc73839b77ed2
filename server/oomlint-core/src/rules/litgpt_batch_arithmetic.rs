//! ## What it does
//! Reports LitGPT batch settings whose per-rank batch or gradient-accumulation count
//! comes out as zero: `global_batch_size // (devices * num_nodes)` is 0, or that
//! divided by `micro_batch_size` is 0. Without a numeric `devices` in the file (unset:
//! the launch's `--devices`, else 1; `auto`: every visible GPU) it reports only what
//! fails on every device count: a `global_batch_size` of 0 or below `micro_batch_size`.
//!
//! ## Why
//! `TrainArgs.batch_size` and `TrainArgs.gradient_accumulation_iters` both
//! `assert … > 0`, so the run dies with a bare `AssertionError` (no message) after the
//! model and data are loaded.
//!
//! ## Example
//! ```yaml
//! devices: 4
//! train:
//!   global_batch_size: 8
//!   micro_batch_size: 4    # error: 8 // 4 devices = 2 per rank, 2 // 4 = 0
//! ```
//!
//! ## Fix
//! Raise `global_batch_size` to at least `micro_batch_size * devices * num_nodes`, or
//! lower `micro_batch_size`. No automatic fix: which of the two to change is a
//! training decision.
//!
//! ## Source
//! LitGPT `litgpt/args.py` (`TrainArgs.batch_size`, `TrainArgs.gradient_accumulation_iters`:
//! `assert batch_size > 0`, `assert gradient_accumulation_iters > 0`).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(batch) = support::litgpt_batch(ctx) else { return };
    let (global, micro) = (batch.global.value, batch.micro.value);
    // Without `devices` in the file the launch sets the world size; one device has the
    // most samples per rank, so what fails on one fails on every device count.
    let world = batch.world.unwrap_or(1);
    let per_rank = global / world.max(1);
    let accumulation = per_rank.checked_div(micro);
    if per_rank > 0 && accumulation.is_some_and(|a| a > 0) {
        return;
    }
    let message = match (batch.world, per_rank) {
        (Some(world), 0) => format!("global_batch_size {global} // {world} ranks = 0 samples per rank: LitGPT fails `assert batch_size > 0` (litgpt/args.py)"),
        (None, 0) => format!("global_batch_size {global} leaves 0 samples per rank on any number of devices: LitGPT fails `assert batch_size > 0` (litgpt/args.py)"),
        (Some(world), _) => format!(
            "{per_rank} samples per rank // micro_batch_size {micro} = 0 accumulation steps: LitGPT fails `assert gradient_accumulation_iters > 0` (litgpt/args.py); global_batch_size must be at least micro_batch_size x devices x num_nodes = {}",
            micro.saturating_mul(world)
        ),
        (None, _) => format!(
            "global_batch_size {global} is smaller than micro_batch_size {micro}, so {global} // devices // {micro} = 0 accumulation steps on any number of devices: LitGPT fails `assert gradient_accumulation_iters > 0` (litgpt/args.py)"
        ),
    };
    let span = support::first_key(&[batch.global.key_span(), batch.micro.key_span(), batch.train_key]);
    let diagnostic = out.report(span, message);
    for (key, note) in [
        (batch.micro.key_span(), "micro batch set here"),
        (batch.devices_key, "devices set here"),
        (batch.nodes_key, "nodes set here"),
    ] {
        if let Some(key) = key.filter(|k| *k != span) {
            diagnostic.with_related(key, note);
        }
    }
}
