//! ## What it does
//! Reports bf16 training on a target GPU without bf16 support (before Ampere: T4,
//! V100, P100, …): TRL configs (TRL turns `bf16` on unless `fp16` is set),
//! transformers and LLaMA-Factory `bf16: true`, Axolotl `bf16: true`, and accelerate
//! `mixed_precision: bf16`. The GPU is the file's target (`--gpu`, a
//! `# oomlint: gpu=T4` modeline, the editor's setting or `oomlint.toml`, in that order); without
//! one the rule stays quiet.
//!
//! ## Why
//! `TrainingArguments` raises `ValueError: Your setup doesn't support bf16/gpu. You need
//! to assign use_cpu if you want to train the model on CPU. You need Ampere+ GPU with
//! cuda>=11.0.` at start-up; `accelerate launch` raises "bf16 mixed precision requires
//! PyTorch >= 1.10 and a supported device." Because of TRL's default, a TRL config that
//! says nothing about precision fails on a T4.
//!
//! ## Example
//! ```yaml
//! # oomlint: gpu=T4
//! model_name_or_path: Qwen/Qwen2.5-0.5B
//! per_device_train_batch_size: 4      # error: TRL trains in bf16 by default
//! ```
//!
//! ## Fix
//! Use fp16 (`fp16: true`, `bf16: false`; accelerate `mixed_precision: fp16`). The fix
//! writes `false` over a written `bf16: true` (or `fp16` over accelerate's `bf16`).
//!
//! Fix safety: **unsafe**: fp16 needs loss scaling and can overflow where bf16 does not.
//!
//! ## Source
//! transformers `src/transformers/training_args.py` (`_validate_args`): "Your setup doesn't
//! support bf16/gpu. …"; TRL `trl/trainer/base_config.py` (`bf16 = not fp16` when unset);
//! accelerate `src/accelerate/commands/launch.py` (`_validate_launch_command`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::plan::Sourced;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(gpu) = ctx.gpu.filter(|g| !g.bf16) else { return };
    if let Some(a) = support::accelerate(ctx) {
        let Some(mode) = a.mixed_precision.as_ref().filter(|m| m.value == "bf16") else { return };
        let Some(span) = mode.value_span() else { return };
        out.report(span, format!("`mixed_precision: bf16` on {}, which has no bf16: accelerate raises \"bf16 mixed precision requires PyTorch >= 1.10 and a supported device.\"", gpu.name))
            .with_fix(support::set(ctx,mode, Literal::Str("fp16".into()), "Use `mixed_precision: fp16`", Applicability::Unsafe));
        return;
    }
    // bf16 as the trainer resolves it; the TRL default (on unless fp16) has no key.
    let bf16 = if let Some(a) = support::axolotl(ctx) {
        a.bf16.clone().map(|b| b == Some(true))
    } else if let Some(t) = support::trainer(ctx).filter(|_| support::has_training_arguments(ctx.format)) {
        t.bf16.clone()
    } else {
        return;
    };
    if !bf16.value {
        return;
    }
    let message = format!("bf16 training on {} (compute capability {}), which has no bf16: transformers raises \"Your setup doesn't support bf16/gpu. … You need Ampere+ GPU with cuda>=11.0.\"", gpu.name, gpu.compute_capability);
    match bf16.entry_span() {
        Some(span) => {
            out.report(span, message).with_fix(support::set(
                ctx,
                &bf16,
                Literal::Bool(false),
                "Set `bf16: false` (and `fp16: true`)",
                Applicability::Unsafe,
            ));
        }
        None => {
            let model = support::trainer(ctx).and_then(|t| t.model_name_or_path.as_ref()).and_then(Sourced::key_span);
            let span = support::first_key(&[model]);
            out.report(span, format!("{message} (TRL enables bf16 unless `fp16: true` is set)"));
        }
    }
}
