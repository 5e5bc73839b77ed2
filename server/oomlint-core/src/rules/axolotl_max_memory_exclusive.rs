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

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    let (max, limit) = (&axolotl.max_memory, &axolotl.gpu_memory_limit);
    let (true, true, Some(max_key), Some(limit_key)) = (max.value, limit.value, max.key_span(), limit.key_span())
    else {
        return;
    };
    out.report(max_key, "`max_memory` and `gpu_memory_limit` are both set: Axolotl raises \"max_memory and gpu_memory_limit are mutually exclusive and cannot be used together.\"")
        .with_related(limit_key, "gpu_memory_limit set here");
}
