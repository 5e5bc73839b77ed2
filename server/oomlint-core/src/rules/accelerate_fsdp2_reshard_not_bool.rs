//! ## What it does
//! Reports an accelerate FSDP2 config (`fsdp_version: 2`) whose
//! `fsdp_reshard_after_forward` is not a truth value: an FSDP1 strategy name such as
//! `FULL_SHARD` or `SHARD_GRAD_OP`.
//!
//! ## Why
//! `accelerate launch` exports the value as `FSDP_RESHARD_AFTER_FORWARD`, and the FSDP2
//! plugin parses it with `str_to_bool`, which raises `ValueError: invalid truth value
//! full_shard` in every process. (`accelerate config` writes strategy names here for FSDP1.)
//!
//! ## Example
//! ```yaml
//! distributed_type: FSDP
//! fsdp_config:
//!   fsdp_version: 2
//!   fsdp_reshard_after_forward: FULL_SHARD   # error
//! ```
//!
//! ## Fix
//! Use `true` (the FSDP2 equivalent of `FULL_SHARD`) or `false` (of `SHARD_GRAD_OP`).
//! The fix maps `FULL_SHARD`/`HYBRID_SHARD` to `true` and `SHARD_GRAD_OP`/`NO_SHARD`/
//! `HYBRID_SHARD_ZERO2` to `false`.
//!
//! Fix safety: **safe**: it is the same sharding behaviour, spelled for FSDP2.
//!
//! ## Source
//! accelerate `src/accelerate/utils/environment.py` (`str_to_bool`: "invalid truth value
//! {value}"); `src/accelerate/utils/dataclasses.py` (`FullyShardedDataParallelPlugin`);
//! `src/accelerate/utils/launch.py` (`FSDP_RESHARD_AFTER_FORWARD`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

const TRUTH: [&str; 12] = ["y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0"];

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(a) = support::accelerate(ctx) else { return };
    if a.fsdp_version.as_ref().is_none_or(|v| v.value != "2") {
        return;
    }
    let Some(reshard) = a.fsdp_reshard_after_forward.as_ref() else { return };
    let value = reshard.value.as_str();
    if TRUTH.contains(&value.to_ascii_lowercase().as_str()) {
        return;
    }
    let Some(span) = reshard.value_span() else { return };
    let replacement = match value.to_ascii_uppercase().as_str() {
        "FULL_SHARD" | "HYBRID_SHARD" | "1" | "4" => Some(true),
        "SHARD_GRAD_OP" | "NO_SHARD" | "HYBRID_SHARD_ZERO2" => Some(false),
        _ => None,
    };
    let diagnostic = out.report(span, format!("`fsdp_reshard_after_forward: {value}` with FSDP2: accelerate parses it with str_to_bool and raises \"invalid truth value {}\"", value.to_ascii_lowercase()));
    if let Some(replacement) = replacement {
        diagnostic.with_fix(support::set(
            ctx,
            reshard,
            Literal::Bool(replacement),
            format!("Use `{replacement}` (FSDP2 takes a bool)"),
            Applicability::Safe,
        ));
    }
}
