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
    let Some(adapter) = r.entry("adapter").filter(|_| support::text(&r, "adapter") == Some("qlora")) else { return };
    if support::flag(&r, "load_in_4bit")
        || support::flag(&r, "load_in_8bit")
        || support::flag(&r, "gptq")
        || support::flag(&r, "merge_lora")
    {
        return;
    }
    let diagnostic = out.report(adapter.value.span, "`adapter: qlora` without `load_in_4bit: true`: Axolotl raises \"Require cfg.load_in_4bit to be True for qlora\"");
    if let Some(entry) = r.entry("load_in_4bit") {
        diagnostic.with_fix(set_value(
            ctx,
            entry,
            Literal::Bool(true),
            "Set `load_in_4bit: true`",
            Applicability::Safe,
        ));
    }
}
