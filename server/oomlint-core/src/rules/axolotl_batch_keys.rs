//! ## What it does
//! Reports Axolotl batch settings Axolotl refuses: `batch_size` together with
//! `gradient_accumulation_steps`, or `batch_size` with neither `micro_batch_size` nor
//! `gradient_accumulation_steps`.
//!
//! ## Why
//! Axolotl derives whichever of the three is missing (`gradient_accumulation_steps =
//! batch_size // micro_batch_size`), so exactly two may be given. Its validators raise
//! `ValueError: please set only one of gradient_accumulation_steps or batch_size` and
//! `ValueError: At least two of micro_batch_size, gradient_accumulation_steps, batch_size
//! must be set` while loading the config.
//!
//! ## Example
//! ```yaml
//! micro_batch_size: 2
//! gradient_accumulation_steps: 8
//! batch_size: 16      # error
//! ```
//!
//! ## Fix
//! Keep `micro_batch_size` with one of the other two. No automatic fix.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/validation.py` (`check_batch_size_fields`:
//! "At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set";
//! `check_gas_bsz`: "please set only one of gradient_accumulation_steps or batch_size").

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let (Some(plan), Some(axolotl)) = (ctx.plan, support::axolotl(ctx)) else { return };
    let batch = &axolotl.batch_size;
    let (Some(1..), Some(key)) = (batch.value, batch.key_span()) else { return };
    // Axolotl tests the keys as written: set and not zero.
    let written =
        |setting: Option<&crate::plan::Sourced<u64>>| setting.is_some_and(|s| s.is_from_file() && s.value != 0);
    let accumulation = plan.gradient_accumulation.as_ref();
    if written(accumulation) {
        let diagnostic = out.report(key, "`batch_size` with `gradient_accumulation_steps`: Axolotl raises \"please set only one of gradient_accumulation_steps or batch_size\"");
        if let Some(span) = accumulation.and_then(|a| a.key_span()) {
            diagnostic.with_related(span, "gradient accumulation set here");
        }
    } else if !written(plan.micro_batch_size.as_ref()) {
        out.report(key, "`batch_size` without `micro_batch_size` or `gradient_accumulation_steps`: Axolotl raises \"At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set\"");
    }
}
