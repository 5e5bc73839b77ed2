//! ## What it does
//! Reports an Axolotl config that sets both `max_memory` and `gpu_memory_limit`.
//!
//! ## Why
//! Both cap the memory `device_map` may place on each GPU; Axolotl raises `ValueError:
//! max_memory and gpu_memory_limit are mutually exclusive and cannot be used together.`
//!
//! ## Example
//! ```yaml
//! gpu_memory_limit: 20GiB
//! max_memory:
//!   0: 20GiB       # error
//! ```
//!
//! ## Fix
//! Keep one. No automatic fix.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/validation.py`: "max_memory and gpu_memory_limit are
//! mutually exclusive and cannot be used together."

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let (Some(max), Some(limit)) = (r.entry("max_memory"), r.entry("gpu_memory_limit")) else { return };
    if support::is_set(&r, "max_memory") && support::is_set(&r, "gpu_memory_limit") {
        out.report(max.key_span, "`max_memory` and `gpu_memory_limit` are both set: Axolotl raises \"max_memory and gpu_memory_limit are mutually exclusive and cannot be used together.\"")
            .with_related(limit.key_span, "gpu_memory_limit set here");
    }
}
