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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlSft {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(padding_free) = r.entry("padding_free").filter(|_| support::flag(&r, "padding_free")) else { return };
    if support::flag(&r, "packing") || r.is_null("max_length") {
        return;
    }
    let length = support::text(&r, "max_length").unwrap_or("1024 (the default)");
    let diagnostic = out.report(
        padding_free.key_span.cover(padding_free.value.span),
        format!("`padding_free: true` without packing while max_length is {length}: TRL raises \"When `padding_free=True` without packing, `max_length` is not enforced. Either enable packing …, provide already truncated inputs, or set `max_length=None`.\""),
    );
    if let Some(packing) = r.entry("packing") {
        diagnostic.with_related(packing.key_span, "packing is off").with_fix(set_value(
            ctx,
            packing,
            Literal::Bool(true),
            "Enable packing",
            Applicability::Unsafe,
        ));
    }
}
