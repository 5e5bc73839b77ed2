//! ## What it does
//! Reports an accelerate FSDP config with `fsdp_cpu_ram_efficient_loading: true` and
//! `fsdp_sync_module_states: false`.
//!
//! ## Why
//! With RAM-efficient loading only rank 0 reads the weights; the other ranks get them
//! by syncing module states. `accelerate launch` raises `ValueError: When using
//! --fsdp_cpu_ram_efficient_loading set --fsdp_sync_module_states to True`.
//!
//! ## Example
//! ```yaml
//! fsdp_config:
//!   fsdp_cpu_ram_efficient_loading: true
//!   fsdp_sync_module_states: false     # error
//! ```
//!
//! ## Fix
//! Set `fsdp_sync_module_states: true`.
//!
//! Fix safety: **safe**: RAM-efficient loading requires it, so the run never worked
//! without.
//!
//! ## Source
//! accelerate `src/accelerate/utils/launch.py` (`prepare_multi_gpu_env`): "When using
//! `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`".

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
    let Some(efficient) = r.entry("fsdp_config.fsdp_cpu_ram_efficient_loading").filter(|e| support::truthy(e)) else {
        return;
    };
    let Some(sync) = r.entry("fsdp_config.fsdp_sync_module_states") else { return };
    if r.bool("fsdp_config.fsdp_sync_module_states").is_some_and(|b| !b.value) {
        out.report(sync.value.span, "`fsdp_sync_module_states: false` with `fsdp_cpu_ram_efficient_loading: true`: accelerate raises \"When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`\"")
            .with_related(efficient.key_span, "RAM-efficient loading set here")
            .with_fix(set_value(ctx, sync, Literal::Bool(true), "Set `fsdp_sync_module_states: true`", Applicability::Safe));
    }
}
