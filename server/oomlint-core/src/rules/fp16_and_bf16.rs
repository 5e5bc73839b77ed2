//! ## What it does
//! Reports `fp16: true` together with `bf16: true` (and `fp16_full_eval` with
//! `bf16_full_eval`) in TRL, transformers, Axolotl and LLaMA-Factory configs.
//!
//! ## Why
//! `TrainingArguments.__post_init__` raises `ValueError: At most one of fp16 and bf16
//! can be True, but not both` (or "…for full eval, but not both") before anything
//! loads. Only one autocast dtype can be active.
//!
//! ## Example
//! ```yaml
//! bf16: true
//! fp16: true    # error
//! ```
//!
//! ## Fix
//! Keep one. The fix sets `fp16` to false, keeping bf16 (the choice for Ampere and
//! newer GPUs).
//!
//! Fix safety: **unsafe**: on a GPU without bf16 the author may have meant fp16.
//!
//! ## Source
//! transformers `src/transformers/training_args.py` (`_validate_args`): "At most one of
//! fp16 and bf16 can be True, but not both", "At most one of fp16 and bf16 can be True
//! for full eval, but not both".

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::has_training_arguments(ctx.format) && ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    for (fp16, bf16, what) in [("fp16", "bf16", ""), ("fp16_full_eval", "bf16_full_eval", " for full eval")] {
        let on = |path: &str| r.bool(path).is_some_and(|b| b.value);
        let (Some(fp16_entry), Some(bf16_entry)) = (r.entry(fp16), r.entry(bf16)) else { continue };
        if on(fp16) && on(bf16) {
            out.report(fp16_entry.key_span.cover(fp16_entry.value.span), format!("`{fp16}` and `{bf16}` are both true: transformers raises \"At most one of fp16 and bf16 can be True{what}, but not both\""))
                .with_related(bf16_entry.key_span, format!("{bf16} set here"))
                .with_fix(set_value(ctx, fp16_entry, Literal::Bool(false), format!("Set `{fp16}: false`"), Applicability::Unsafe));
        }
    }
}
