//! ## What it does
//! Reports a value the format's schema does not allow: the wrong type, a value outside
//! an enum (naming the valid values), a number out of range, or a missing required key.
//!
//! ## Why
//! The framework checks these only when it starts: jsonargparse (LitGPT) rejects a
//! string where an int is expected, `TrainingArguments.__post_init__` converts
//! `lr_scheduler_type` and `eval_strategy` to enums and raises
//! `ValueError: 'cosine_with_restart' is not a valid SchedulerType`, accelerate raises
//! the same way on an unknown `distributed_type`, DeepSpeed's pydantic models reject a
//! `stage: 4`. By then the job has queued, pulled the image and maybe downloaded the model.
//!
//! ## Example
//! ```yaml
//! checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B
//! logger_name: csvv      # must be one of `csv`, `tensorboard`, `wandb`, ...
//! lora_dropout: 1.5      # must be a number between 0 and 1
//! ```
//!
//! ## Fix
//! For an enum value close to a valid one (`csvv` → `csv`), replace it. Fix safety:
//! **unsafe**: the replacement is a guess. Other values need a human.
//!
//! ## Source
//! The format's JSON Schema in `schema/` (types, `enum`, `minimum`/`maximum`, `required`),
//! each property citing the framework file it mirrors in `x-source`; the enum conversion
//! above is in transformers `training_args.py` (`TrainingArguments.__post_init__`).

use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    for invalid in &ctx.schema.invalid_values {
        let diagnostic = out.report(invalid.span, invalid.message.clone());
        if let Some(suggestion) = &invalid.suggestion {
            diagnostic.message.push_str(&format!("; did you mean `{suggestion}`?"));
            diagnostic.with_fix(Fix {
                title: format!("Use `{suggestion}`"),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace_keeping_quotes(ctx.text, invalid.span, suggestion, ctx.document.language)],
            });
        }
    }
}
