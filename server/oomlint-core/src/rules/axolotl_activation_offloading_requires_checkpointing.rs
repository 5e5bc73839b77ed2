//! ## What it does
//! Reports an Axolotl config with `activation_offloading` on and
//! `gradient_checkpointing` off or absent.
//!
//! ## Why
//! Axolotl offloads the activations kept at checkpoint boundaries, so it needs
//! checkpointing; its validator raises `ValueError: activation_offloading requires
//! gradient_checkpointing`. (`gradient_checkpointing: offload` turns both on.)
//!
//! ## Example
//! ```yaml
//! activation_offloading: true    # error
//! ```
//!
//! ## Fix
//! Add `gradient_checkpointing: true`. The fix turns a written
//! `gradient_checkpointing: false` on.
//!
//! Fix safety: **safe**: offloading only works with checkpointing, which is what the
//! file asks for.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/validation.py` (`check_activation_offloading_wo_gc`):
//! "activation_offloading requires gradient_checkpointing".

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(offload) = r.entry("activation_offloading").filter(|e| support::truthy(e)) else { return };
    if support::flag(&r, "gradient_checkpointing") {
        return;
    }
    let diagnostic = out.report(offload.key_span.cover(offload.value.span), "`activation_offloading` without `gradient_checkpointing`: Axolotl raises \"activation_offloading requires gradient_checkpointing\"");
    if let Some(gc) = r.entry("gradient_checkpointing") {
        diagnostic.with_related(gc.key_span, "checkpointing off here").with_fix(set_value(
            ctx,
            gc,
            Literal::Bool(true),
            "Set `gradient_checkpointing: true`",
            Applicability::Safe,
        ));
    }
}
