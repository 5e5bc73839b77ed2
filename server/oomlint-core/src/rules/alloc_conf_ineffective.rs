//! ## What it does
//! Warns about allocator settings PyTorch accepts but that do nothing as written: a
//! key set twice (the last value wins), native-allocator options next to
//! `backend:cudaMallocAsync`, `garbage_collection_threshold` without a per-process memory
//! fraction, `pinned_num_register_threads` without host registration, and keys only
//! development builds know.
//!
//! ## Why
//! The run starts, but the setting the author relied on (often to avoid
//! fragmentation) is not in effect, and the OOM it was meant to prevent can still
//! happen. PyTorch itself only warns, e.g. "backend:cudaMallocAsync ignores
//! max_split_size_mb,roundup_power2_divisions, and garbage_collect_threshold."
//!
//! ## Example
//! ```sh
//! PYTORCH_ALLOC_CONF=backend:cudaMallocAsync,expandable_segments:True   # warning
//! ```
//!
//! ## Fix
//! Remove the setting or add what it depends on. No automatic fix.
//!
//! ## Source
//! PyTorch `c10/cuda/CUDAAllocatorConfig.cpp` (backend warning),
//! `c10/cuda/CUDACachingAllocator.cpp` (the garbage-collection threshold only applies with
//! `allowed_memory_maximum`); parsed by oomlint's `alloc_conf` module.

use super::{Context, Reporter};
use crate::alloc_conf;
use crate::diagnostic::Severity;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    for setting in &plan.allocator {
        let conf = alloc_conf::parse(&setting.value);
        for problem in conf.problems.iter().filter(|p| p.severity != Severity::Error) {
            let span = super::support::allocator_span(setting, problem.span);
            let diagnostic = out.report(span, format!("{}: {}", setting.variable, problem.message));
            diagnostic.severity = diagnostic.severity.min(problem.severity);
        }
    }
}
