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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(quantize) = r.entry("quantize") else { return };
    let Some(mode) = support::text(&r, "quantize").filter(|q| q.starts_with("bnb.")) else { return };
    let precision = r.entry("precision");
    match (precision, support::text(&r, "precision")) {
        (Some(entry), Some(p)) if p.contains("mixed") => {
            let replacement = p.replace("mixed", "true");
            out.report(
                entry.value.span,
                format!("`precision: {p}` cannot be combined with `quantize: {mode}`: LitGPT raises \"Quantization and mixed precision is not supported.\""),
            )
            .with_related(quantize.value.span, "quantization set here")
            .with_fix(set_value(ctx, entry, Literal::Str(replacement.clone()), format!("Use `precision: {replacement}`"), Applicability::Safe));
        }
        (_, Some(_)) => {}
        (Some(entry), None) => {
            out.report(entry.key_span, default_message(mode))
                .with_related(quantize.value.span, "quantization set here")
                .with_fix(set_value(
                    ctx,
                    entry,
                    Literal::Str("bf16-true".into()),
                    "Set `precision: bf16-true`",
                    Applicability::Unsafe,
                ));
        }
        (None, None) => {
            let diagnostic = out.report(quantize.key_span, default_message(mode));
            if let Some(at) = support::top_level_line_start(ctx, quantize.key_span) {
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
