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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(gpu) = ctx.gpu.filter(|g| !g.bf16) else { return };
    let Some(r) = support::reader(ctx) else { return };
    if ctx.format == Format::Accelerate {
        if let Some(entry) = r.entry("mixed_precision").filter(|_| support::text(&r, "mixed_precision") == Some("bf16"))
        {
            out.report(entry.value.span, format!("`mixed_precision: bf16` on {}, which has no bf16: accelerate raises \"bf16 mixed precision requires PyTorch >= 1.10 and a supported device.\"", gpu.name))
                .with_fix(set_value(ctx, entry, Literal::Str("fp16".into()), "Use `mixed_precision: fp16`", Applicability::Unsafe));
        }
        return;
    }
    let trl = support::is_trl(ctx.format);
    if !trl && !matches!(ctx.format, Format::Transformers | Format::Llamafactory | Format::Axolotl) {
        return;
    }
    let fp16 = r.bool("fp16").is_some_and(|b| b.value);
    let bf16 = r.bool("bf16").map(|b| b.value);
    let on = match bf16 {
        Some(on) => on,
        None => trl && !fp16,
    };
    if !on {
        return;
    }
    let message = format!("bf16 training on {} (compute capability {}), which has no bf16: transformers raises \"Your setup doesn't support bf16/gpu. … You need Ampere+ GPU with cuda>=11.0.\"", gpu.name, gpu.compute_capability);
    match r.entry("bf16").filter(|_| bf16.is_some()) {
        Some(entry) => {
            out.report(entry.key_span.cover(entry.value.span), message).with_fix(set_value(
                ctx,
                entry,
                Literal::Bool(false),
                "Set `bf16: false` (and `fp16: true`)",
                Applicability::Unsafe,
            ));
        }
        None => {
            let span = support::anchor(&r, &["model_name_or_path"]);
            out.report(span, format!("{message} (TRL enables bf16 unless `fp16: true` is set)"));
        }
    }
}
