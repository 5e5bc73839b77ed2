//! ## What it does
//! Reports a LitGPT `quantize: bnb.*` run whose `optimizer` is not an AdamW class: a
//! string without `AdamW` in it, or a `class_path` without it.
//!
//! ## Why
//! With bitsandbytes quantization LitGPT builds the optimizer through
//! `instantiate_bnb_optimizer`, which raises `ValueError: The chosen quantization format
//! only supports the AdamW optimizer.` for anything else. When the name does contain
//! `AdamW`, the optimizer is silently replaced by `bitsandbytes.optim.PagedAdamW`, keeping
//! only the `init_args` PagedAdamW accepts (the estimator accounts for that).
//!
//! ## Example
//! ```yaml
//! quantize: bnb.nf4
//! precision: bf16-true
//! optimizer: SGD          # error
//! ```
//!
//! ## Fix
//! Use `optimizer: AdamW` (or `class_path: torch.optim.AdamW`).
//!
//! Fix safety: **unsafe**: a different optimizer changes training, and `init_args`
//! meant for the old class (e.g. `momentum`) are dropped.
//!
//! ## Source
//! LitGPT `litgpt/utils.py` (`instantiate_bnb_optimizer`): "The chosen quantization
//! format only supports the AdamW optimizer."; called from `litgpt/finetune/lora.py`,
//! `adapter.py`, `adapter_v2.py` (`main`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(litgpt) = support::litgpt(ctx) else { return };
    let Some(quantize) = litgpt.quantize.as_ref().filter(|q| q.value.starts_with("bnb.")).and_then(|q| q.value_span())
    else {
        return;
    };
    let Some(optimizer) = litgpt.optimizer.as_ref() else { return };
    let name = optimizer.value.as_str();
    if name.contains("AdamW") {
        return;
    }
    let replacement = if litgpt.optimizer_is_class { "torch.optim.AdamW" } else { "AdamW" };
    let span = if name.is_empty() { optimizer.key_span() } else { optimizer.value_span() };
    let Some(span) = span else { return };
    let diagnostic = out.report(
        span,
        format!("optimizer `{name}` cannot be used with `quantize`: LitGPT raises \"The chosen quantization format only supports the AdamW optimizer.\""),
    );
    diagnostic.with_related(quantize, "quantization set here");
    if !name.is_empty() {
        diagnostic.with_fix(support::set(
            ctx,
            optimizer,
            Literal::Str(replacement.into()),
            format!("Use `{replacement}`"),
            Applicability::Unsafe,
        ));
    }
}
