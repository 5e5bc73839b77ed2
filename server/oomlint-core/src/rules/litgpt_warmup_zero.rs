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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_litgpt(ctx.format) || ctx.format == Format::LitgptPretrain {
        return;
    }
    let Some(steps) = support::litgpt(ctx).map(|l| &l.lr_warmup_steps) else { return };
    let Some(span) = steps.entry_span() else { return };
    let problem = match steps.value {
        None => "null: the scheduler's `step / warmup_steps` raises TypeError",
        Some(0.0) => "0: the scheduler's `step / warmup_steps` raises ZeroDivisionError",
        Some(_) => return,
    };
    out.report(span, format!("train.lr_warmup_steps is {problem} when LitGPT builds its LambdaLR warmup"))
        .with_fix(support::set(ctx, steps, Literal::Int(1), "Use one warmup step", Applicability::Safe));
}
