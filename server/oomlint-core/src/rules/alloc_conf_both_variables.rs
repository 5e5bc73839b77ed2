//! ## What it does
//! Warns when one file sets both `PYTORCH_ALLOC_CONF` and `PYTORCH_CUDA_ALLOC_CONF`.
//!
//! ## Why
//! PyTorch reads only the first variable present, in the order `PYTORCH_ALLOC_CONF`,
//! `PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_HIP_ALLOC_CONF`; the others are ignored without
//! a word. On torch 2.9 and newer the `PYTORCH_CUDA_ALLOC_CONF` settings therefore do
//! nothing (on older torch, which does not know the new name, it is the other way round).
//! Setting both to the same options (or the legacy one to a subset of the new one's) is how
//! a file serves torch before and after the rename: nothing is lost, and nothing is reported.
//!
//! ## Example
//! ```sh
//! export PYTORCH_ALLOC_CONF=expandable_segments:True
//! export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512   # warning: ignored
//! ```
//!
//! ## Fix
//! Merge the settings into `PYTORCH_ALLOC_CONF`. No automatic fix.
//!
//! ## Source
//! PyTorch `c10/core/AllocatorConfig.cpp` (`AcceleratorAllocatorConfig` reads the first of
//! `PYTORCH_ALLOC_CONF`, `PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_HIP_ALLOC_CONF`).

use super::{Context, Reporter};
use crate::plan::AllocatorSetting;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    let Some(new) = plan.allocator.iter().find(|s| s.variable == "PYTORCH_ALLOC_CONF") else { return };
    let read = options(&new.value);
    let lost = |legacy: &&AllocatorSetting| !options(&legacy.value).iter().all(|o| read.contains(o));
    for legacy in plan.allocator.iter().filter(|s| s.variable != "PYTORCH_ALLOC_CONF").filter(lost) {
        out.report(legacy.key_span, format!("{} is ignored: PyTorch reads only the first allocator variable present and PYTORCH_ALLOC_CONF is set too; merge `{}` into it", legacy.variable, legacy.value))
            .with_related(new.key_span, "PYTORCH_ALLOC_CONF set here");
    }
}

/// The `key:value` options of an allocator variable, spaces removed (`a:1, b:2` → `a:1`, `b:2`).
fn options(value: &str) -> Vec<String> {
    value.split(',').map(|o| o.split_whitespace().collect::<String>()).filter(|o| !o.is_empty()).collect()
}
