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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    if axolotl.fsdp_version.as_ref().is_none_or(|v| v.value != 2) {
        return;
    }
    let optimizer = &axolotl.optimizer;
    let name = optimizer.value.as_str();
    let (true, Some(span)) = (matches!(name, "adamw_8bit" | "adamw_bnb_8bit"), optimizer.value_span()) else { return };
    out.report(span, format!("optimizer `{name}` with FSDP2: Axolotl raises \"FSDP2 not compatible with {name}, use `adamw_torch_8bit` instead\""))
        .with_fix(support::set(ctx,optimizer, Literal::Str("adamw_torch_8bit".into()), "Use `adamw_torch_8bit`", Applicability::Safe));
}
