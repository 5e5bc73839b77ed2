//! ## What it does
//! Reports an accelerate config file without a `distributed_type` key.
//!
//! ## Why
//! `accelerate launch --config_file` loads the YAML with
//! `load_config_from_file`, which raises `ValueError: A distributed_type must be
//! specified in the config file.` before any process starts.
//!
//! ## Example
//! ```yaml
//! compute_environment: LOCAL_MACHINE
//! num_processes: 2      # error: no distributed_type
//! ```
//!
//! ## Fix
//! Add `distributed_type:` (`NO`, `MULTI_GPU`, `DEEPSPEED`, `FSDP`, …). No automatic
//! fix: the strategy is the author's choice.
//!
//! ## Source
//! accelerate `src/accelerate/commands/config/config_args.py` (`BaseConfig.from_yaml_file`):
//! "A `distributed_type` must be specified in the config file."

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(a) = support::accelerate(ctx) else { return };
    if a.distributed_type.is_some() {
        return;
    }
    out.report(
        support::first_key(&[a.first_key]),
        "no `distributed_type`: accelerate raises \"A `distributed_type` must be specified in the config file.\"",
    );
}
