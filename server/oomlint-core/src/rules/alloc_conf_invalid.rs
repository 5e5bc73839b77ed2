//! ## What it does
//! Reports what PyTorch's allocator-config parser rejects in `PYTORCH_ALLOC_CONF` /
//! `PYTORCH_CUDA_ALLOC_CONF` values (env files, shell scripts, YAML `env:` blocks):
//! unknown keys, `=` instead of `:`, booleans other than exactly `True`/`False`,
//! `max_split_size_mb` or `max_non_split_rounding_mb` below 20,
//! `garbage_collection_threshold` outside (0, 1), `roundup_power2_divisions` that are
//! not powers of two, `pinned_num_register_threads` not a power of two up to 128,
//! `per_process_memory_fraction` outside [0, 1], an unknown `backend`, and malformed
//! lists. Each problem is reported at its exact place inside the value.
//!
//! ## Why
//! PyTorch parses the variable when CUDA initializes, i.e. after the job has been
//! scheduled and the model code is running, and raises, e.g. `RuntimeError: Unrecognized
//! key 'expandable_segments=True' in CUDA allocator config.` or "Expected 'True' or
//! 'False' at index 2 in ConfigTokenizer but got 'true'". `=` is not a separator, so
//! `expandable_segments=True` is one unknown key.
//!
//! ## Example
//! ```sh
//! export PYTORCH_CUDA_ALLOC_CONF=expandable_segments=true   # error
//! ```
//!
//! ## Fix
//! Use `key:value` pairs separated by commas, with `True`/`False`. The fixes replace
//! only the offending bytes: `=` → `:` and `true` → `True` (**safe**: the spelling
//! PyTorch requires for the same setting), a stray comma is deleted (**safe**), and an
//! unknown key is replaced by the closest known one (**unsafe**: a guess).
//!
//! ## Source
//! PyTorch `c10/core/AllocatorConfig.h` (`ConfigTokenizer`), `c10/core/AllocatorConfig.cpp`
//! and `c10/cuda/CUDAAllocatorConfig.cpp` ("Unrecognized key '{key}' in CUDA allocator
//! config.", "CachingAllocator option max_split_size_mb too small, must be >= 20",
//! "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"); parsed by
//! oomlint's `alloc_conf` module.

use super::{Context, Reporter};
use crate::alloc_conf::{self, ProblemKind};
use crate::diagnostic::{Applicability, Edit, Fix, Severity};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    for setting in &plan.allocator {
        let conf = alloc_conf::parse(&setting.value);
        for problem in conf.problems.iter().filter(|p| p.severity == Severity::Error) {
            let span = super::support::allocator_span(setting, problem.span);
            let diagnostic = out.report(span, format!("{}: {}", setting.variable, problem.message));
            diagnostic.with_related(setting.key_span, "variable set here");
            let (Some(replacement), true) = (&problem.replacement, setting.verbatim) else { continue };
            let applicability = match problem.kind {
                ProblemKind::EqualsSeparator | ProblemKind::InvalidBool | ProblemKind::Syntax => Applicability::Safe,
                _ => Applicability::Unsafe,
            };
            let title = if replacement.is_empty() { "Delete it".to_string() } else { format!("Write `{replacement}`") };
            diagnostic.with_fix(Fix { title, applicability, edits: vec![Edit::replace(span, replacement.clone())] });
        }
    }
}
