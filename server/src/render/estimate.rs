//! `oomlint estimate` output: a table with a bar per component, and JSON version 1.

use crate::analysis::Analysis;
use crate::estimate::{format_bytes, Estimate, Fit, Solve, Verdict};
use crate::render::json::fixes;
use serde_json::{json, Value};

const BAR_WIDTH: usize = 24;

/// A Unicode bar of `bytes` out of `total`, in eighths of a cell.
pub fn bar(bytes: u64, total: u64) -> String {
    if total == 0 {
        return String::new();
    }
    let eighths = ((bytes as f64 / total as f64) * (BAR_WIDTH * 8) as f64).round() as usize;
    let mut out = "█".repeat(eighths / 8);
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    out.push_str(PARTS[eighths % 8]);
    out
}

/// The first `max` characters of `text`, with an ellipsis when cut (full text in JSON).
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A parameter count with the unit that reads best: `140.6 B`, `4.02 B`, `16.5 M`, `8.4 K`.
pub(crate) fn count(n: u64) -> String {
    let n = n as f64;
    if n >= 1e11 {
        format!("{:.1} B", n / 1e9)
    } else if n >= 1e9 {
        format!("{:.2} B", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1} M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1} K", n / 1e3)
    } else {
        format!("{n}")
    }
}

pub(crate) fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

pub fn table(analysis: &Analysis, estimate: &Estimate) -> String {
    let mut out = String::new();
    let model = analysis.model.as_ref().and_then(|m| m.architecture()).map_or("?", |a| a.name.as_str());
    out.push_str(&format!(
        "{} ({}): {model}, {} parameters, {} trainable\n\n",
        analysis.path.display(),
        analysis.format,
        count(estimate.parameters),
        count(estimate.trainable_parameters)
    ));
    if let Some(arch) = analysis.model.as_ref().and_then(|m| m.architecture()) {
        out.push_str(&format!("  architecture {}\n\n", arch.provenance(false)));
    }
    let total = estimate.peak.device_bytes.max(1);
    let mut components: Vec<_> = estimate.components.iter().filter(|c| c.bytes > 0).collect();
    components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    for c in components {
        out.push_str(&format!(
            "  {:<24} {:>9.2} GiB  {:<24}  {:<14} {}\n",
            c.name,
            gib(c.bytes),
            bar(c.bytes, total),
            c.phase.as_str(),
            shorten(&c.formula, 72)
        ));
    }
    out.push_str("\ntimeline (allocated in each phase):\n");
    for step in estimate.timeline() {
        out.push_str(&format!(
            "  {:<24} {:>9.2} GiB  {}{}\n",
            step.phase.as_str(),
            gib(step.allocated_bytes),
            bar(step.allocated_bytes, total),
            if step.peak { "  ◀ peak" } else { "" }
        ));
    }
    let (low, high) = estimate.band;
    out.push_str(&format!(
        "\npeak phase: {}\n  allocated {:>8.2} GiB   (torch.cuda.max_memory_allocated)\n  reserved  {:>8.2} GiB   (+ allocator cache)\n  device    {:>8.2} GiB   (+ CUDA context; {:+.0} % / {:+.0} %)\n",
        estimate.peak.phase.as_str(),
        gib(estimate.peak.allocated_bytes),
        gib(estimate.peak.reserved_bytes),
        gib(estimate.peak.device_bytes),
        low * 100.0,
        high * 100.0
    ));
    if let (Some(fit), Some(gpu)) = (estimate.fit, analysis.gpu.as_ref()) {
        let (verdict, headroom) = verdict(fit);
        out.push_str(&format!("\n{}: {} — {verdict}, {headroom}\n", gpu.name, format_bytes(gpu.memory_bytes)));
        if let Some(note) = &gpu.note {
            out.push_str(&format!("  ({note})\n"));
        }
    }
    if !estimate.levers.is_empty() {
        out.push_str("\nlevers (ranked by GiB saved):\n");
        for lever in &estimate.levers {
            out.push_str(&format!(
                "  {:>9} GiB  {}  [{}; {}]\n",
                format!("-{:.2}", gib(lever.saves_bytes)),
                lever.title,
                lever.phase.as_str(),
                lever.side_effect
            ));
        }
    }
    if let Some(solve) = &estimate.solve {
        out.push_str("\nwhat fits (with 10 % headroom):\n");
        for line in what_fits(solve) {
            out.push_str(&format!("  {line}\n"));
        }
    }
    for missing in &estimate.missing_inputs {
        out.push_str(&format!("assumed: {missing}\n"));
    }
    for note in &estimate.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    if !estimate.per_world_size.is_empty() {
        let sizes: Vec<String> = estimate
            .per_world_size
            .iter()
            .map(|w| format!("{} GPUs {}", w.gpus, format_bytes(w.device_bytes)))
            .collect();
        out.push_str(&format!("per GPU on more GPUs (device view): {}\n", sizes.join(", ")));
    }
    out
}

/// The solver's answer, one line each. Its `fits` is the verdict's: at least 10 % of the GPU
/// free (worded as the editor's estimate page words it).
pub(crate) fn what_fits(solve: &Solve) -> Vec<String> {
    let micro = match solve.max_micro_batch {
        0 => "none (not even 1)".to_string(),
        n => n.to_string(),
    };
    let seq = match solve.max_seq_length {
        0 => "none".to_string(),
        n => n.to_string(),
    };
    let mut lines = vec![
        format!("largest micro batch that fits: {micro}"),
        format!("longest sequence that fits at this micro batch: {seq}"),
    ];
    if !solve.smallest_fitting_combination.is_empty() {
        lines.push(format!("fewest levers that fit together: {}", solve.smallest_fitting_combination.join(" + ")));
    } else if !solve.combination_fits {
        lines.push("no combination of the levers fits".to_string());
    }
    lines
}

/// The verdict in words, and the headroom (or what is missing).
pub(crate) fn verdict(fit: Fit) -> (&'static str, String) {
    let verdict = match fit.verdict {
        Verdict::Fits => "fits",
        Verdict::Tight => "tight (under 10 % headroom)",
        Verdict::MayExceed => "may exceed",
        Verdict::Exceeds => "exceeds",
    };
    let headroom = if fit.headroom_bytes >= 0 {
        format!("{} free", format_bytes(fit.headroom_bytes as u64))
    } else if fit.verdict == Verdict::MayExceed {
        format!(
            "{} short if a batch holds a sample of the maximum length; fits with shorter samples",
            format_bytes(fit.headroom_bytes.unsigned_abs())
        )
    } else {
        format!("{} short", format_bytes(fit.headroom_bytes.unsigned_abs()))
    };
    (verdict, headroom)
}

/// JSON version 1 of one estimate.
pub fn json(analysis: &Analysis, estimate: &Estimate) -> Value {
    let model = analysis.model.as_ref().and_then(|m| m.architecture());
    json!({
        "version": 1,
        "path": analysis.path.display().to_string(),
        "format": analysis.format.name(),
        "model": model.map(|m| json!({
            "name": m.name,
            "parameters": estimate.parameters,
            "source": m.provenance(true),
        })),
        "gpu": analysis.gpu.as_ref().map(|g| {
            let mut gpu = json!({"name": g.name, "memory_bytes": g.memory_bytes});
            if let Some(note) = &g.note {
                gpu["note"] = json!(note);
            }
            gpu
        }),
        "peak": {
            "phase": estimate.peak.phase.as_str(),
            "allocated_bytes": estimate.peak.allocated_bytes,
            "reserved_bytes": estimate.peak.reserved_bytes,
            "device_bytes": estimate.peak.device_bytes,
        },
        "band": {"low": estimate.band.0, "high": estimate.band.1},
        "components": estimate.components.iter().map(|c| json!({
            "name": c.name,
            "bytes": c.bytes,
            "phase": c.phase.as_str(),
            "formula": c.formula,
            "provenance": c.provenance,
        })).collect::<Vec<_>>(),
        "phases": estimate.timeline().into_iter().map(|t| json!({
            "phase": t.phase.as_str(),
            "allocated_bytes": t.allocated_bytes,
            "components": t.components,
            "peak": t.peak,
        })).collect::<Vec<_>>(),
        "fit": estimate.fit.map(|f| json!({"verdict": f.verdict, "headroom_bytes": f.headroom_bytes})),
        "levers": estimate.levers.iter().map(|l| json!({
            "title": l.title,
            "saves_bytes": l.saves_bytes,
            "phase": l.phase.as_str(),
            "side_effect": l.side_effect,
            "fixes": fixes(analysis, &l.fixes),
        })).collect::<Vec<_>>(),
        "solve": estimate.solve,
        "missing_inputs": estimate.missing_inputs,
        "notes": estimate.notes,
        "per_world_size": estimate.per_world_size,
    })
}
