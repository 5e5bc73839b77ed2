//! ## What it does
//! Reports an accelerate config whose `deepspeed_config` points at a
//! `deepspeed_config_file` and also sets values that file must own:
//! `gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`,
//! `offload_optimizer_device`, `offload_param_device`, the offload NVMe paths,
//! `zero3_save_16bit_model`, or a top-level `mixed_precision`.
//!
//! ## Why
//! With a DeepSpeed file, accelerate refuses to merge those settings:
//! `ValueError: When using deepspeed_config_file, the following accelerate config
//! variables will be ignored: […]. Please specify them appropriately in the DeepSpeed
//! config file. …` when the DeepSpeed plugin is built in each process.
//!
//! ## Example
//! ```yaml
//! distributed_type: DEEPSPEED
//! mixed_precision: bf16           # error
//! deepspeed_config:
//!   deepspeed_config_file: ds_zero3.json
//!   zero_stage: 3                 # error
//! ```
//!
//! ## Fix
//! Move these settings into the DeepSpeed JSON and delete them here. No automatic fix:
//! the JSON file is not edited.
//!
//! ## Source
//! accelerate `src/accelerate/utils/dataclasses.py` (`DeepSpeedPlugin._deepspeed_config_checks`):
//! "When using `deepspeed_config_file`, the following accelerate config variables will be
//! ignored: …"; `src/accelerate/commands/launch.py` (`launch_command` adds `mixed_precision`
//! when it comes from the config file).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(a) = support::accelerate(ctx) else { return };
    let Some(file) = a.deepspeed_config_file.as_ref().and_then(|f| f.key_span()) else { return };
    let owned = a.deepspeed_keys_owned_by_file.iter().map(|k| (k.value, k.key_span()));
    let mixed_precision = a.mixed_precision.as_ref().map(|m| ("mixed_precision", m.key_span()));
    for (key, span) in owned.chain(mixed_precision) {
        let Some(span) = span else { continue };
        out.report(span, format!("`{key}` next to `deepspeed_config_file`: accelerate raises \"When using `deepspeed_config_file`, the following accelerate config variables will be ignored: […]. Please specify them appropriately in the DeepSpeed config file.\""))
            .with_related(file, "DeepSpeed config file set here");
    }
}
