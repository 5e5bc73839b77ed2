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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(a) = support::accelerate(ctx) else { return };
    let efficient = &a.fsdp_cpu_ram_efficient_loading;
    let (true, Some(efficient_key)) = (efficient.value, efficient.key_span()) else { return };
    let Some(sync) = a.fsdp_sync_module_states.as_ref().filter(|s| !s.value) else { return };
    let Some(span) = sync.value_span() else { return };
    out.report(span, "`fsdp_sync_module_states: false` with `fsdp_cpu_ram_efficient_loading: true`: accelerate raises \"When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`\"")
        .with_related(efficient_key, "RAM-efficient loading set here")
        .with_fix(support::set(ctx,sync, Literal::Bool(true), "Set `fsdp_sync_module_states: true`", Applicability::Safe));
}
