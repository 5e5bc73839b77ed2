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
//! A TRL or transformers config is read without type checks: TRL's parser sets the file's
//! values as argparse defaults, which argparse converts only when they are strings
//! (`TrlParser.set_defaults_with_config`), and `HfArgumentParser.parse_yaml_file`,
//! `parse_json_file` and `parse_dict`, Hydra's `instantiate` and a script's own call build
//! the config class from the values as they are. So there an invalid value is an error only
//! when start-up code rejects it: an enum conversion in `__post_init__` (`lr_scheduler_type`,
//! `optim`, the `*_strategy` keys), an explicit check (the schema's `x-checked` says which),
//! a number out of range, or a string TRL's argparse cannot convert. A `null` for a string
//! field or another type mismatch is a warning that says it is passed through unchecked.
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
//! above is in transformers `training_args.py` (`TrainingArguments.__post_init__`); the
//! readers' handling of values in transformers `hf_argparser.py` and TRL `trl/scripts/utils.py`.

use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix, Severity};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    for invalid in &ctx.schema.invalid_values {
        let mut message = invalid.message.clone();
        if let Some(suggestion) = &invalid.suggestion {
            message.push_str(&format!("; did you mean `{suggestion}`?"));
        }
        if let Some(why) = &invalid.unchecked {
            message.push_str(&format!("; {why}"));
        }
        let diagnostic = out.report(invalid.span, message);
        if invalid.unchecked.is_some() {
            diagnostic.severity = diagnostic.severity.min(Severity::Warning);
        }
        if let Some(suggestion) = &invalid.suggestion {
            diagnostic.with_fix(Fix {
                title: format!("Use `{suggestion}`"),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace_keeping_quotes(ctx.text, invalid.span, suggestion, ctx.document.language)],
            });
        }
    }
}
