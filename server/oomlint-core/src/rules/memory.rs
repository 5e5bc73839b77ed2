//! Helpers shared by the memory rules: where to place a finding and how to word sizes.

use super::Context;
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::estimate::{format_bytes, Estimate};
use crate::span::Span;

/// Fixes that bring the device peak to at most `target` bytes: each single lever that
/// does it alone, else the solver's smallest combination as one fix (when every lever
/// in it has edits and they do not overlap). Levers that help without resolving the
/// finding stay available as the language server's code actions.
pub(super) fn resolving_fixes(estimate: &Estimate, target: u64) -> Vec<Fix> {
    let peak = estimate.peak.device_bytes;
    let reaches = |saves: u64| peak.saturating_sub(saves) <= target;
    let single: Vec<Fix> = estimate
        .levers
        .iter()
        .filter(|l| reaches(l.saves_bytes))
        .flat_map(|l| {
            l.fixes.iter().map(move |f| Fix {
                title: format!("{} (saves {})", l.title, format_bytes(l.saves_bytes)),
                applicability: Applicability::Unsafe,
                edits: f.edits.clone(),
            })
        })
        .collect();
    if !single.is_empty() {
        return single;
    }
    let Some(solve) =
        estimate.solve.as_ref().filter(|s| s.combination_fits && s.smallest_fitting_combination.len() > 1)
    else {
        return Vec::new();
    };
    let mut edits: Vec<Edit> = Vec::new();
    for title in &solve.smallest_fitting_combination {
        let Some(fix) = estimate.levers.iter().find(|l| &l.title == title).and_then(|l| l.fixes.first()) else {
            return Vec::new();
        };
        for edit in &fix.edits {
            // Keys two levers add at the same place go in one insertion.
            if let Some(same) = edits.iter_mut().find(|o| edit.span.is_empty() && o.span == edit.span) {
                same.content.push_str(edit.content.trim_start_matches('\n'));
                continue;
            }
            if edits.iter().any(|o| edit.span.start < o.span.end && o.span.start < edit.span.end) {
                return Vec::new();
            }
            edits.push(edit.clone());
        }
    }
    vec![Fix { title: solve.smallest_fitting_combination.join(" + "), applicability: Applicability::Unsafe, edits }]
}

/// The key most responsible for the peak: the first value a lever of the biggest saving
/// changes, else the micro batch, the sequence length or the model key, else the start of
/// the document (a key a lever only adds has no place yet).
pub(super) fn primary_span(ctx: &Context, estimate: &Estimate) -> Span {
    let lever_edit = estimate
        .levers
        .iter()
        .flat_map(|l| &l.fixes)
        .flat_map(|f| &f.edits)
        .map(|e| e.span)
        .find(|span| !span.is_empty());
    let plan = ctx.plan;
    lever_edit
        .or_else(|| plan.and_then(|p| p.micro_batch_size.as_ref()).and_then(|s| s.key_span()))
        .or_else(|| plan.and_then(|p| p.max_seq_length.as_ref()).and_then(|s| s.key_span()))
        .or_else(|| plan.and_then(|p| p.model.as_ref()).and_then(|s| s.key_span()))
        .unwrap_or_default()
}

/// One line per component, largest first: `activations 9.81 GiB (backward)`.
pub(super) fn breakdown(estimate: &Estimate) -> Vec<String> {
    let mut components: Vec<_> = estimate.components.iter().filter(|c| c.bytes > 0).collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    components.iter().map(|c| format!("{} {} ({})", c.name, format_bytes(c.bytes), c.phase.as_str())).collect()
}
