//! ## What it does
//! Reports a LitGPT `quantize: bnb.*` run whose `precision` is not one of `16-true`,
//! `bf16-true` or `32-true` and does not say `mixed` (those are
//! `litgpt-quantize-mixed-precision`): aliases such as `bf16`, `16` or `32`, `64-true`,
//! or `transformer-engine`.
//!
//! ## Why
//! After the mixed-precision check, LitGPT looks the precision up in a three-entry
//! dict (`{"16-true": …, "bf16-true": …, "32-true": …}[precision]`), so anything else
//! raises a bare `KeyError: 'bf16'` in `setup()`.
//!
//! ## Example
//! ```yaml
//! quantize: bnb.nf4
//! precision: bf16    # error: KeyError 'bf16'
//! ```
//!
//! ## Fix
//! Write the full name: `bf16` → `bf16-true`, `16` → `16-true`, `32` and `64-true` →
//! `32-true`.
//!
//! Fix safety: **unsafe**: `bf16` and `16` are Fabric aliases of the *mixed*
//! settings, so the replacement changes numerics (which quantization requires anyway).
//!
//! ## Source
//! LitGPT `litgpt/finetune/lora.py`, `adapter.py`, `adapter_v2.py` (`setup`:
//! `dtype = {"16-true": torch.float16, "bf16-true": torch.bfloat16, "32-true": torch.float32}[precision]`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

const ACCEPTED: [&str; 3] = ["16-true", "bf16-true", "32-true"];

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(litgpt) = support::litgpt(ctx) else { return };
    let Some(quantize) = litgpt.quantize.as_ref().filter(|q| q.value.starts_with("bnb.")).and_then(|q| q.value_span())
    else {
        return;
    };
    let Some(setting) = litgpt.precision.as_ref() else { return };
    let (Some(precision), Some(span)) = (setting.value.as_deref(), setting.value_span()) else { return };
    if ACCEPTED.contains(&precision) || precision.contains("mixed") {
        return;
    }
    let replacement = match precision {
        "bf16" | "transformer-engine" => Some("bf16-true"),
        "16" | "transformer-engine-float16" => Some("16-true"),
        "32" | "64" | "64-true" => Some("32-true"),
        _ => None,
    };
    let diagnostic = out.report(
        span,
        format!("`precision: {precision}` with `quantize`: LitGPT only maps 16-true, bf16-true and 32-true to a dtype and raises KeyError: '{precision}'"),
    );
    diagnostic.with_related(quantize, "quantization set here");
    if let Some(replacement) = replacement {
        diagnostic.with_fix(support::set(
            ctx,
            setting,
            Literal::Str(replacement.into()),
            format!("Use `precision: {replacement}`"),
            Applicability::Unsafe,
        ));
    }
}
