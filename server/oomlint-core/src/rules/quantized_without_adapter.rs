//! ## What it does
//! Reports 4-bit or 8-bit loading without a trainable adapter: TRL `load_in_4bit` /
//! `load_in_8bit` without `use_peft: true`, and Axolotl `load_in_4bit` / `load_in_8bit`
//! without an `adapter`.
//!
//! ## Why
//! bitsandbytes weights cannot be trained directly. The transformers `Trainer` raises
//! `ValueError: You cannot perform fine-tuning on purely quantized models. Please attach
//! trainable adapters on top of the quantized model to correctly perform fine-tuning.`
//! after the model is loaded; Axolotl refuses at validation: "load_in_8bit and
//! load_in_4bit are not supported without setting an adapter for training. If you want
//! to full finetune, please turn off load_in_8bit and load_in_4bit."
//!
//! ## Example
//! ```yaml
//! model_name_or_path: Qwen/Qwen2.5-7B
//! load_in_4bit: true     # error: use_peft is false
//! ```
//!
//! ## Fix
//! Add the adapter (`use_peft: true`; Axolotl `adapter: qlora`), or drop the
//! quantization for a full fine-tune. The fix turns a written `use_peft: false` on.
//!
//! Fix safety: **unsafe**: it turns a full fine-tune into LoRA.
//!
//! ## Source
//! transformers `src/transformers/trainer.py` (`Trainer.__init__`): "You cannot perform
//! fine-tuning on purely quantized models. …"; Axolotl
//! `src/axolotl/utils/schemas/peft.py` (`check_adapter`): "load_in_8bit and load_in_4bit
//! are not supported without setting an adapter for training. …"

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let axolotl = ctx.format == Format::Axolotl;
    if !support::is_trl(ctx.format) && !axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(quantized) = ["load_in_4bit", "load_in_8bit"].into_iter().find(|k| support::flag(&r, k)) else { return };
    let Some(entry) = r.entry(quantized) else { return };
    if axolotl {
        if !support::is_set(&r, "adapter") {
            out.report(entry.key_span.cover(entry.value.span), format!("`{quantized}: true` without an `adapter`: Axolotl raises \"load_in_8bit and load_in_4bit are not supported without setting an adapter for training. …\""));
        }
        return;
    }
    if support::flag(&r, "use_peft") {
        return;
    }
    let diagnostic = out.report(
        entry.key_span.cover(entry.value.span),
        format!("`{quantized}: true` without `use_peft: true`: the Trainer raises \"You cannot perform fine-tuning on purely quantized models. Please attach trainable adapters …\""),
    );
    if let Some(peft) = r.entry("use_peft") {
        diagnostic.with_related(peft.key_span, "adapter disabled here").with_fix(set_value(
            ctx,
            peft,
            Literal::Bool(true),
            "Train a LoRA adapter (`use_peft: true`)",
            Applicability::Unsafe,
        ));
    }
}
