//! ## What it does
//! Reports Axolotl attention settings its validators refuse: `attn_implementation`
//! together with a legacy boolean flag (`flash_attention`, `sdp_attention`,
//! `xformers_attention`, `sage_attention`, `flex_attention`, `eager_attention`), and
//! the short aliases `flash`, `flex`, `sdp` as `attn_implementation`.
//!
//! ## Why
//! Axolotl 0.16 replaced the flags by `attn_implementation`. Mixing them raises
//! `ValueError: attn_implementation='sdpa' cannot be combined with legacy attention flags
//! (flash_attention). …`; an alias raises "attn_implementation='flash' is not accepted.
//! Use the canonical name …".
//!
//! ## Example
//! ```yaml
//! attn_implementation: flash_attention_2
//! flash_attention: true     # error
//! ```
//!
//! ## Fix
//! Keep only `attn_implementation` with a canonical name. For an alias the fix writes
//! the canonical name (`flash` → `flash_attention_2`, `flex` → `flex_attention`,
//! `sdp` → `sdpa`).
//!
//! Fix safety: **safe**: the canonical name is what the alias stands for.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/config.py` (`normalize_attn_implementation`,
//! `validate_attn_implementation`); `src/axolotl/utils/schemas/enums.py`
//! (`LEGACY_ATTN_FLAG_TO_IMPL`, `SHORT_FORM_ALIAS_TO_CANONICAL`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    let Some(attention) = axolotl.attn_implementation.as_ref() else { return };
    let (Some(key), Some(value_span)) = (attention.key_span(), attention.value_span()) else { return };
    let value = attention.value.as_str();
    let canonical = match value {
        "flash" => Some("flash_attention_2"),
        "flex" => Some("flex_attention"),
        "sdp" => Some("sdpa"),
        _ => None,
    };
    if let Some(canonical) = canonical {
        out.report(value_span, format!("attn_implementation `{value}`: Axolotl raises \"attn_implementation='{value}' is not accepted. Use the canonical name\" ({canonical})"))
            .with_fix(support::set(ctx,attention, Literal::Str(canonical.into()), format!("Use `{canonical}`"), Applicability::Safe));
    }
    let flags = &axolotl.legacy_attention;
    if let Some(first) = flags.first().and_then(|f| f.key_span()) {
        let mut sorted: Vec<&str> = flags.iter().map(|f| f.value).collect();
        sorted.sort_unstable();
        out.report(first, format!("`attn_implementation` with legacy attention flags ({}): Axolotl raises \"attn_implementation='{value}' cannot be combined with legacy attention flags …\"", sorted.join(", ")))
            .with_related(key, "attn_implementation set here");
    }
}
