//! ## What it does
//! Reports a LitGPT `quantize` run on more than one device: `devices` greater than 1
//! or `num_nodes` greater than 1.
//!
//! ## Why
//! The LoRA and adapter scripts raise `NotImplementedError: Quantization is currently
//! not supported for multi-GPU training. Please set devices=1 and num_nodes=1 when using
//! the --quantize flag.` in `setup()`. (`devices: auto` or `-1` fails the same way on a
//! host with several GPUs; oomlint cannot count them from the file and stays quiet.)
//!
//! ## Example
//! ```yaml
//! quantize: bnb.nf4
//! precision: bf16-true
//! devices: 4          # error
//! ```
//!
//! ## Fix
//! Set `devices: 1` (and `num_nodes: 1`), or drop `quantize` and train LoRA in 16 bit
//! across the GPUs.
//!
//! Fix safety: **unsafe**: going down to one GPU changes the run's speed, its
//! per-device memory and, with the same `global_batch_size`, its gradient accumulation.
//!
//! ## Source
//! LitGPT `litgpt/finetune/lora.py`, `adapter.py`, `adapter_v2.py` (`setup`):
//! "Quantization is currently not supported for multi-GPU training. …"

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(litgpt) = support::litgpt(ctx) else { return };
    let Some(quantize) = litgpt.quantize.as_ref().and_then(|q| q.value_span()) else { return };
    let count = |n: &Option<crate::plan::Sourced<i64>>| n.as_ref().map_or(1, |n| n.value);
    let (devices, nodes) = (count(&litgpt.devices), count(&litgpt.num_nodes));
    if devices < 1 || nodes < 1 || devices * nodes <= 1 {
        return;
    }
    let (path, value, setting) =
        if devices > 1 { ("devices", devices, &litgpt.devices) } else { ("num_nodes", nodes, &litgpt.num_nodes) };
    let Some(setting) = setting.as_ref() else { return };
    let Some(span) = setting.value_span() else { return };
    out.report(
        span,
        format!("`quantize` cannot be used with {path}={value}: LitGPT raises \"Quantization is currently not supported for multi-GPU training. Please set devices=1 and num_nodes=1 when using the --quantize flag.\""),
    )
    .with_related(quantize, "quantization set here")
    .with_fix(support::set(ctx,setting, Literal::Int(1), format!("Set `{path}: 1`"), Applicability::Unsafe));
}
