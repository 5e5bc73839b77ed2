//! ## What it does
//! Reports a TRL SFT config with `padding_free: true`, packing off, and a `max_length`
//! that is not null (it defaults to 1024).
//!
//! ## Why
//! Without packing, the padding-free collator concatenates whole samples and does not
//! truncate them, so `SFTTrainer.__init__` raises `ValueError: When padding_free=True
//! without packing, max_length is not enforced. Either enable packing (…), provide
//! already truncated inputs, or set max_length=None.` Because of the default,
//! `padding_free: true` on its own fails.
//!
//! ## Example
//! ```yaml
//! padding_free: true      # error: max_length defaults to 1024
//! attn_implementation: flash_attention_2
//! ```
//!
//! ## Fix
//! Enable `packing: true` (BFD packing is padding-free itself), or set
//! `max_length: null` when the data is already truncated. The fix flips a written
//! `packing: false` to true.
//!
//! Fix safety: **unsafe**: packing changes how samples are batched.
//!
//! ## Source
//! TRL `trl/trainer/sft_trainer.py` (`SFTTrainer.__init__`): "When `padding_free=True`
//! without packing, `max_length` is not enforced. …"; default `max_length=1024` in
//! `trl/trainer/sft_config.py`.

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlSft {
        return;
    }
    let Some(plan) = ctx.plan else { return };
    let (Some(padding_free), Some(packing), Some(sft)) =
        (plan.padding_free.as_ref(), plan.packing.as_ref(), plan.trainer.as_ref().and_then(|t| t.sft.as_ref()))
    else {
        return;
    };
    let (true, Some(span)) = (padding_free.value, padding_free.entry_span()) else { return };
    let Some(length) = sft.max_length.value.filter(|_| !packing.value) else { return };
    let length = if sft.max_length.is_from_file() { length.to_string() } else { format!("{length} (the default)") };
    let diagnostic = out.report(
        span,
        format!("`padding_free: true` without packing while max_length is {length}: TRL raises \"When `padding_free=True` without packing, `max_length` is not enforced. Either enable packing …, provide already truncated inputs, or set `max_length=None`.\""),
    );
    if let Some(key) = packing.key_span() {
        diagnostic.with_related(key, "packing is off").with_fix(support::set(
            ctx,
            packing,
            Literal::Bool(true),
            "Enable packing",
            Applicability::Unsafe,
        ));
    }
}
