//! ## What it does
//! Reports a LitGPT `quantize: bnb.*` run whose `precision` is a mixed-precision
//! setting (`bf16-mixed`, `16-mixed`), or is absent or null, which LitGPT resolves to
//! `bf16-mixed` (or `16-mixed` on GPUs without bf16).
//!
//! ## Why
//! `finetune_lora`, `finetune_adapter` and `finetune_adapter_v2` raise
//! `ValueError: Quantization and mixed precision is not supported.` in `setup()`,
//! after the checkpoint has been downloaded. QLoRA needs a "true" precision: the
//! quantized weights are dequantized to that dtype for compute.
//!
//! ## Example
//! ```yaml
//! checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B
//! quantize: bnb.nf4
//! precision: bf16-mixed   # error
//! ```
//!
//! ## Fix
//! Set `precision: bf16-true` (LitGPT's own QLoRA configs in `config_hub/finetune/*/qlora.yaml`
//! do), or `16-true` on GPUs without bf16.
//!
//! Fix safety: replacing `bf16-mixed` with `bf16-true` (and `16-mixed` with `16-true`)
//! keeps the compute dtype the file chose and is **safe**. When `precision` is null or
//! absent the fix writes `bf16-true`, which picks a dtype for the user (bf16 needs an
//! Ampere or newer GPU), so it is **unsafe**.
//!
//! ## Source
//! LitGPT `litgpt/finetune/lora.py`, `adapter.py`, `adapter_v2.py` (`setup`):
//! "Quantization and mixed precision is not supported."; the default precision comes
//! from `litgpt/utils.py` `get_default_supported_precision(training=True)`.

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(litgpt) = support::litgpt(ctx) else { return };
    let Some(quantize) = litgpt.quantize.as_ref().filter(|q| q.value.starts_with("bnb.")) else { return };
    let (Some(quantize_key), Some(quantize_value)) = (quantize.key_span(), quantize.value_span()) else { return };
    let mode = quantize.value.as_str();
    match litgpt.precision.as_ref() {
        Some(precision) => match (&precision.value, precision.key_span(), precision.value_span()) {
            (Some(p), _, Some(span)) if p.contains("mixed") => {
                let replacement = p.replace("mixed", "true");
                out.report(
                    span,
                    format!("`precision: {p}` cannot be combined with `quantize: {mode}`: LitGPT raises \"Quantization and mixed precision is not supported.\""),
                )
                .with_related(quantize_value, "quantization set here")
                .with_fix(support::set(ctx,precision, Literal::Str(replacement.clone()), format!("Use `precision: {replacement}`"), Applicability::Safe));
            }
            (None, Some(key), _) => {
                out.report(key, default_message(mode)).with_related(quantize_value, "quantization set here").with_fix(
                    support::set(
                        ctx,
                        precision,
                        Literal::Str("bf16-true".into()),
                        "Set `precision: bf16-true`",
                        Applicability::Unsafe,
                    ),
                );
            }
            _ => {}
        },
        None => {
            let diagnostic = out.report(quantize_key, default_message(mode));
            if let Some(at) = support::top_level_line_start(ctx, quantize_key) {
                diagnostic.with_fix(Fix {
                    title: "Add `precision: bf16-true`".into(),
                    applicability: Applicability::Unsafe,
                    edits: vec![Edit::insert(at, "precision: bf16-true\n")],
                });
            }
        }
    }
}

fn default_message(mode: &str) -> String {
    format!("`quantize: {mode}` without a true precision: LitGPT resolves the default precision to `bf16-mixed` (or `16-mixed`) and raises \"Quantization and mixed precision is not supported.\"")
}
