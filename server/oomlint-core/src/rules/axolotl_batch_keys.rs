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
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(batch) = r.entry("batch_size").filter(|_| support::flag(&r, "batch_size")) else { return };
    if support::flag(&r, "gradient_accumulation_steps") {
        let diagnostic = out.report(batch.key_span, "`batch_size` with `gradient_accumulation_steps`: Axolotl raises \"please set only one of gradient_accumulation_steps or batch_size\"");
        if let Some(key) = support::key_of(&r, "gradient_accumulation_steps") {
            diagnostic.with_related(key, "gradient accumulation set here");
        }
    } else if !support::flag(&r, "micro_batch_size") {
        out.report(batch.key_span, "`batch_size` without `micro_batch_size` or `gradient_accumulation_steps`: Axolotl raises \"At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set\"");
    }
}
