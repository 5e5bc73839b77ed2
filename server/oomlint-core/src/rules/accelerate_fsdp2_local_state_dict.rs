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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Accelerate {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    if support::text(&r, "fsdp_config.fsdp_version") != Some("2") {
        return;
    }
    let path = "fsdp_config.fsdp_state_dict_type";
    let Some(entry) =
        r.entry(path).filter(|_| support::text(&r, path).is_some_and(|t| t.eq_ignore_ascii_case("LOCAL_STATE_DICT")))
    else {
        return;
    };
    out.report(
        entry.value.span,
        "`LOCAL_STATE_DICT` with FSDP2: accelerate raises \"FSDP2 does not support LOCAL_STATE_DICT.\"",
    )
    .with_fix(set_value(
        ctx,
        entry,
        Literal::Str("SHARDED_STATE_DICT".into()),
        "Use `SHARDED_STATE_DICT`",
        Applicability::Safe,
    ));
}
