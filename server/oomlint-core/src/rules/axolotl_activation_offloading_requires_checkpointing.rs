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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    let offload = &axolotl.activation_offloading;
    let (true, Some(span)) = (offload.value, offload.entry_span()) else { return };
    let checkpointing = &axolotl.gradient_checkpointing;
    if checkpointing.value {
        return;
    }
    let diagnostic = out.report(span, "`activation_offloading` without `gradient_checkpointing`: Axolotl raises \"activation_offloading requires gradient_checkpointing\"");
    if let Some(key) = checkpointing.key_span() {
        diagnostic.with_related(key, "checkpointing off here").with_fix(support::set(
            ctx,
            checkpointing,
            Literal::Bool(true),
            "Set `gradient_checkpointing: true`",
            Applicability::Safe,
        ));
    }
}
