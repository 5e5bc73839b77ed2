//! Helpers shared by the memory rules: where to place a finding and how to word sizes.

use super::Context;
use crate::estimate::{format_bytes, Estimate};
use crate::span::Span;

/// The key most responsible for the peak: the first edit of the biggest lever that
/// has one, else the micro batch, the sequence length or the model key, else the
/// start of the document.
pub fn primary_span(ctx: &Context, estimate: &Estimate) -> Span {
    let lever_edit = estimate.levers.iter().flat_map(|l| &l.fixes).flat_map(|f| &f.edits).map(|e| e.span).next();
    let plan = ctx.plan;
    lever_edit
        .or_else(|| plan.and_then(|p| p.micro_batch_size.as_ref()).and_then(|s| s.key_span()))
        .or_else(|| plan.and_then(|p| p.max_seq_length.as_ref()).and_then(|s| s.key_span()))
        .or_else(|| plan.and_then(|p| p.model.as_ref()).and_then(|s| s.key_span()))
        .unwrap_or_default()
}

/// One line per component, largest first: `activations 9.81 GiB (backward)`.
pub fn breakdown(estimate: &Estimate) -> Vec<String> {
    let mut components: Vec<_> = estimate.components.iter().filter(|c| c.bytes > 0).collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    components.iter().map(|c| format!("{} {} ({})", c.name, format_bytes(c.bytes), c.phase.as_str())).collect()
}
