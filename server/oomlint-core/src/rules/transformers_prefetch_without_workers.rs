//! ## What it does
//! Reports `dataloader_prefetch_factor` set while `dataloader_num_workers` is 0 (the
//! default) in TRL, transformers and LLaMA-Factory configs.
//!
//! ## Why
//! Prefetching happens in worker processes; `TrainingArguments` raises `ValueError:
//! --dataloader_prefetch_factor can only be set when data is loaded in a different
//! process, i.e. when --dataloader_num_workers > 1.` at start-up.
//!
//! ## Example
//! ```yaml
//! dataloader_prefetch_factor: 4   # error: no workers
//! ```
//!
//! ## Fix
//! Set `dataloader_num_workers` (e.g. 4), or remove the prefetch factor. No automatic
//! fix: the worker count depends on the host's CPUs.
//!
//! ## Source
//! transformers `src/transformers/training_args.py` (`_validate_args`):
//! "--dataloader_prefetch_factor can only be set when data is loaded in a different
//! process, i.e. when --dataloader_num_workers > 1."

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::has_training_arguments(ctx.format) {
        return;
    }
    let Some(trainer) = support::trainer(ctx) else { return };
    let prefetch = &trainer.dataloader_prefetch_factor;
    let (Some(_), Some(key)) = (prefetch.value, prefetch.key_span()) else { return };
    let workers = &trainer.dataloader_num_workers;
    if workers.value > 0 {
        return;
    }
    let diagnostic = out.report(key, "`dataloader_prefetch_factor` without dataloader workers: transformers raises \"--dataloader_prefetch_factor can only be set when data is loaded in a different process, i.e. when --dataloader_num_workers > 1.\"");
    if let Some(key) = workers.key_span() {
        diagnostic.with_related(key, "no workers here");
    }
}
