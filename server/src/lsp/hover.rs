//! Hover on a key: its documentation, and for keys that move memory the estimate's
//! breakdown with what this key costs (the peak if its value were halved or doubled,
//! or switched for booleans) and the levers that edit it.

use super::breakdown::{gib, markdown};
use super::docs::property_markdown;
use super::locate::{entry_at, Located};
use super::state::OpenDocument;
use crate::analysis::{analyze_text, Options};
use crate::estimate::Estimate;
use crate::format::Format;
use crate::schema::property_doc;
use crate::span::Span;
use crate::syntax::{Entry, ScalarKind};
use serde_json::Value;

/// The Markdown shown for the key under `offset`, and the key's span.
pub fn hover(
    document: &OpenDocument,
    offset: usize,
    options: &Options,
    headroom: Option<f64>,
) -> Option<(String, Span)> {
    let analysis = &document.analysis;
    if analysis.format == Format::Unknown {
        return None;
    }
    let Located { path, entry } = entry_at(&analysis.document, offset)?;
    let mut out = format!("**`{}`** · {}", path.join("."), analysis.format.name());
    if let Some(doc) = property_doc(analysis.format, &path) {
        let text = property_markdown(&doc);
        if !text.is_empty() {
            out.push_str("\n\n");
            out.push_str(&text);
        }
    }
    if let Some(estimate) = &analysis.estimate {
        let costs = costs(document, entry, estimate, options);
        let levers = levers_on(entry, estimate);
        if !costs.is_empty() || !levers.is_empty() || sets_plan_field(document, entry) {
            out.push_str("\n\n---\n\n");
            out.push_str(&markdown(estimate, analysis.gpu.as_ref(), headroom));
            if !costs.is_empty() {
                out.push_str(&format!("\n\n**This key:** {}", costs.join(" · ")));
            }
            for lever in levers {
                out.push_str(&format!("\n\n**Lever:** {lever}"));
            }
        }
    }
    Some((out, entry.key_span))
}

/// Values to try in place of the entry's: halved and doubled numbers, the other boolean.
fn variations(entry: &Entry) -> Vec<(&'static str, String)> {
    let Some(scalar) = entry.value.as_scalar() else { return Vec::new() };
    match scalar.kind {
        ScalarKind::Int(n) if n >= 2 => vec![("halved", (n / 2).to_string()), ("doubled", (n * 2).to_string())],
        ScalarKind::Int(1) => vec![("doubled", "2".into())],
        ScalarKind::Float(f) if f > 0.0 => {
            let mut out = vec![("halved", format!("{}", f / 2.0))];
            if f > 1.0 || f * 2.0 <= 1.0 {
                out.push(("doubled", format!("{}", f * 2.0)));
            }
            out
        }
        ScalarKind::Bool(b) => vec![("set to", (!b).to_string())],
        _ => Vec::new(),
    }
}

/// The change of the device peak for each variation, e.g. `halved (1): −2.10 GiB`.
fn costs(document: &OpenDocument, entry: &Entry, estimate: &Estimate, options: &Options) -> Vec<String> {
    let analysis = &document.analysis;
    let span = entry.value.span;
    let mut out = Vec::new();
    let mut any_change = false;
    for (label, value) in variations(entry) {
        let mut text = analysis.text.clone();
        text.replace_range(span.start..span.end, &value);
        let varied = analyze_text(&analysis.path, text, options);
        let Some(other) = varied.estimate else { continue };
        let delta = gib(other.peak.device_bytes) - gib(estimate.peak.device_bytes);
        any_change |= delta.abs() >= 0.005;
        let sign = if delta < 0.0 { '−' } else { '+' };
        out.push(format!("{label} ({value}): {sign}{:.2} GiB", delta.abs()));
    }
    if any_change {
        out
    } else {
        Vec::new()
    }
}

/// Levers whose edits touch this entry's value.
fn levers_on(entry: &Entry, estimate: &Estimate) -> Vec<String> {
    estimate
        .levers
        .iter()
        .filter(|l| l.fixes.iter().flat_map(|f| &f.edits).any(|e| e.span == entry.value.span))
        .map(|l| format!("{}: saves {:.2} GiB", l.title, gib(l.saves_bytes)))
        .collect()
}

/// Whether the plan took a value from this key (model, precision, optimizer…).
fn sets_plan_field(document: &OpenDocument, entry: &Entry) -> bool {
    let Some(plan) = &document.analysis.plan else { return false };
    let Ok(value) = serde_json::to_value(plan) else { return false };
    let mut stack = vec![&value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                let key = map.get("key").and_then(|k| Some((k.get("start")?.as_u64()?, k.get("end")?.as_u64()?)));
                if map.get("kind").and_then(Value::as_str) == Some("file")
                    && key == Some((entry.key_span.start as u64, entry.key_span.end as u64))
                {
                    return true;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}
