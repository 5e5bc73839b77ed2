//! ## What it does
//! Reports a DeepSpeed config given inline (`deepspeed:` mapping) in a TRL or
//! transformers YAML whose non-`"auto"` values disagree with the TrainingArguments of
//! the same file: `fp16.enabled` / `bf16.enabled` against `fp16` / `bf16` (TRL turns
//! `bf16` on unless `fp16` is set), `train_micro_batch_size_per_gpu` against
//! `per_device_train_batch_size`, `gradient_accumulation_steps`, and
//! `gradient_clipping` against `max_grad_norm`.
//!
//! ## Why
//! The HF DeepSpeed integration fills `"auto"` values from TrainingArguments and
//! collects every other difference; the Trainer then raises `ValueError: Please correct
//! the following DeepSpeed config values that mismatch TrainingArguments values:\n- ds
//! fp16.enabled=True vs hf fp16|fp16_full_eval=False\nThe easiest method is to set these
//! DeepSpeed config values to 'auto'.` The typical trigger is a DeepSpeed block with
//! `fp16: {enabled: true}` under TRL's default `bf16=True`.
//!
//! ## Example
//! ```yaml
//! per_device_train_batch_size: 4
//! deepspeed:
//!   fp16:
//!     enabled: true        # error: TRL trains in bf16 by default
//!   zero_optimization:
//!     stage: 2
//! ```
//!
//! ## Fix
//! Set the DeepSpeed value to `auto`, as the message suggests.
//!
//! Fix safety: **safe**: `auto` takes the TrainingArguments value, which the Trainer
//! requires the two to agree on anyway.
//!
//! ## Source
//! transformers `src/transformers/integrations/deepspeed.py` (`HfTrainerDeepSpeedConfig.fill_match`,
//! `trainer_config_process`, `trainer_config_finalize`): "Please correct the following
//! DeepSpeed config values that mismatch TrainingArguments values: …".

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::{Format, Reader};
use crate::syntax::Literal;
use crate::syntax::ScalarKind;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let trl = support::is_trl(ctx.format);
    if !trl && ctx.format != Format::Transformers {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(ds) = r.entry("deepspeed").and_then(|e| e.value.as_mapping()) else { return };
    let ds = Reader::new(ds);
    let fp16 = r.bool("fp16").is_some_and(|b| b.value);
    let bf16 = r.bool("bf16").map_or(trl && !fp16, |b| b.value);
    let number = |path: &str, default: f64| r.f64(path).map_or(default, |v| v.value);
    let checks: [(&str, f64, &str); 5] = [
        ("fp16.enabled", f64::from(u8::from(fp16)), "fp16"),
        ("bf16.enabled", f64::from(u8::from(bf16)), "bf16"),
        ("train_micro_batch_size_per_gpu", number("per_device_train_batch_size", 8.0), "per_device_train_batch_size"),
        ("gradient_accumulation_steps", number("gradient_accumulation_steps", 1.0), "gradient_accumulation_steps"),
        ("gradient_clipping", number("max_grad_norm", 1.0), "max_grad_norm"),
    ];
    for (ds_key, hf_value, hf_key) in checks {
        let Some(entry) = ds.entry(ds_key) else { continue };
        let Some(scalar) = entry.value.as_scalar() else { continue };
        let ds_value = match scalar.kind {
            ScalarKind::Bool(b) => f64::from(u8::from(b)),
            _ => match scalar.as_f64() {
                Some(v) => v,
                None => continue, // "auto" and the like
            },
        };
        if ds_value == hf_value {
            continue;
        }
        let shown = |v: f64, boolean: bool| if boolean { (v != 0.0).to_string() } else { v.to_string() };
        let boolean = ds_key.ends_with("enabled");
        out.report(entry.value.span, format!("DeepSpeed `{ds_key}` = {} but TrainingArguments `{hf_key}` = {}: the Trainer raises \"Please correct the following DeepSpeed config values that mismatch TrainingArguments values … set these DeepSpeed config values to 'auto'.\"", shown(ds_value, boolean), shown(hf_value, boolean)))
            .with_fix(set_value(ctx, entry, Literal::Str("auto".into()), format!("Set `{ds_key}` to auto"), Applicability::Safe));
    }
}
