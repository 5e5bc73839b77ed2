//! ## What it does
//! Warns when a distributed accelerate config (any `distributed_type` but `NO`) leaves
//! `num_processes` unset or at -1.
//!
//! ## Why
//! The file default is -1, and `accelerate launch` raises `ValueError: You need to
//! manually pass in --num_processes using this config yaml.` unless the command line
//! gives `--num_processes` (which is why this is a warning, not an error). It counts
//! processes over all machines.
//!
//! ## Example
//! ```yaml
//! distributed_type: MULTI_GPU
//! num_machines: 1          # warning: num_processes is unset
//! ```
//!
//! ## Fix
//! Write the total process count (usually the number of GPUs). No automatic fix.
//!
//! ## Source
//! accelerate `src/accelerate/commands/config/config_args.py` (`ClusterConfig.num_processes = -1`);
//! `src/accelerate/commands/launch.py` (`_validate_launch_command`): "You need to manually
//! pass in `--num_processes` using this config yaml."

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(a) = support::accelerate(ctx) else { return };
    let Some(distributed) = a.distributed_type.as_ref() else { return };
    let Some(kind) = distributed.value.as_deref().filter(|k| *k != "NO") else { return };
    let processes = &a.num_processes;
    if processes.value.is_some_and(|n| n != -1) {
        return;
    }
    let span = support::first_key(&[processes.key_span(), distributed.key_span()]);
    out.report(span, format!("`num_processes` is not set for distributed_type {kind}: `accelerate launch` raises \"You need to manually pass in `--num_processes` using this config yaml.\" unless the command line passes it"));
}
