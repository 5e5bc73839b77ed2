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
use crate::format::Format;

const OWNED_BY_FILE: [&str; 8] = [
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_stage",
    "offload_optimizer_device",
    "offload_param_device",
    "offload_param_nvme_path",
    "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
];

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Accelerate {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(file) = r
        .entry("deepspeed_config.deepspeed_config_file")
        .filter(|_| support::is_set(&r, "deepspeed_config.deepspeed_config_file"))
    else {
        return;
    };
    let mut conflicts: Vec<(&str, crate::span::Span)> = OWNED_BY_FILE
        .iter()
        .filter_map(|k| r.entry(&format!("deepspeed_config.{k}")).map(|e| (*k, e.key_span)))
        .collect();
    if let Some(mp) = r.entry("mixed_precision").filter(|_| support::is_set(&r, "mixed_precision")) {
        conflicts.push(("mixed_precision", mp.key_span));
    }
    for (key, span) in conflicts {
        out.report(span, format!("`{key}` next to `deepspeed_config_file`: accelerate raises \"When using `deepspeed_config_file`, the following accelerate config variables will be ignored: […]. Please specify them appropriately in the DeepSpeed config file.\""))
            .with_related(file.key_span, "DeepSpeed config file set here");
    }
}
