//! ## What it does
//! Reports `load_in_4bit` and `load_in_8bit` both true in a TRL or Axolotl config,
//! and an Axolotl `adapter: qlora` with `load_in_8bit: true`.
//!
//! ## Why
//! Weights are quantized one way. TRL's `ModelConfig.__post_init__` raises `ValueError:
//! You can't use 8 bit and 4 bit precision at the same time`; Axolotl's validators raise
//! "Can't load qlora in 8bit" (and transformers' `BitsAndBytesConfig` refuses both
//! flags: "load_in_4bit and load_in_8bit are both True, but only one can be used at the
//! same time"). Unsloth's loaders have their own version of the conflict, over 4-bit,
//! 8-bit, 16-bit and fp8: `unsloth-precision-conflict` (OOM219).
//!
//! ## Example
//! ```yaml
//! use_peft: true
//! load_in_4bit: true
//! load_in_8bit: true    # error
//! ```
//!
//! ## Fix
//! Keep one of the two flags. No automatic fix: 4-bit and 8-bit give different
//! memory and quality.
//!
//! ## Source
//! TRL `trl/trainer/model_config.py` (`ModelConfig.__post_init__`): "You can't use 8 bit
//! and 4 bit precision at the same time"; Axolotl
//! `src/axolotl/utils/schemas/validation.py` (QLoRA checks): "Can't load qlora in 8bit";
//! transformers `src/transformers/utils/quantization_config.py` (`BitsAndBytesConfig`).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let (four, eight, message) = if let Some(axolotl) = support::axolotl(ctx) {
        let qlora = axolotl.adapter.as_ref().is_some_and(|a| a.value == "qlora");
        let four = &axolotl.load_in_4bit;
        (four, &axolotl.load_in_8bit, (four.value || qlora).then_some("`load_in_8bit` with a 4-bit QLoRA setup: Axolotl raises \"Can't load qlora in 8bit\" (and bitsandbytes cannot load both ways)"))
    } else if let Some(trainer) = support::trainer(ctx).filter(|_| support::is_trl(ctx.format)) {
        let four = &trainer.load_in_4bit;
        (four, &trainer.load_in_8bit, four.value.then_some("`load_in_4bit` and `load_in_8bit` are both true: TRL raises \"You can't use 8 bit and 4 bit precision at the same time\""))
    } else {
        return;
    };
    let (true, Some(message), Some(span), Some(four_key)) = (eight.value, message, eight.entry_span(), four.key_span())
    else {
        return;
    };
    out.report(span, message).with_related(four_key, "4-bit loading set here");
}
