//! ## What it does
//! Reports a DeepSpeed JSON whose numeric `train_batch_size` is not a multiple of
//! `train_micro_batch_size_per_gpu × gradient_accumulation_steps`, so no world size
//! makes them agree; and any of the three at 0 or below. (`"auto"` values are filled by
//! the HF Trainer and are not checked.)
//!
//! ## Why
//! DeepSpeed asserts `train_batch_size == micro × gradient_accumulation_steps ×
//! world_size` in `DeepSpeedConfig._batch_assertion`: `AssertionError: Check batch
//! related parameters. train_batch_size is not equal to micro_batch_per_gpu *
//! gradient_acc_step * world_size 30 != 4 * 4 * …`.
//!
//! ## Example
//! ```json
//! {"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4,
//!  "gradient_accumulation_steps": 4}
//! ```
//!
//! ## Fix
//! Give two of the three (DeepSpeed derives the third), make them agree, or use
//! `"auto"` under the HF Trainer. No automatic fix: the intended world size is unknown.
//!
//! ## Source
//! DeepSpeed `deepspeed/runtime/config.py` (`DeepSpeedConfig._batch_assertion`): "Check
//! batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *
//! gradient_acc_step * world_size {t} != {m} * {g} * {w}", "Train batch size: {t} has to
//! be greater than 0".

use super::support;
use super::{Context, Reporter};
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Deepspeed {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let number = |path: &str| r.i64(path).filter(|_| support::text(&r, path).is_some_and(|t| t != "auto"));
    let keys = ["train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"];
    for key in keys {
        if let (Some(v), Some(entry)) = (number(key), r.entry(key)) {
            if v.value <= 0 {
                out.report(
                    entry.value.span,
                    format!("`{key}` is {}: DeepSpeed asserts it \"has to be greater than 0\"", v.value),
                );
                return;
            }
        }
    }
    let (Some(train), Some(micro), Some(accumulation)) = (number(keys[0]), number(keys[1]), number(keys[2])) else {
        return;
    };
    let step = micro.value.saturating_mul(accumulation.value);
    if step > 0 && train.value % step != 0 {
        let Some(entry) = r.entry(keys[0]) else { return };
        let diagnostic = out.report(entry.value.span, format!("train_batch_size {} is not a multiple of train_micro_batch_size_per_gpu x gradient_accumulation_steps = {step}, so no world size satisfies DeepSpeed's \"train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size\" assertion", train.value));
        for key in &keys[1..] {
            if let Some(k) = support::key_of(&r, key) {
                diagnostic.with_related(k, format!("{key} set here"));
            }
        }
    }
}
