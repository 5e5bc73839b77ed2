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

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_trl(ctx.format) && ctx.format != Format::Transformers {
        return;
    }
    let Some(plan) = ctx.plan else { return };
    let Some(trainer) = plan.trainer.as_ref() else { return };
    let Some(ds) = trainer.deepspeed.as_ref() else { return };
    let count = |field: &Option<crate::plan::Sourced<u64>>| field.as_ref().map(|f| f.value as f64);
    let (Some(micro), Some(accumulation)) = (count(&plan.micro_batch_size), count(&plan.gradient_accumulation)) else {
        return;
    };
    let checks = [
        ("fp16.enabled", &ds.fp16_enabled, f64::from(u8::from(trainer.fp16.value)), "fp16"),
        ("bf16.enabled", &ds.bf16_enabled, f64::from(u8::from(trainer.bf16.value)), "bf16"),
        ("train_micro_batch_size_per_gpu", &ds.train_micro_batch_size_per_gpu, micro, "per_device_train_batch_size"),
        ("gradient_accumulation_steps", &ds.gradient_accumulation_steps, accumulation, "gradient_accumulation_steps"),
        ("gradient_clipping", &ds.gradient_clipping, trainer.max_grad_norm.value, "max_grad_norm"),
    ];
    for (ds_key, ds_setting, hf_value, hf_key) in checks {
        // Absent and "auto" values are filled from TrainingArguments.
        let Some(ds_setting) = ds_setting.as_ref() else { continue };
        let ds_value = ds_setting.value;
        if ds_value == hf_value {
            continue;
        }
        let Some(span) = ds_setting.value_span() else { continue };
        let shown = |v: f64, boolean: bool| if boolean { (v != 0.0).to_string() } else { v.to_string() };
        let boolean = ds_key.ends_with("enabled");
        out.report(span, format!("DeepSpeed `{ds_key}` = {} but TrainingArguments `{hf_key}` = {}: the Trainer raises \"Please correct the following DeepSpeed config values that mismatch TrainingArguments values … set these DeepSpeed config values to 'auto'.\"", shown(ds_value, boolean), shown(hf_value, boolean)))
            .with_fix(support::set(ctx,ds_setting, Literal::Str("auto".into()), format!("Set `{ds_key}` to auto"), Applicability::Safe));
    }
}
