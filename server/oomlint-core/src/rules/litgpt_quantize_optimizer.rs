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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(quantize) =
        r.entry("quantize").filter(|_| support::text(&r, "quantize").is_some_and(|q| q.starts_with("bnb.")))
    else {
        return;
    };
    let (entry, name, replacement) = if let Some(entry) = r.entry("optimizer.class_path") {
        (entry, support::text(&r, "optimizer.class_path").unwrap_or_default(), "torch.optim.AdamW")
    } else if r.entry("optimizer").is_some_and(|e| e.value.as_mapping().is_some()) {
        let Some(entry) = r.entry("optimizer") else { return };
        (entry, "", "torch.optim.AdamW")
    } else {
        let Some(name) = support::text(&r, "optimizer") else { return };
        let Some(entry) = r.entry("optimizer") else { return };
        (entry, name, "AdamW")
    };
    if name.contains("AdamW") {
        return;
    }
    let diagnostic = out.report(
        if name.is_empty() { entry.key_span } else { entry.value.span },
        format!("optimizer `{name}` cannot be used with `quantize`: LitGPT raises \"The chosen quantization format only supports the AdamW optimizer.\""),
    );
    diagnostic.with_related(quantize.value.span, "quantization set here");
    if !name.is_empty() {
        diagnostic.with_fix(set_value(
            ctx,
            entry,
            Literal::Str(replacement.into()),
            format!("Use `{replacement}`"),
            Applicability::Unsafe,
        ));
    }
}
