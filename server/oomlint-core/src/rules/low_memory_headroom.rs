//! ## What it does
//! Warns when the estimated peak GPU memory (device view) fits the target GPU with less
//! than 10 % of its capacity to spare.
//!
//! ## Why
//! The estimate has an uncertainty band of a few percent, and real runs vary: a longer
//! batch than the one measured, allocator fragmentation, another process on the card.
//! Under 10 % headroom a run that fits on paper often dies at its longest batch. Like
//! `exceeds-gpu-memory`, the finding marks the key that sets the largest component and
//! lists the components in a note.
//!
//! ## Example
//! ```yaml
//! # oomlint: gpu=A10G
//! checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3-8B
//! precision: bf16-true
//! train:
//!   micro_batch_size: 1
//!   max_seq_length: 2048   # close to the 24 GB of an A10G
//! ```
//!
//! ## Fix
//! Unsafe: the estimator's levers that restore 10 % headroom, as for
//! `exceeds-gpu-memory`.
//!
//! ## Source
//! oomlint's estimator (`server/src/estimate/`); the 10 % threshold is
//! `estimate::TIGHT_HEADROOM`.

use super::memory::{breakdown_note, culprit, resolving_fixes};
use super::{Context, Reporter};
use crate::estimate::{format_bytes, Verdict, TIGHT_HEADROOM};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let (Some(estimate), Some(gpu)) = (ctx.estimate, ctx.gpu) else { return };
    let Some(fit) = estimate.fit.filter(|f| f.verdict == Verdict::Tight) else { return };
    let culprit = culprit(ctx, estimate);
    let share = fit.headroom_bytes as f64 / gpu.memory_bytes as f64 * 100.0;
    let message = format!(
        "estimated peak {} ({} phase) leaves {} ({share:.1} %) of the {} free; under 10 % a longer batch or fragmentation can run out of memory",
        format_bytes(estimate.peak.device_bytes),
        estimate.peak.phase.as_str(),
        format_bytes(fit.headroom_bytes.max(0) as u64),
        gpu.name,
    );
    let diagnostic = out.report(culprit.span, message);
    if !estimate.missing_inputs.is_empty() {
        diagnostic.message.push_str(&format!("; assuming {}", estimate.missing_inputs.join("; ")));
    }
    for note in &estimate.notes {
        diagnostic.message.push_str(&format!("; {note}"));
    }
    diagnostic.with_note(breakdown_note(&culprit, estimate));
    let target = gpu.memory_bytes - (TIGHT_HEADROOM * gpu.memory_bytes as f64) as u64;
    for fix in resolving_fixes(estimate, target) {
        diagnostic.with_fix(fix);
    }
}
