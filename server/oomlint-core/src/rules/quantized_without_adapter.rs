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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::plan::Sourced;
use crate::syntax::Literal;

/// The first of the 4-bit and 8-bit flags that is on, with its key.
fn first_on<'a>(four: &'a Sourced<bool>, eight: &'a Sourced<bool>) -> Option<(&'static str, &'a Sourced<bool>)> {
    [("load_in_4bit", four), ("load_in_8bit", eight)].into_iter().find(|(_, f)| f.value)
}

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if let Some(axolotl) = support::axolotl(ctx) {
        let Some((quantized, flag)) = first_on(&axolotl.load_in_4bit, &axolotl.load_in_8bit) else { return };
        let Some(span) = flag.entry_span() else { return };
        if axolotl.adapter.is_none() {
            out.report(span, format!("`{quantized}: true` without an `adapter`: Axolotl raises \"load_in_8bit and load_in_4bit are not supported without setting an adapter for training. …\""));
        }
        return;
    }
    let Some(trainer) = support::trainer(ctx).filter(|_| support::is_trl(ctx.format)) else { return };
    let Some((quantized, flag)) = first_on(&trainer.load_in_4bit, &trainer.load_in_8bit) else { return };
    let (false, Some(span)) = (trainer.use_peft.value, flag.entry_span()) else { return };
    let diagnostic = out.report(
        span,
        format!("`{quantized}: true` without `use_peft: true`: the Trainer raises \"You cannot perform fine-tuning on purely quantized models. Please attach trainable adapters …\""),
    );
    let peft = &trainer.use_peft;
    if let Some(key) = peft.key_span() {
        diagnostic.with_related(key, "adapter disabled here").with_fix(support::set(
            ctx,
            peft,
            Literal::Bool(true),
            "Train a LoRA adapter (`use_peft: true`)",
            Applicability::Unsafe,
        ));
    }
}
