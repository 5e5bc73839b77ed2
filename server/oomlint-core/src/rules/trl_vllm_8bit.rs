//! ## What it does
//! Reports a TRL GRPO config that loads the model in 8 bit (`load_in_8bit: true`) and
//! generates with colocated vLLM.
//!
//! ## Why
//! vLLM can load bitsandbytes 4-bit weights but not LLM.int8: when TRL builds the
//! colocated engine it raises `ValueError: vLLM does not support in-flight 8-bit
//! quantization.` after the training model is loaded.
//!
//! ## Example
//! ```yaml
//! use_peft: true
//! load_in_8bit: true
//! use_vllm: true        # error (colocate is the default mode)
//! ```
//!
//! ## Fix
//! Use `load_in_4bit`, load 16-bit weights, or run vLLM as a server
//! (`vllm_mode: server`). No automatic fix.
//!
//! ## Source
//! TRL `trl/generation/vllm_generation.py` (colocate set-up): "vLLM does not support
//! in-flight 8-bit quantization."

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(trainer) = support::trainer(ctx) else { return };
    let Some(grpo) = trainer.grpo.as_ref() else { return };
    let colocate = grpo.vllm_mode.value == "colocate";
    if !grpo.use_vllm.value || !colocate || trainer.load_in_4bit.value {
        return;
    }
    let eight = &trainer.load_in_8bit;
    let (true, Some(span)) = (eight.value, eight.entry_span()) else { return };
    let diagnostic = out.report(span, "`load_in_8bit` with colocated vLLM generation: TRL raises \"vLLM does not support in-flight 8-bit quantization.\"");
    if let Some(key) = grpo.use_vllm.key_span() {
        diagnostic.with_related(key, "vLLM enabled here");
    }
}
