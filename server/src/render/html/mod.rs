//! `oomlint estimate --format html`: one self-contained page (inline style and SVG, no
//! script, nothing fetched; its content security policy refuses all loads). The charts come
//! from the core (`estimate::chart`); this leaf lays out the page around them and turns
//! lever edits into diffs. Every string from the file, the model or the catalog is escaped.

mod diff;

use super::estimate::{count, gib, verdict, what_fits};
use crate::analysis::Analysis;
use crate::diagnostic::Fix;
use crate::estimate::chart::{self, escape};
use crate::estimate::{format_bytes, Estimate, Lever, Verdict};
use diff::Line;
use std::fmt::Write;

const PAGE_STYLE: &str = include_str!("page.css");

/// The verdict as JSON names it (`fit.verdict`), used as the page's class and data attribute.
fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Fits => "fits",
        Verdict::Tight => "tight",
        Verdict::MayExceed => "may-exceed",
        Verdict::Exceeds => "exceeds",
    }
}

pub fn page(analysis: &Analysis, estimate: &Estimate) -> String {
    let path = analysis.path.display().to_string();
    let arch = analysis.model.as_ref().and_then(|m| m.architecture());
    let model = arch.map_or("?", |a| a.name.as_str());
    let gpu = analysis.gpu.as_ref();
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{} — oomlint memory estimate</title>
<style>
{PAGE_STYLE}{}</style>
</head>
<body>
<header>
<h1>Memory estimate: <code>{}</code></h1>
<dl class="facts">
<dt>format</dt><dd>{}</dd>
<dt>model</dt><dd>{} — {} parameters, {} trainable</dd>
"#,
        escape(&path),
        chart::STYLE,
        escape(&path),
        escape(analysis.format.name()),
        escape(model),
        count(estimate.parameters),
        count(estimate.trainable_parameters),
    );
    if let Some(arch) = arch {
        let _ = writeln!(s, "<dt>architecture</dt><dd>{}</dd>", escape(&arch.provenance(true)));
    }
    match gpu {
        Some(g) => {
            let _ = writeln!(s, "<dt>GPU</dt><dd>{} — {}</dd>", escape(&g.name), format_bytes(g.memory_bytes));
        }
        None => s.push_str("<dt>GPU</dt><dd>none given (<code>--gpu NAME</code>): no verdict</dd>\n"),
    }
    s.push_str("</dl>\n");
    if let (Some(fit), Some(g)) = (estimate.fit, gpu) {
        let (words, headroom) = verdict(fit);
        let name = verdict_name(fit.verdict);
        let _ = writeln!(
            s,
            r#"<p class="verdict {name}" data-verdict="{name}"><strong>{words}</strong> on the {}: {} on the device of {}, {}</p>"#,
            escape(&g.name),
            format_bytes(estimate.peak.device_bytes),
            format_bytes(g.memory_bytes),
            escape(&headroom)
        );
    }
    s.push_str("</header>\n");
    views(&mut s, estimate, analysis);
    timeline(&mut s, estimate, analysis);
    world_sizes(&mut s, estimate, analysis);
    components(&mut s, estimate);
    levers(&mut s, estimate, analysis);
    assumed(&mut s, estimate);
    let _ = write!(
        s,
        "<footer>oomlint {} · a static estimate: nothing was run.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    s
}

fn views(s: &mut String, estimate: &Estimate, analysis: &Analysis) {
    let peak = &estimate.peak;
    let (low, high) = chart::band(estimate);
    let _ = write!(
        s,
        r#"<section id="views">
<h2>The peak in three views</h2>
<figure>{}</figure>
<table>
<tr><th>view</th><th>GiB</th><th>what it counts</th></tr>
<tr><td>allocated</td><td class="num">{:.2}</td><td>what <code>torch.cuda.max_memory_allocated()</code> reports</td></tr>
<tr><td>reserved</td><td class="num">{:.2}</td><td>plus the caching allocator's cached blocks (<code>max_memory_reserved()</code>)</td></tr>
<tr><td>device</td><td class="num"><span data-testid="peak-device-gib">{:.2}</span></td><td>plus the CUDA context and what lives outside PyTorch: what <code>nvidia-smi</code> and an out-of-memory error see</td></tr>
</table>
<p class="band">Uncertainty band of the device view: <span data-band="low">{:+.0} %</span> / <span data-band="high">{:+.0} %</span>, from <span data-band-gib="low">{:.2}</span> to <span data-band-gib="high">{:.2}</span> GiB.</p>
"#,
        chart::views(estimate, analysis.gpu.as_ref()),
        gib(peak.allocated_bytes),
        gib(peak.reserved_bytes),
        gib(peak.device_bytes),
        estimate.band.0 * 100.0,
        estimate.band.1 * 100.0,
        gib(low),
        gib(high),
    );
    if let Some(solve) = &estimate.solve {
        s.push_str("<h3>What fits (with 10 % headroom)</h3>\n<ul>\n");
        for line in what_fits(solve) {
            let _ = writeln!(s, "<li>{}</li>", escape(&line));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</section>\n");
}

fn timeline(s: &mut String, estimate: &Estimate, analysis: &Analysis) {
    s.push_str(
        "<section id=\"phases\">\n<h2>Memory by phase</h2>\n<p class=\"note\">What the allocator holds in each phase of a step, \
         by component; the peak phase adds the allocator's cache and what lives outside PyTorch, up to the device view.</p>\n",
    );
    for svg in chart::phases(estimate, analysis.gpu.as_ref()) {
        let _ = writeln!(s, "<figure>{svg}</figure>");
    }
    s.push_str("</section>\n");
}

fn world_sizes(s: &mut String, estimate: &Estimate, analysis: &Analysis) {
    let Some(svg) = chart::world_sizes(estimate, analysis.gpu.as_ref()) else {
        return;
    };
    let _ = write!(
        s,
        "<section id=\"world-sizes\">\n<h2>On more GPUs</h2>\n<p class=\"note\">The estimate assumed one GPU; \
         what each GPU would hold if the launch set more (device view).</p>\n<figure>{svg}</figure>\n\
         <table>\n<tr><th>GPUs</th><th>GiB per GPU</th></tr>\n"
    );
    for w in &estimate.per_world_size {
        let _ =
            writeln!(s, "<tr><td class=\"num\">{}</td><td class=\"num\">{:.2}</td></tr>", w.gpus, gib(w.device_bytes));
    }
    s.push_str("</table>\n</section>\n");
}

fn components(s: &mut String, estimate: &Estimate) {
    s.push_str(
        "<section id=\"components\">\n<h2>Components</h2>\n<table>\n\
         <tr><th>component</th><th>GiB</th><th>phase</th><th>provenance</th><th>formula</th></tr>\n",
    );
    let mut components: Vec<_> = estimate.components.iter().filter(|c| c.bytes > 0).collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    for c in components {
        let provenance = serde_json::to_value(c.provenance).ok().and_then(|v| v.as_str().map(str::to_string));
        let _ = writeln!(
            s,
            r#"<tr><td>{}</td><td class="num">{:.2}</td><td>{}</td><td>{}</td><td class="formula">{}</td></tr>"#,
            escape(c.name),
            gib(c.bytes),
            c.phase.as_str(),
            escape(&provenance.unwrap_or_default()),
            escape(&c.formula)
        );
    }
    s.push_str("</table>\n</section>\n");
}

fn levers(s: &mut String, estimate: &Estimate, analysis: &Analysis) {
    if estimate.levers.is_empty() {
        return;
    }
    s.push_str("<section id=\"levers\">\n<h2>Levers, ranked by GiB saved</h2>\n<ol class=\"levers\">\n");
    for l in &estimate.levers {
        lever(s, l, analysis);
    }
    s.push_str("</ol>\n</section>\n");
}

fn lever(s: &mut String, lever: &Lever, analysis: &Analysis) {
    let _ = writeln!(
        s,
        r#"<li data-saves-bytes="{}"><p><strong class="saves">-{:.2} GiB</strong> {} <span class="meta">[{}; {}]</span></p>"#,
        lever.saves_bytes,
        gib(lever.saves_bytes),
        escape(&lever.title),
        lever.phase.as_str(),
        escape(&lever.side_effect)
    );
    if lever.fixes.is_empty() {
        s.push_str("<p class=\"note\">The file does not write what this lever changes: no edit.</p>\n");
    }
    for fix in &lever.fixes {
        edits(s, fix, &lever.title, analysis);
    }
    s.push_str("</li>\n");
}

/// A fix's title (when it says more than its lever's) and safety, and its edits as a diff.
fn edits(s: &mut String, fix: &Fix, lever_title: &str, analysis: &Analysis) {
    let applicability = serde_json::to_value(fix.applicability).ok().and_then(|v| v.as_str().map(str::to_string));
    let title = if fix.title == lever_title { String::new() } else { format!("{} ", escape(&fix.title)) };
    let _ = writeln!(
        s,
        r#"<p class="fix">{title}<span class="applicability">{} fix</span></p>"#,
        escape(&applicability.unwrap_or_default())
    );
    // One diff per file: a launch's fix may edit the config it names.
    let files = analysis.edits_by_file(&fix.edits).unwrap_or_default();
    let diffs: Option<Vec<_>> = files
        .iter()
        .filter(|f| !f.edits.is_empty())
        .map(|f| match f.linked {
            Some(linked) => Some((linked.path.clone(), diff::unified(&linked.text, &f.edits)?)),
            None => Some((analysis.path.display().to_string(), diff::unified(&analysis.text, &f.edits)?)),
        })
        .collect();
    let Some(diffs) = diffs.filter(|d| !d.is_empty()) else {
        s.push_str("<p class=\"note\">Its edits do not apply to this text.</p>\n");
        return;
    };
    for (path, lines) in diffs {
        let path = escape(&path);
        let _ = write!(
            s,
            "<pre class=\"diff\"><code><span class=\"file\">--- {path}\n</span><span class=\"file\">+++ {path}\n</span>"
        );
        for line in lines {
            let (class, mark, text) = match &line {
                Line::Hunk(t) => ("hunk", "", t),
                Line::Context(t) => ("ctx", " ", t),
                Line::Removed(t) => ("del", "-", t),
                Line::Added(t) => ("add", "+", t),
            };
            let _ = write!(s, "<span class=\"{class}\">{mark}{}\n</span>", escape(text));
        }
        s.push_str("</code></pre>\n");
    }
}

fn assumed(s: &mut String, estimate: &Estimate) {
    s.push_str("<section id=\"assumed\">\n<h2>Assumed</h2>\n");
    if estimate.missing_inputs.is_empty() {
        s.push_str("<p>No input the estimate uses was missing from the file.</p>\n");
    } else {
        s.push_str("<ul>\n");
        for missing in &estimate.missing_inputs {
            let _ = writeln!(s, "<li>{}</li>", escape(missing));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</section>\n");
}
