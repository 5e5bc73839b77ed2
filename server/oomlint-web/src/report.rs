//! `analyze`: every file of the page's project as `check` sees it, and for the file in view
//! its estimate: the views, the band, the components, the phases, the levers with their
//! edits, and the charts the HTML report draws (`oomlint_core::estimate::chart`).

use crate::offsets::Utf16;
use crate::project::Project;
use crate::Request;
use oomlint_core::analysis::{analyze_bytes, Analysis, Options};
use oomlint_core::catalog::{resolve_gpu, Gpu};
use oomlint_core::diagnostic::{Diagnostic, Fix};
use oomlint_core::estimate::{chart, Estimate, Levers};
use oomlint_core::settings::SettingsError;
use oomlint_core::span::{ColumnUnit, Span};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

const GIB: f64 = (1u64 << 30) as f64;

pub(crate) fn analyze(request: &Request) -> Value {
    let gpu = match target_gpu(request) {
        Ok(gpu) => gpu,
        Err(error) => return json!({ "error": error }),
    };
    let project = Arc::new(Project::new(request.files.iter().map(|f| (f.name.as_str(), f.text.as_str()))));
    let mut files = Vec::new();
    let mut active = Value::Null;
    for file in &request.files {
        let path = Path::new(&file.name);
        let is_active = file.name == request.active;
        let options = match options(&project, path, gpu.clone(), is_active) {
            Ok(options) => options,
            Err(error) => {
                files.push(json!({ "name": file.name, "error": error.to_string(), "diagnostics": [] }));
                continue;
            }
        };
        if options.settings.excludes(path) {
            files.push(json!({ "name": file.name, "excluded": true, "diagnostics": [] }));
            continue;
        }
        let analysis = analyze_bytes(path, file.text.as_bytes(), &options);
        let offsets = Utf16::new(&analysis.text);
        if is_active {
            active = analysis.estimate.as_ref().map_or(Value::Null, |e| estimate(&analysis, e, &offsets));
        }
        files.push(file_report(&file.name, &analysis, &offsets));
    }
    json!({ "gpu": gpu.map(|g| g.name), "files": files, "estimate": active })
}

/// The GPU the page picked, as `--gpu` would take it.
pub(crate) fn target_gpu(request: &Request) -> Result<Option<Gpu>, String> {
    match request.gpu.as_deref().map(str::trim).filter(|g| !g.is_empty()).map(resolve_gpu) {
        Some(Err(unknown)) => Err(unknown.to_string()),
        Some(Ok(gpu)) => Ok(Some(gpu.clone())),
        None => Ok(None),
    }
}

/// The options `check --gpu` gives `path`: levers always for the file in view, which counts
/// as named on the command line (a file oomlint does not read is reported); the other tabs
/// are read as `check` reads a directory's files.
pub(crate) fn options(
    project: &Arc<Project>,
    path: &Path,
    gpu: Option<Gpu>,
    active: bool,
) -> Result<Options, SettingsError> {
    Ok(Options {
        gpu,
        levers: if active { Levers::Always } else { Levers::ForFindings },
        named_by_user: active,
        ..project.options(path)?
    })
}

fn file_report(name: &str, analysis: &Analysis, offsets: &Utf16) -> Value {
    let diagnostics: Vec<Value> = analysis.diagnostics.iter().map(|d| diagnostic(analysis, d, offsets)).collect();
    json!({
        "name": name,
        "format": analysis.format.name(),
        "language": format!("{:?}", analysis.document.language),
        "diagnostics": diagnostics,
    })
}

fn range(analysis: &Analysis, span: Span, offsets: &Utf16) -> Value {
    let at = analysis.line_index.position(&analysis.text, span.start, ColumnUnit::Char);
    json!({
        "from": offsets.units_at(span.start),
        "to": offsets.units_at(span.end),
        "line": at.line + 1,
        "column": at.column + 1,
    })
}

fn diagnostic(analysis: &Analysis, d: &Diagnostic, offsets: &Utf16) -> Value {
    let related: Vec<Value> =
        d.related.iter().map(|r| json!({ "range": range(analysis, r.span, offsets), "message": r.message })).collect();
    json!({
        "code": d.code,
        "rule": d.rule,
        "severity": d.severity,
        "message": d.message,
        "range": range(analysis, d.span, offsets),
        "related": related,
        "notes": d.notes,
        "fixes": fixes(analysis, &d.fixes, offsets),
    })
}

/// The fixes with their edits in UTF-16 offsets of the files they edit: an edit of another
/// tab (the config a launch names, or the launch that names the config) names it in `file`.
/// A fix with an edit in no open file is left out.
fn fixes(analysis: &Analysis, fixes: &[Fix], offsets: &Utf16) -> Vec<Value> {
    fixes
        .iter()
        .filter_map(|f| {
            let mut edits: Vec<Value> = Vec::new();
            for group in analysis.edits_by_file(&f.edits)? {
                let other = group.linked.map(|l| (crate::project::normal(Path::new(&l.path)), Utf16::new(&l.text)));
                let units = other.as_ref().map_or(offsets, |(_, u)| u);
                for e in &group.edits {
                    let mut edit = json!({ "from": units.units_at(e.span.start), "to": units.units_at(e.span.end), "insert": e.content });
                    if let Some((name, _)) = &other {
                        edit["file"] = json!(name.display().to_string());
                    }
                    edits.push(edit);
                }
            }
            Some(json!({ "title": f.title, "applicability": f.applicability, "edits": edits }))
        })
        .collect()
}

fn gib(bytes: u64) -> f64 {
    (bytes as f64 / GIB * 100.0).round() / 100.0
}

fn estimate(analysis: &Analysis, estimate: &Estimate, offsets: &Utf16) -> Value {
    let gpu = analysis.gpu.as_ref();
    let arch = analysis.model.as_ref().and_then(|m| m.architecture());
    let peak = &estimate.peak;
    let (low, high) = chart::band(estimate);
    let mut components: Vec<_> = estimate.components.iter().filter(|c| c.live_in.contains(&peak.phase)).collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    let components: Vec<Value> = components
        .iter()
        .map(|c| json!({ "name": c.name, "gib": gib(c.bytes), "formula": c.formula, "provenance": c.provenance }))
        .collect();
    let timeline: Vec<Value> = estimate
        .timeline()
        .iter()
        .map(|t| json!({ "phase": t.phase.as_str(), "allocated_gib": gib(t.allocated_bytes), "peak": t.peak }))
        .collect();
    let mut levers: Vec<_> = estimate.levers.iter().collect();
    levers.sort_by_key(|l| std::cmp::Reverse(l.saves_bytes));
    let levers: Vec<Value> = levers
        .iter()
        .map(|l| {
            json!({
                "title": l.title,
                "saves_gib": gib(l.saves_bytes),
                "phase": l.phase.as_str(),
                "side_effect": l.side_effect,
                "fixes": fixes(analysis, &l.fixes, offsets),
            })
        })
        .collect();
    json!({
        "model": arch.map(|a| json!({ "name": a.name, "provenance": a.provenance(true) })),
        "parameters": estimate.parameters,
        "trainable_parameters": estimate.trainable_parameters,
        "gpu": gpu.map(|g| json!({ "name": g.name, "gib": gib(g.memory_bytes), "note": g.note })),
        "verdict": estimate.fit.map(|f| f.verdict),
        "headroom_gib": estimate.fit.map(|f| (f.headroom_bytes as f64 / GIB * 100.0).round() / 100.0),
        "peak": {
            "phase": peak.phase.as_str(),
            "allocated_gib": gib(peak.allocated_bytes),
            "reserved_gib": gib(peak.reserved_bytes),
            "device_gib": gib(peak.device_bytes),
        },
        "band": { "low_gib": gib(low), "high_gib": gib(high), "relative": [estimate.band.0, estimate.band.1] },
        "components": components,
        "timeline": timeline,
        "levers": levers,
        "missing_inputs": estimate.missing_inputs,
        "notes": estimate.notes,
        "charts": {
            "phases": chart::phases(estimate, gpu),
            "views": chart::views(estimate, gpu),
            "world_sizes": chart::world_sizes(estimate, gpu),
        },
    })
}
