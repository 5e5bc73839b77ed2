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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::plan::Sourced;
use crate::span::Span;
use crate::syntax::Literal;

/// One fp16/bf16 pair: fp16, and where the file turns bf16 on (None: it does not).
struct Pair<'p> {
    fp16: &'p Sourced<bool>,
    bf16_on: Option<Span>,
}

/// The key of a flag the file sets to true.
fn on(flag: &Sourced<bool>) -> Option<Span> {
    flag.key_span().filter(|_| flag.value)
}

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let pairs = if let Some(a) = support::axolotl(ctx) {
        let bf16 = a.bf16.key_span().filter(|_| a.bf16.value == Some(true));
        [Pair { fp16: &a.fp16, bf16_on: bf16 }, Pair { fp16: &a.fp16_full_eval, bf16_on: on(&a.bf16_full_eval) }]
    } else if let Some(t) = support::trainer(ctx).filter(|_| support::has_training_arguments(ctx.format)) {
        [Pair { fp16: &t.fp16, bf16_on: on(&t.bf16) }, Pair { fp16: &t.fp16_full_eval, bf16_on: on(&t.bf16_full_eval) }]
    } else {
        return;
    };
    for (pair, (fp16_name, bf16_name, what)) in
        pairs.into_iter().zip([("fp16", "bf16", ""), ("fp16_full_eval", "bf16_full_eval", " for full eval")])
    {
        let (true, Some(span), Some(bf16_key)) = (pair.fp16.value, pair.fp16.entry_span(), pair.bf16_on) else {
            continue;
        };
        out.report(span, format!("`{fp16_name}` and `{bf16_name}` are both true: transformers raises \"At most one of fp16 and bf16 can be True{what}, but not both\""))
            .with_related(bf16_key, format!("{bf16_name} set here"))
            .with_fix(support::set(ctx,pair.fp16, Literal::Bool(false), format!("Set `{fp16_name}: false`"), Applicability::Unsafe));
    }
}
