//! The memory estimate as editor text: the one-line summary and the Markdown breakdown.

use super::{Estimate, Fit, Verdict};
use crate::catalog::Gpu;

const GIB: f64 = (1u64 << 30) as f64;

/// Width of a full bar, in characters.
const BAR_WIDTH: usize = 20;

pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / GIB
}

/// A bar of `fraction` (0–1) of [`BAR_WIDTH`] characters, in eighths of a block.
pub fn bar(fraction: f64) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (fraction.clamp(0.0, 1.0) * (BAR_WIDTH * 8) as f64).round() as usize;
    let mut out = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        out.push(PARTS[eighths % 8]);
    }
    if out.is_empty() {
        out.push('▏');
    }
    out
}

/// The verdict, made stricter when the user asks for more free memory than the default.
pub fn verdict(fit: Fit, capacity: u64, headroom: Option<f64>) -> Verdict {
    match (fit.verdict, headroom) {
        (Verdict::Fits, Some(share)) if (fit.headroom_bytes as f64) < share * capacity as f64 => Verdict::Tight,
        (verdict, _) => verdict,
    }
}

fn verdict_text(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Fits => "fits",
        Verdict::Tight => "tight",
        Verdict::MayExceed => "does not fit at the maximum sample length",
        Verdict::Exceeds => "does not fit",
    }
}

/// One line for the top of the file, e.g. `≈ 17.2 GiB of 22.0 GiB on A10G — fits`.
pub fn summary(estimate: &Estimate, gpu: Option<&Gpu>, headroom: Option<f64>) -> String {
    let peak = gib(estimate.peak.device_bytes);
    match (gpu, estimate.fit) {
        (Some(gpu), Some(fit)) => format!(
            "≈ {peak:.1} GiB of {:.1} GiB on {} — {}",
            gib(gpu.memory_bytes),
            gpu.name,
            verdict_text(verdict(fit, gpu.memory_bytes, headroom))
        ),
        _ => format!("≈ {peak:.1} GiB peak ({}); set oomlint.gpu to judge the fit", estimate.peak.phase.as_str()),
    }
}

/// The per-component table of the peak phase, the timeline of phases, the totals and the verdict.
pub fn markdown(estimate: &Estimate, gpu: Option<&Gpu>, headroom: Option<f64>) -> String {
    let peak = &estimate.peak;
    let mut out = format!("**Peak ≈ {:.2} GiB** in the {} phase", gib(peak.device_bytes), peak.phase.as_str());
    if let (Some(gpu), Some(fit)) = (gpu, estimate.fit) {
        let free = fit.headroom_bytes as f64 / GIB;
        out.push_str(&format!(
            " of {:.2} GiB on {}: **{}** ({} {:.2} GiB)",
            gib(gpu.memory_bytes),
            gpu.name,
            verdict_text(verdict(fit, gpu.memory_bytes, headroom)),
            if free < 0.0 { "short by" } else { "free" },
            free.abs()
        ));
        if let Some(note) = &gpu.note {
            out.push_str(&format!("; {note}"));
        }
    }
    out.push_str("\n\n| component | GiB | |\n|---|---:|---|\n");
    let mut live: Vec<_> = estimate.components.iter().filter(|c| c.live_in.contains(&peak.phase)).collect();
    live.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    let scale = peak.device_bytes.max(1) as f64;
    for component in live {
        out.push_str(&format!(
            "| {} | {:.2} | `{}` |\n",
            component.name,
            gib(component.bytes),
            bar(component.bytes as f64 / scale)
        ));
    }
    out.push_str("\n**Timeline** (allocated in each phase)\n\n");
    for step in estimate.timeline() {
        let row = format!("{} {:.2} GiB", step.phase.as_str(), gib(step.allocated_bytes));
        out.push_str(&if step.peak { format!("- **{row}** ◀ peak\n") } else { format!("- {row}\n") });
    }
    let (low, high) = estimate.band;
    out.push_str(&format!(
        "\nallocated {:.2} GiB · reserved {:.2} GiB · device {:.2} GiB ({:+.0} %/{:+.0} %)",
        gib(peak.allocated_bytes),
        gib(peak.reserved_bytes),
        gib(peak.device_bytes),
        low * 100.0,
        high * 100.0
    ));
    for note in &estimate.notes {
        out.push_str(&format!("\n\n*{note}*"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_count_eighths() {
        assert_eq!(bar(1.0).chars().count(), BAR_WIDTH);
        assert_eq!(bar(0.5), "█".repeat(10));
        assert_eq!(bar(0.5 + 1.0 / 160.0), format!("{}▏", "█".repeat(10)));
        assert_eq!(bar(0.0), "▏");
        assert_eq!(bar(7.0).chars().count(), BAR_WIDTH);
    }

    #[test]
    fn user_headroom_tightens_the_verdict() {
        let fit = Fit { verdict: Verdict::Fits, headroom_bytes: 3 << 30 };
        assert_eq!(verdict(fit, 24 << 30, None), Verdict::Fits);
        assert_eq!(verdict(fit, 24 << 30, Some(0.2)), Verdict::Tight);
        assert_eq!(verdict(fit, 24 << 30, Some(0.1)), Verdict::Fits);
    }
}
