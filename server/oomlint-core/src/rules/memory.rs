//! Helpers shared by the memory rules: where to place a finding and how to word sizes.

use super::Context;
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::estimate::{format_bytes, Component, Estimate};
use crate::plan::{Plan, Sourced};
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

/// Where a memory finding points and why: the key of the file that sets the largest
/// component it controls.
pub(super) struct Culprit {
    pub(crate) span: Span,
    /// E.g. "`micro_batch_size` scales activations (13.74 GiB), the largest part"; empty
    /// when no component's key is in the file.
    pub(crate) why: String,
}

/// The key most responsible for the peak: going down the components, largest first, the
/// first whose size a key in the file controls (the micro batch or the sequence length for
/// what grows with tokens, the model for the weights, the optimizer for its state, the
/// method for gradients, vLLM's fraction for its reservation); else the model key, else the
/// first value a lever changes, else the start of the document. Where the value is set
/// before its key (a script's constant, a notebook's earlier cell) the finding marks the
/// value: that is where the levers' edits go, and a notebook cell keeps only the fixes
/// whose edits lie in it.
pub(super) fn culprit(ctx: &Context, estimate: &Estimate) -> Culprit {
    let largest = components(estimate);
    let plan = ctx.plan;
    // A key of this file first; else one of a file it is read with (the config its launch names).
    let in_file = |(key, _): &(Span, Span)| key.end <= ctx.text.len();
    let found = plan.and_then(|plan| {
        let keyed =
            || largest.iter().enumerate().filter_map(|(rank, c)| Some((rank, *c, controlling_key(plan, c.name)?)));
        keyed().find(|(_, _, spans)| in_file(spans)).or_else(|| keyed().next())
    });
    if let Some((rank, component, (key, value))) = found {
        let name = ctx.source(key).trim_matches(['"', '\'', '\\']);
        let verb = if TOKEN_SCALED.contains(&component.name) { "scales" } else { "sets" };
        let why = format!(
            "`{name}` {verb} {} ({}), the largest part{}",
            component.name,
            format_bytes(component.bytes),
            if rank == 0 { "" } else { " a key in this file controls" }
        );
        let span = if value.start < key.start { value } else { key };
        return Culprit { span, why };
    }
    let lever_edit = estimate
        .levers
        .iter()
        .flat_map(|l| &l.fixes)
        .flat_map(|f| &f.edits)
        .map(|e| e.span)
        .find(|span| !span.is_empty());
    let span = plan.and_then(|p| p.model.as_ref()).and_then(|s| s.key_span()).or(lever_edit).unwrap_or_default();
    Culprit { span, why: String::new() }
}

/// Components whose size follows the tokens of a micro batch.
const TOKEN_SCALED: &[&str] = &[
    "activations",
    "logits-loss",
    "logits-retained",
    "backward-temporaries",
    "quantized-linear-inputs",
    "retained-4bit-inputs",
    "lm-head-tile",
];

/// The key of the file that sets `component`'s size and its value, if the file sets it.
fn controlling_key(plan: &Plan, component: &str) -> Option<(Span, Span)> {
    fn spans<T>(field: Option<&Sourced<T>>) -> Option<(Span, Span)> {
        let field = field?;
        field.key_span().zip(field.value_span())
    }
    let vllm = plan.rl.as_ref().and_then(|rl| rl.vllm.as_ref());
    match component {
        c if TOKEN_SCALED.contains(&c) => {
            // A micro batch of 1 cannot shrink: the tokens per sequence are the lever then.
            let batch = plan.micro_batch_size.as_ref().filter(|b| b.value > 1);
            spans(batch)
                .or_else(|| spans(plan.max_seq_length.as_ref()))
                .or_else(|| spans(plan.micro_batch_size.as_ref()))
        }
        "weights"
        | "dequantization-buffer"
        | "autocast-weight-copies"
        | "embedding-gradient"
        | "gathered-blocks"
        | "gathered-parameters"
        | "gathered-root"
        | "reference-model" => spans(plan.model.as_ref()),
        "optimizer" | "optimizer-temporaries" | "paged-optimizer-resident" => spans(plan.optimizer.as_ref()),
        "gradients" | "trainable" | "master-weights" | "unsharded-gradients" | "root-gradient" | "head-gradient" => {
            spans(plan.method.as_ref())
        }
        "vllm-reservation" => spans(vllm.map(|v| &v.gpu_memory_utilization)),
        "kv-cache" => spans(plan.rl.as_ref().map(|rl| &rl.max_completion_length)),
        _ => None,
    }
}

/// The components with bytes, largest first.
fn components(estimate: &Estimate) -> Vec<&Component> {
    let mut components: Vec<_> = estimate.components.iter().filter(|c| c.bytes > 0).collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    components
}

/// The largest parts as a phrase: `activations 13.74 GiB (forward), weights 12.55 GiB (forward)`.
pub(super) fn largest_parts(estimate: &Estimate, count: usize) -> String {
    let parts = components(estimate).into_iter().take(count);
    parts.map(|c| format!("{} {} ({})", c.name, format_bytes(c.bytes), c.phase.as_str())).collect::<Vec<_>>().join(", ")
}

/// The note under a memory finding: why its key is marked, then the components as
/// `oomlint estimate` lists them (largest first, with the phase where each is largest),
/// those under 1 % of the peak summed in one row.
pub(super) fn breakdown_note(culprit: &Culprit, estimate: &Estimate) -> String {
    let all = components(estimate);
    let small = |c: &Component| (c.bytes as f64) < 0.01 * estimate.peak.device_bytes as f64;
    let folded = all.iter().filter(|c| small(c)).count();
    let shown = if folded > 1 { all.len() - folded } else { all.len() };
    let width = all.iter().take(shown).map(|c| c.name.len()).max().unwrap_or(0).max(8);
    let row = |name: &str, bytes: u64, phase: &str| format!("\n  {name:<width$}  {:>10}  {phase}", format_bytes(bytes));
    let mut out = String::new();
    if !culprit.why.is_empty() {
        out.push_str(&culprit.why);
        out.push('\n');
    }
    out.push_str(&format!("breakdown, largest first (the peak is in the {} phase):", estimate.peak.phase.as_str()));
    for c in all.iter().take(shown) {
        out.push_str(&row(c.name, c.bytes, c.phase.as_str()));
    }
    if shown < all.len() {
        let rest: u64 = all[shown..].iter().map(|c| c.bytes).sum();
        out.push_str(row(&format!("{folded} more"), rest, "").trim_end());
    }
    out
}
