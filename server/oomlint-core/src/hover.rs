//! Hover on a key: its documentation, and for keys that move memory the estimate's
//! breakdown with what this key costs (the peak if its value were halved or doubled,
//! or switched for booleans) and the levers that edit it.

use crate::analysis::{analyze_text, Analysis, Options};
use crate::diagnostic::Edit;
use crate::estimate::breakdown::{gib, markdown};
use crate::estimate::Estimate;
use crate::format::{python, Format};
use crate::rules;
use crate::schema::docs::property_markdown;
use crate::schema::{self, property_doc, PropertyDoc};
use crate::span::Span;
use crate::suppression;
use crate::syntax::locate::{entry_at, Located};
use crate::syntax::{Entry, Literal, ScalarKind};
use serde_json::Value;

/// What a hover needs: the analysis, the options it ran with (what-if analyses rerun with
/// them), and the free share of the GPU the user asks for.
pub struct Hovered<'a> {
    pub analysis: &'a Analysis,
    pub options: &'a Options,
    pub headroom: Option<f64>,
}

/// The Markdown shown for the key under `offset`, and the key's span.
pub fn hover(document: &Hovered<'_>, offset: usize) -> Option<(String, Span)> {
    let analysis = document.analysis;
    if let Some(found) = suppressed_rule(document, offset) {
        return Some(found);
    }
    if analysis.format == Format::Unknown {
        return None;
    }
    let Located { path, entry } = entry_at(&analysis.document, offset)?;
    let mut out = format!("**`{}`** · {}", path.join("."), analysis.format.name());
    let doc = property_doc(analysis.format, &path)
        .or_else(|| keyword_doc(document, entry.key_span))
        .or_else(|| launch_doc(document, &path));
    if let Some(doc) = &doc {
        let text = property_markdown(doc);
        if !text.is_empty() {
            out.push_str("\n\n");
            out.push_str(&text);
        }
    }
    if let Some(estimate) = &analysis.estimate {
        let enum_values = doc.as_ref().map_or(&[][..], |d| &d.enum_values[..]);
        let costs = costs(document, entry, enum_values, estimate);
        let levers = levers_on(entry, estimate);
        if !costs.is_empty() || !levers.is_empty() || sets_plan_field(document, entry) {
            out.push_str("\n\n---\n\n");
            out.push_str(&markdown(estimate, analysis.gpu.as_ref(), document.headroom));
            if let Some(arch) = analysis.model.as_ref().and_then(|m| m.architecture()) {
                out.push_str(&format!("\n\n**Architecture** {}", arch.provenance(false)));
            }
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

/// In a Python script, the documentation of the keyword argument whose keyword is `key`
/// (loader, PEFT and bitsandbytes keywords have no schema of their own).
fn keyword_doc(document: &Hovered<'_>, key: Span) -> Option<PropertyDoc> {
    let analysis = document.analysis;
    let (callee, name) = python::script(&analysis.document)?
        .calls
        .iter()
        .find_map(|call| call.args.iter().find(|a| a.key_span == key).map(|a| (call.callee, a.name.clone())))?;
    schema::keywords::keywords(callee).into_iter().find(|doc| doc.name == name)
}

/// In a launch script, the documentation of a verl override or an OpenRLHF flag (their
/// tables, not a schema, document them).
fn launch_doc(document: &Hovered<'_>, path: &[&str]) -> Option<PropertyDoc> {
    let analysis = document.analysis;
    schema::flags::flag_doc(analysis.format, analysis.plan.as_deref(), &path.join("."))
}

/// The documentation of the rule named at `offset` inside `# oomlint: ignore[...]`.
fn suppressed_rule(document: &Hovered<'_>, offset: usize) -> Option<(String, Span)> {
    let analysis = document.analysis;
    let suppressions = suppression::parse(&analysis.text, &analysis.document.comments, &analysis.line_index);
    let code = suppressions.iter().flat_map(|s| &s.codes).find(|c| c.span.start <= offset && offset <= c.span.end)?;
    let rule = rules::find(&code.text)?;
    Some((format!("**{}** · `{}`\n\n{}", rule.code, rule.name, rule.doc()), code.span))
}

/// Values to try in place of the entry's, each with its label: halved and doubled
/// numbers, the other boolean, and the other values of a string enum.
fn variations(entry: &Entry, enum_values: &[Value]) -> Vec<(String, Literal)> {
    let Some(scalar) = entry.value.as_scalar() else { return Vec::new() };
    let halve_double = |half: Literal, double: Option<Literal>| {
        let mut out = vec![(format!("halved ({half})"), half)];
        out.extend(double.map(|d| (format!("doubled ({d})"), d)));
        out
    };
    match scalar.kind {
        ScalarKind::Int(n) if n >= 2 => {
            halve_double(Literal::Int((n / 2).into()), n.checked_mul(2).map(|d| Literal::Int(d.into())))
        }
        ScalarKind::Int(1) => vec![("doubled (2)".into(), Literal::Int(2))],
        // A fraction (vLLM's memory share) is not doubled past 1.
        ScalarKind::Float(f) if f > 0.0 => {
            halve_double(Literal::Float(f / 2.0), (f > 1.0 || f * 2.0 <= 1.0).then_some(Literal::Float(f * 2.0)))
        }
        ScalarKind::Bool(b) => vec![(format!("set to {}", !b), Literal::Bool(!b))],
        ScalarKind::Str => enum_values
            .iter()
            .filter_map(Value::as_str)
            .filter(|v| *v != scalar.text)
            .take(MAX_ALTERNATIVES)
            .map(|v| (format!("`{v}`"), Literal::Str(v.to_string())))
            .collect(),
        _ => Vec::new(),
    }
}

/// At most this many other enum values are tried (each is one more analysis).
const MAX_ALTERNATIVES: usize = 8;

/// The change of the device peak for each variation, e.g. `halved (1): −2.10 GiB`
/// (enum values that change nothing are left out); empty when none changes it.
fn costs(document: &Hovered<'_>, entry: &Entry, enum_values: &[Value], estimate: &Estimate) -> Vec<String> {
    let analysis = document.analysis;
    let language = analysis.document.language;
    let is_string = entry.value.as_scalar().is_some_and(|s| s.kind == ScalarKind::Str);
    let mut out = Vec::new();
    let mut any_change = false;
    for (label, value) in variations(entry, enum_values) {
        // Each value spelled as the file writes it (a Python `True`, a YAML `true`).
        let edit = match &value {
            Literal::Str(s) => Some(Edit::replace_keeping_quotes(&analysis.text, entry.value.span, s, language)),
            other => Edit::set(entry.value.span, other, language),
        };
        let Some(edit) = edit else { continue };
        let mut text = analysis.text.clone();
        text.replace_range(edit.span.start..edit.span.end, &edit.content);
        let varied = analyze_text(&analysis.path, text, document.options);
        let Some(other) = varied.estimate else { continue };
        let delta = gib(other.peak.device_bytes) - gib(estimate.peak.device_bytes);
        let changes = delta.abs() >= 0.005;
        any_change |= changes;
        if is_string && !changes {
            continue;
        }
        let sign = if delta < 0.0 { '−' } else { '+' };
        out.push(format!("{label}: {sign}{:.2} GiB", delta.abs()));
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
fn sets_plan_field(document: &Hovered<'_>, entry: &Entry) -> bool {
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
