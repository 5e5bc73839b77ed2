//! ## What it does
//! Reports a launch whose accelerate mixed precision (`accelerate launch
//! --mixed_precision`, or `mixed_precision` in the accelerate config it passes with
//! `--config_file`) disagrees with the `fp16` / `bf16` training arguments of the program it
//! runs (a TRL or transformers Trainer).
//!
//! ## Why
//! The Trainer does not fail: `TrainingArguments.__post_init__` reads
//! `ACCELERATE_MIXED_PRECISION` (which `accelerate launch` sets from the flag or config)
//! and, when `fp16` or `bf16` is set, overwrites it ("if training args is specified, it
//! will override the one specified in the accelerate config"). The run trains in the
//! training arguments' precision and the accelerate setting is silently ignored, which is
//! rarely what was meant (an fp16 accelerate config for a card without bf16, say). A
//! warning.
//!
//! ## Example
//! ```bash
//! accelerate launch --mixed_precision fp16 --num_processes 2 train.py --bf16 --per_device_train_batch_size 4
//! ```
//!
//! ## Fix
//! Make the two agree, or drop one. No automatic fix: which was meant is unknown.
//!
//! ## Source
//! transformers `src/transformers/training_args.py` (`TrainingArguments.__post_init__`:
//! `mixed_precision_dtype = os.environ.get("ACCELERATE_MIXED_PRECISION", "no")`, then
//! `fp16` → "fp16", `bf16` → "bf16"); accelerate `src/accelerate/commands/launch.py`
//! (`_validate_launch_command` fills `mixed_precision` from the config when the flag is
//! not given) and `utils/launch.py` (`prepare_multi_gpu_env` exports
//! `ACCELERATE_MIXED_PRECISION`).

use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    let (Some(launch), Some(trainer)) = (plan.launch.as_ref(), plan.trainer.as_ref()) else { return };
    let Some(accelerate) = launch.accelerate_mixed_precision.as_ref() else { return };
    let wanted = accelerate.value.to_ascii_lowercase();
    // The training argument that decides, as `__post_init__` checks them: fp16 first.
    let (name, setting) = if trainer.fp16.value && trainer.fp16.is_from_file() {
        ("fp16", &trainer.fp16)
    } else if trainer.bf16.value && trainer.bf16.is_from_file() {
        ("bf16", &trainer.bf16)
    } else {
        return;
    };
    if wanted == name {
        return;
    }
    let Some((span, set_in)) = plan.place(setting) else { return };
    let diagnostic = out.report(span, format!("`{name}` is set{set_in} but accelerate's mixed_precision is `{}`: the Trainer overrides accelerate's setting with its own (`TrainingArguments.__post_init__`), so the run trains in {name} and the accelerate setting is ignored", accelerate.value));
    if let Some((at, set_in)) = plan.place(accelerate) {
        diagnostic.with_related(at, format!("accelerate mixed_precision `{}`{set_in}", accelerate.value));
    }
}
