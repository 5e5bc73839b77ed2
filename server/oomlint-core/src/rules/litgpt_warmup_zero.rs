//! ## What it does
//! Reports a LitGPT fine-tuning config whose `train.lr_warmup_steps` is 0 or null.
//!
//! ## Why
//! The fine-tuning scripts build their scheduler as
//! `LambdaLR(optimizer, lambda step: step / warmup_steps)` straight from
//! `train.lr_warmup_steps`; PyTorch calls the lambda once on construction, so 0 raises
//! `ZeroDivisionError: division by zero` and null raises `TypeError: unsupported operand
//! type(s) for /: 'int' and 'NoneType'`, after the model is loaded. (`pretrain` handles
//! zero warmup itself.)
//!
//! ## Example
//! ```yaml
//! train:
//!   lr_warmup_steps: 0   # error
//! ```
//!
//! ## Fix
//! Use at least one warmup step. The fix writes `1`, the smallest value that runs and
//! the closest to "no warmup".
//!
//! Fix safety: **safe**: one warmup step is the nearest behaviour to what the file asks.
//!
//! ## Source
//! LitGPT `litgpt/finetune/lora.py`, `full.py`, `adapter.py`, `adapter_v2.py`
//! (`get_lr_scheduler`: `LambdaLR(optimizer, lambda step: step / warmup_steps)`);
//! PyTorch `torch/optim/lr_scheduler.py` (`LambdaLR` steps once in `__init__`).

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) || ctx.format == Format::LitgptPretrain {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let path = "train.lr_warmup_steps";
    let Some(entry) = r.entry(path) else { return };
    let problem = if r.is_null(path) {
        "null: the scheduler's `step / warmup_steps` raises TypeError"
    } else if r.f64(path).is_some_and(|v| v.value == 0.0) {
        "0: the scheduler's `step / warmup_steps` raises ZeroDivisionError"
    } else {
        return;
    };
    out.report(
        entry.value.span.cover(entry.key_span),
        format!("train.lr_warmup_steps is {problem} when LitGPT builds its LambdaLR warmup"),
    )
    .with_fix(set_value(ctx, entry, Literal::Int(1), "Use one warmup step", Applicability::Safe));
}
