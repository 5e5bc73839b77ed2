//! ## What it does
//! Reports an Axolotl `adapter: qlora` config without `load_in_4bit: true` (and
//! without `load_in_8bit` or `gptq`, which have their own messages).
//!
//! ## Why
//! QLoRA means LoRA over a 4-bit base; Axolotl's validator raises `ValueError: Require
//! cfg.load_in_4bit to be True for qlora` before anything loads.
//!
//! ## Example
//! ```yaml
//! adapter: qlora       # error: load_in_4bit is not set
//! lora_r: 16
//! ```
//!
//! ## Fix
//! Add `load_in_4bit: true` (or use `adapter: lora` for a 16-bit base). The fix turns
//! a written `load_in_4bit: false` on.
//!
//! Fix safety: **safe**: `adapter: qlora` already asks for a 4-bit base.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/peft.py` (`validate_qlora`): "Require
//! cfg.load_in_4bit to be True for qlora".

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    let Some(adapter) = axolotl.adapter.as_ref().filter(|a| a.value == "qlora") else { return };
    let Some(span) = adapter.value_span() else { return };
    if [&axolotl.load_in_4bit, &axolotl.load_in_8bit, &axolotl.gptq, &axolotl.merge_lora].iter().any(|f| f.value) {
        return;
    }
    out.report(span, "`adapter: qlora` without `load_in_4bit: true`: Axolotl raises \"Require cfg.load_in_4bit to be True for qlora\"")
        .with_fix(support::set(ctx,&axolotl.load_in_4bit, Literal::Bool(true), "Set `load_in_4bit: true`", Applicability::Safe));
}
