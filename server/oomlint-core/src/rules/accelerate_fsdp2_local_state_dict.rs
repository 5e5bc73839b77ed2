//! ## What it does
//! Reports an accelerate FSDP2 config (`fsdp_version: 2`) with
//! `fsdp_state_dict_type: LOCAL_STATE_DICT`.
//!
//! ## Why
//! FSDP2 saves sharded or full state dicts only; the plugin raises `ValueError: FSDP2
//! does not support LOCAL_STATE_DICT. …` in every process.
//!
//! ## Example
//! ```yaml
//! fsdp_config:
//!   fsdp_version: 2
//!   fsdp_state_dict_type: LOCAL_STATE_DICT   # error
//! ```
//!
//! ## Fix
//! Use `SHARDED_STATE_DICT` (the closest: each rank writes its shard).
//!
//! Fix safety: **safe**: the checkpoint stays per-rank.
//!
//! ## Source
//! accelerate `src/accelerate/utils/dataclasses.py` (`FullyShardedDataParallelPlugin`):
//! "FSDP2 does not support LOCAL_STATE_DICT. …".

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(a) = support::accelerate(ctx) else { return };
    if a.fsdp_version.as_ref().is_none_or(|v| v.value != "2") {
        return;
    }
    let Some(kind) = a.fsdp_state_dict_type.as_ref().filter(|t| t.value.eq_ignore_ascii_case("LOCAL_STATE_DICT"))
    else {
        return;
    };
    let Some(span) = kind.value_span() else { return };
    out.report(span, "`LOCAL_STATE_DICT` with FSDP2: accelerate raises \"FSDP2 does not support LOCAL_STATE_DICT.\"")
        .with_fix(support::set(
            ctx,
            kind,
            Literal::Str("SHARDED_STATE_DICT".into()),
            "Use `SHARDED_STATE_DICT`",
            Applicability::Safe,
        ));
}
