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
//! Whether it fails depends on the releases. transformers from 4.35 (and accelerate) ask
//! `torch.cuda.is_bf16_supported()`, which from torch 2.3 counts bf16 *emulation* as
//! support: there the run starts, with slow emulated bf16, and the finding is a warning.
//! It is an error under transformers before 4.35 or torch before 2.3 (both checked the
//! compute capability), and in Unsloth scripts, where Unsloth replaces
//! `torch.cuda.is_bf16_supported` with one that excludes emulation. Without pins the newest
//! releases are assumed.
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
//! torch `torch/cuda/__init__.py` (`is_bf16_supported(including_emulation=True)`, 2.3+);
//! transformers `src/transformers/utils/import_utils.py` (`is_torch_bf16_gpu_available`);
//! Unsloth `unsloth/__init__.py` (its `is_bf16_supported` patch);
//! transformers `src/transformers/training_args.py` (`_validate_args`): "Your setup doesn't
//! support bf16/gpu. …"; TRL `trl/trainer/base_config.py` (`bf16 = not fp16` when unset);
//! accelerate `src/accelerate/commands/launch.py` (`_validate_launch_command`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Severity};
use crate::plan::{Framework, Sourced};
use crate::syntax::Literal;
use crate::versions::Version;

/// Why the framework accepts emulated bf16 on this run, when it does.
fn emulated(ctx: &Context, transformers: bool) -> Option<&'static str> {
    let release = |framework: &str, parts: &[u64]| ctx.versions.at_least(framework, &Version::release(parts));
    let unsloth = ctx.plan.is_some_and(|p| p.framework == Framework::Unsloth);
    let checks_capability = !release("torch", &[2, 3]) || (transformers && !release("transformers", &[4, 35]));
    (!unsloth && !checks_capability).then_some(
        "torch 2.3 and newer count bf16 emulation in torch.cuda.is_bf16_supported(), so the check passes and the run starts with slow, emulated bf16 (an error under transformers < 4.35, torch < 2.3 or Unsloth)",
    )
}

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(gpu) = ctx.gpu.filter(|g| !g.bf16) else { return };
    if let Some(a) = support::accelerate(ctx) {
        let Some(mode) = a.mixed_precision.as_ref().filter(|m| m.value == "bf16") else { return };
        let Some(span) = mode.value_span() else { return };
        let message = match emulated(ctx, false) {
            Some(why) => format!("`mixed_precision: bf16` on {}, which has no native bf16: {why}", gpu.name),
            None => format!("`mixed_precision: bf16` on {}, which has no bf16: accelerate raises \"bf16 mixed precision requires PyTorch >= 1.10 and a supported device.\"", gpu.name),
        };
        let diagnostic = out.report(span, message);
        if emulated(ctx, false).is_some() {
            diagnostic.severity = Severity::Warning;
        }
        diagnostic.with_fix(support::set(
            ctx,
            mode,
            Literal::Str("fp16".into()),
            "Use `mixed_precision: fp16`",
            Applicability::Unsafe,
        ));
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
    let emulation = emulated(ctx, true);
    let message = match emulation {
        Some(why) => format!("bf16 training on {} (compute capability {}), which has no native bf16: {why}", gpu.name, gpu.compute_capability),
        None => format!("bf16 training on {} (compute capability {}), which has no bf16: transformers raises \"Your setup doesn't support bf16/gpu. … You need Ampere+ GPU with cuda>=11.0.\"", gpu.name, gpu.compute_capability),
    };
    let severity = if emulation.is_some() { Severity::Warning } else { Severity::Error };
    match bf16.entry_span() {
        Some(span) => {
            let diagnostic = out.report(span, message);
            diagnostic.severity = severity;
            diagnostic.with_fix(support::set(
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
            out.report(span, format!("{message} (TRL enables bf16 unless `fp16: true` is set)")).severity = severity;
        }
    }
}
