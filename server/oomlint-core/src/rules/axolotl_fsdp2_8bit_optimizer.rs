//! ## What it does
//! Reports an Axolotl FSDP2 config (`fsdp_version: 2`) whose `optimizer` is a
//! bitsandbytes 8-bit AdamW (`adamw_8bit`, `adamw_bnb_8bit`).
//!
//! ## Why
//! bitsandbytes' 8-bit state kernels fail on FSDP2's DTensor parameters; Axolotl refuses
//! the combination up front: `ValueError: FSDP2 not compatible with adamw_8bit, use
//! adamw_torch_8bit instead`.
//!
//! ## Example
//! ```yaml
//! fsdp_version: 2
//! fsdp_config:
//!   reshard_after_forward: true
//! optimizer: adamw_bnb_8bit    # error
//! ```
//!
//! ## Fix
//! Use `optimizer: adamw_torch_8bit` (torchao's 8-bit AdamW), as the message says.
//!
//! Fix safety: **safe**: the same algorithm and state size from another library.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/validation.py` (`check_fsdp2_w_8bit_optimizer`):
//! "FSDP2 not compatible with {optimizer}, use `adamw_torch_8bit` instead".

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
    let version =
        ["fsdp_version", "fsdp_config.fsdp_version", "fsdp_config.version"].iter().find_map(|p| support::text(&r, p));
    if version != Some("2") || !r.has("fsdp_config") {
        return;
    }
    let Some(optimizer) = r
        .entry("optimizer")
        .filter(|_| matches!(support::text(&r, "optimizer"), Some("adamw_8bit" | "adamw_bnb_8bit")))
    else {
        return;
    };
    let name = support::text(&r, "optimizer").unwrap_or_default();
    out.report(optimizer.value.span, format!("optimizer `{name}` with FSDP2: Axolotl raises \"FSDP2 not compatible with {name}, use `adamw_torch_8bit` instead\""))
        .with_fix(set_value(ctx, optimizer, Literal::Str("adamw_torch_8bit".into()), "Use `adamw_torch_8bit`", Applicability::Safe));
}
