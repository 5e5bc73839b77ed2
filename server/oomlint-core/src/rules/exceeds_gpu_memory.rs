//! ## What it does
//! Reports a run whose estimated peak GPU memory (the device view: tensors, allocator
//! cache and CUDA context, what `nvidia-smi` and the OOM message see) is larger than
//! the target GPU.
//!
//! ## Why
//! The run would die with `torch.OutOfMemoryError: CUDA out of memory` after the model
//! has loaded: minutes and a GPU later. The finding marks the key most responsible for
//! the peak (the one that sets the largest component: the micro batch or sequence length
//! for activations, the model for the weights, the optimizer for its state), lists the
//! components in a note as `oomlint estimate` does, and its fixes are the estimator's
//! levers ranked by GiB saved.
//!
//! ## Example
//! ```yaml
//! # oomlint: gpu=A10G
//! checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf
//! precision: bf16-true
//! train:
//!   micro_batch_size: 8      # 7B LoRA at 8 x 2048 tokens needs far more than 24 GB
//!   max_seq_length: 2048
//! ```
//!
//! Where batches are padded to their longest sample (no packing) and short samples fit, the
//! run exceeds only once a batch holds a sample of the maximum length (verdict `may-exceed`):
//! the dataset decides, so the finding is a warning.
//!
//! When the estimate had to assume an input the file does not give (for example the
//! model's full context because no sequence length is set), the finding is a warning
//! and says what was assumed.
//!
//! ## Fix
//! Unsafe: each estimator lever that alone brings the run under the GPU's capacity
//! (halve the micro batch and double accumulation, gradient checkpointing, an 8-bit
//! optimizer, the longest sequence that leaves 10 % free as `oomlint estimate` finds
//! it, …), or else the smallest combination of levers that does, as one fix.
//! Levers keep the training semantics but change speed or numerics, so none is applied
//! by `--fix`; `--unsafe-fixes` applies the first. Levers that help without fitting
//! are offered by the language server as code actions.
//!
//! ## Source
//! oomlint's estimator (`server/src/estimate/`), which mirrors what PyTorch keeps alive
//! in each framework's code path; the verdict compares against the GPU's capacity as
//! `torch.cuda.get_device_properties().total_memory` reports it.

use super::memory::{breakdown_note, culprit, largest_parts, resolving_fixes};
use super::{Context, Reporter};
use crate::estimate::{format_bytes, Verdict};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let (Some(estimate), Some(gpu)) = (ctx.estimate, ctx.gpu) else { return };
    let Some(fit) = estimate.fit.filter(|f| matches!(f.verdict, Verdict::Exceeds | Verdict::MayExceed)) else {
        return;
    };
    let culprit = culprit(ctx, estimate);
    let verb = match fit.verdict {
        Verdict::MayExceed => "exceeds, once a batch holds a sample of the maximum length,",
        _ => "exceeds",
    };
    let message = format!(
        "estimated peak {} ({} phase) {verb} the {} of the {} by {}; largest parts: {}",
        format_bytes(estimate.peak.device_bytes),
        estimate.peak.phase.as_str(),
        format_bytes(gpu.memory_bytes),
        gpu.name,
        format_bytes(fit.headroom_bytes.unsigned_abs()),
        largest_parts(estimate, 3)
    );
    let diagnostic = out.report(culprit.span, message);
    if !estimate.missing_inputs.is_empty() {
        // The peak rests on an assumption (e.g. the model's full context when the
        // sequence length is not set): likely, not certain, so a warning.
        diagnostic.severity = crate::diagnostic::Severity::Warning;
        diagnostic.message.push_str(&format!("; assuming {}", estimate.missing_inputs.join("; ")));
    }
    for note in &estimate.notes {
        diagnostic.message.push_str(&format!("; {note}"));
    }
    if let Some(note) = &gpu.note {
        diagnostic.message.push_str(&format!(" (the {}: {note})", gpu.name));
    }
    diagnostic.with_note(breakdown_note(&culprit, estimate));
    for fix in resolving_fixes(estimate, gpu.memory_bytes) {
        diagnostic.with_fix(fix);
    }
}
