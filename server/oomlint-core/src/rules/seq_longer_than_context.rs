//! ## What it does
//! Reports a training sequence length longer than the model's context window (LitGPT
//! `block_size`, Hugging Face `max_position_embeddings`): LitGPT `train.max_seq_length`,
//! TRL `max_length`, Axolotl `sequence_len`, LLaMA-Factory `cutoff_len`. The model comes
//! from the config (`checkpoint_dir`, `model_name_or_path`, `base_model`); unknown models
//! are skipped, and so are sliding-window models outside LitGPT, whose catalog block size
//! is the window rather than the position limit.
//!
//! ## Why
//! LitGPT refuses: the `max_seq_length` setter raises `ValueError: Cannot attend to
//! 8192, block size is only 4096.` (in `pretrain` always; in fine-tuning as soon as a
//! sample is that long), so for LitGPT this is an **error**. The Hugging Face stacks do
//! not check: positions past the trained range get RoPE angles the model never saw and
//! quality degrades silently, while activation memory grows with the length; there it
//! is a **warning**.
//!
//! ## Example
//! ```yaml
//! model_name_or_path: meta-llama/Llama-2-7b-hf   # 4096-token context
//! max_length: 8192                               # warning
//! ```
//!
//! ## Fix
//! Lower the length to the context size, or use a long-context variant of the model
//! (or RoPE scaling). The fix writes the context size.
//!
//! Fix safety: **unsafe**: longer samples are truncated.
//!
//! ## Source
//! LitGPT `litgpt/model.py` (`GPT.max_seq_length` setter: "Cannot attend to {value}, block
//! size is only {block_size}."); model context sizes from oomlint's model catalog
//! (`config.json` `max_position_embeddings` / LitGPT `block_size`).

use super::support;
use super::{Context, Reporter};
use crate::catalog::models::resolve_model;
use crate::diagnostic::{Applicability, Severity};
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    let sft = || plan.trainer.as_ref().and_then(|t| t.sft.as_ref()).map(|s| s.max_length.clone());
    let length = || plan.max_seq_length.as_ref().map(|m| m.clone().map(Some));
    // The key as the format names it; an SFT config's own `max_length` (the plan's length
    // also takes the removed `max_seq_length`, and a script's loader length).
    let (path, setting) = match ctx.format {
        f if support::is_litgpt(f) => ("train.max_seq_length", length()),
        Format::TrlSft => ("max_length", sft()),
        Format::TrlDpo => ("max_length", length()),
        Format::Axolotl => ("sequence_len", length()),
        Format::Llamafactory => ("cutoff_len", length()),
        _ => return,
    };
    let Some(setting) = setting.filter(|s| s.is_from_file()) else { return };
    let (Some(length), Some(span)) = (setting.value, setting.value_span()) else { return };
    let Some(model) = plan.model.as_ref() else { return };
    let Ok(arch) = resolve_model(&model.value.name) else { return };
    if arch.block_size == 0 || length <= arch.block_size {
        return;
    }
    let litgpt = support::is_litgpt(ctx.format);
    // LitGPT's block size of sliding-window models (Mistral 7B v0.1) is the window; the
    // Hugging Face position limit is larger, so only LitGPT is held to it.
    if !litgpt && arch.sliding_window_size == Some(arch.block_size) {
        return;
    }
    let consequence = if litgpt {
        format!("LitGPT raises \"Cannot attend to {length}, block size is only {}.\"", arch.block_size)
    } else {
        "positions past the trained range degrade quality, and memory grows with the length".to_string()
    };
    let diagnostic = out.report(
        span,
        format!("{path} {length} is longer than the {}-token context of {}: {consequence}", arch.block_size, arch.name),
    );
    if let Some(key) = model.key_span() {
        diagnostic.with_related(key, "model set here");
    }
    diagnostic.with_fix(support::set(
        ctx,
        &setting,
        Literal::from(arch.block_size),
        format!("Use the model's context, {}", arch.block_size),
        Applicability::Unsafe,
    ));
    if litgpt {
        diagnostic.severity = Severity::Error;
    }
}
