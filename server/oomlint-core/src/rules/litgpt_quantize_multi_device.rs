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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::litgpt_quantizes(ctx.format) {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(quantize) = r.entry("quantize").filter(|e| support::truthy(e)) else { return };
    let devices = r.i64("devices").map_or(1, |d| d.value);
    let nodes = r.i64("num_nodes").map_or(1, |n| n.value);
    if devices < 1 || nodes < 1 || devices * nodes <= 1 {
        return;
    }
    let (path, value) = if devices > 1 { ("devices", devices) } else { ("num_nodes", nodes) };
    let Some(entry) = r.entry(path) else { return };
    out.report(
        entry.value.span,
        format!("`quantize` cannot be used with {path}={value}: LitGPT raises \"Quantization is currently not supported for multi-GPU training. Please set devices=1 and num_nodes=1 when using the --quantize flag.\""),
    )
    .with_related(quantize.value.span, "quantization set here")
    .with_fix(set_value(ctx, entry, Literal::Int(1), format!("Set `{path}: 1`"), Applicability::Unsafe));
}
