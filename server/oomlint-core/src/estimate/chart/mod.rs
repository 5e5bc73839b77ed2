//! The estimate as charts: inline SVG for an HTML page (no XML namespace; styled by the
//! classes in [`STYLE`]), a pure function of the estimate and the card, so that every page
//! that shows an estimate (the CLI's report, a browser playground) draws the same chart.
//!
//! All charts of one estimate share one GiB scale, so their bars compare.

mod svg;

use super::phases::outside_allocator;
use super::{Estimate, TimelinePhase};
use crate::catalog::Gpu;
use svg::{gib, Chart, Marker, Row, Scale, Segment};

pub use svg::escape;

/// The charts' stylesheet: light and dark colour schemes, and print.
pub const STYLE: &str = include_str!("chart.css");

/// Component colours (`c0`…) are assigned in the estimate's component order, so one
/// component has one colour in every chart.
const PALETTE: usize = 12;

/// The largest value any chart draws: the scale every chart shares.
fn scale(estimate: &Estimate, gpu: Option<&Gpu>) -> Scale {
    let (_, high) = estimate.band;
    let values = [
        gpu.map_or(0, |g| g.memory_bytes),
        band_bytes(estimate.peak.device_bytes, high),
        estimate.peak.device_bytes,
        estimate.per_world_size.iter().map(|w| w.device_bytes).max().unwrap_or(0),
    ];
    Scale::up_to(values.into_iter().max().unwrap_or(0))
}

fn band_bytes(bytes: u64, relative: f64) -> u64 {
    (bytes as f64 * (1.0 + relative)).max(0.0) as u64
}

/// The device view's band in bytes: (low, high).
pub fn band(estimate: &Estimate) -> (u64, u64) {
    let (low, high) = estimate.band;
    (band_bytes(estimate.peak.device_bytes, low), band_bytes(estimate.peak.device_bytes, high))
}

fn capacity(gpu: Option<&Gpu>) -> Option<Marker> {
    gpu.map(|g| Marker {
        class: "capacity",
        label: format!("{} {}", g.name, gib(g.memory_bytes)),
        bytes: g.memory_bytes,
    })
}

/// One chart per phase of [`Estimate::timeline`], in its order: the components the
/// allocator holds in that phase, stacked largest first; in the peak phase, the allocator's
/// cache and what lives outside PyTorch on top, up to the device view, with its band. Each
/// has the card's capacity as a line and the peak's allocated bytes as a dashed line.
pub fn phases(estimate: &Estimate, gpu: Option<&Gpu>) -> Vec<String> {
    let scale = scale(estimate, gpu);
    estimate.timeline().iter().map(|step| phase(estimate, step, gpu, scale)).collect()
}

fn phase(estimate: &Estimate, step: &TimelinePhase, gpu: Option<&Gpu>, scale: Scale) -> String {
    let peak = &estimate.peak;
    let name = step.phase.as_str();
    let mut live: Vec<_> = estimate
        .components
        .iter()
        .enumerate()
        .filter(|(_, c)| !outside_allocator(c.name) && c.live_in.contains(&step.phase))
        .collect();
    live.sort_by_key(|(_, c)| std::cmp::Reverse(c.bytes));
    let mut segments: Vec<Segment> = live
        .iter()
        .map(|(i, c)| Segment { name: c.name.to_string(), bytes: c.bytes, class: format!("c{}", i % PALETTE) })
        .collect();
    let mut title = format!("{name}: {} allocated", gib(step.allocated_bytes));
    let mut row = Row { label: name.to_string(), segments: Vec::new(), value: gib(step.allocated_bytes), band: None };
    if step.peak {
        segments.extend(beyond_allocated(estimate));
        title.push_str(&format!(", {} on the device (the peak)", gib(peak.device_bytes)));
        row.value = format!("{} device", gib(peak.device_bytes));
        row.band = Some(band(estimate));
    }
    let legend = segments.iter().map(|s| (s.class.clone(), format!("{} {}", s.name, gib(s.bytes)))).collect();
    let description = describe(&segments, gpu);
    row.segments = segments;
    let markers = std::iter::once(Marker {
        class: "peak",
        label: format!("peak ({}) {} allocated", peak.phase.as_str(), gib(peak.allocated_bytes)),
        bytes: peak.allocated_bytes,
    })
    .chain(capacity(gpu))
    .collect();
    Chart {
        id: format!("oomlint-phase-{name}"),
        data: vec![("phase", name.to_string()), ("peak", step.peak.to_string())],
        title,
        description,
        rows: vec![row],
        markers,
        legend,
        scale,
    }
    .render()
}

/// The peak's reserved and device views beyond what is allocated: the allocator's cache, and
/// the CUDA context, NCCL and paged optimizer state (the components table names them).
fn beyond_allocated(estimate: &Estimate) -> Vec<Segment> {
    let peak = &estimate.peak;
    let cache = peak.reserved_bytes.saturating_sub(peak.allocated_bytes);
    let outside = peak.device_bytes.saturating_sub(peak.reserved_bytes);
    let mut out = Vec::new();
    if cache > 0 {
        out.push(Segment { name: "allocator cache".into(), bytes: cache, class: "reserved".into() });
    }
    if outside > 0 {
        out.push(Segment { name: "outside PyTorch".into(), bytes: outside, class: "device".into() });
    }
    out
}

fn describe(segments: &[Segment], gpu: Option<&Gpu>) -> String {
    let parts: Vec<String> = segments.iter().map(|s| format!("{} {}", s.name, gib(s.bytes))).collect();
    parts.join(", ") + &on_card(gpu)
}

fn on_card(gpu: Option<&Gpu>) -> String {
    gpu.map(|g| format!("; the {} holds {}", g.name, gib(g.memory_bytes))).unwrap_or_default()
}

/// The peak in the three views (allocated, reserved, device), the device view with its
/// band, against the card's capacity.
pub fn views(estimate: &Estimate, gpu: Option<&Gpu>) -> String {
    let peak = &estimate.peak;
    let (low, high) = band(estimate);
    let row = |label: &str, bytes: u64, class: &str| Row {
        label: label.to_string(),
        segments: vec![Segment { name: label.to_string(), bytes, class: format!("view-{class}") }],
        value: gib(bytes),
        band: None,
    };
    let mut device = row("device", peak.device_bytes, "device");
    device.band = Some((low, high));
    let title = format!("The peak ({}) in three views", peak.phase.as_str());
    let description = format!(
        "allocated {}, reserved {}, device {} (band {} to {})",
        gib(peak.allocated_bytes),
        gib(peak.reserved_bytes),
        gib(peak.device_bytes),
        gib(low),
        gib(high)
    );
    Chart {
        id: "oomlint-views".into(),
        data: vec![("chart", "views".into())],
        title,
        description: description + &on_card(gpu),
        rows: vec![
            row("allocated", peak.allocated_bytes, "allocated"),
            row("reserved", peak.reserved_bytes, "reserved"),
            device,
        ],
        markers: capacity(gpu).into_iter().collect(),
        legend: Vec::new(),
        scale: scale(estimate, gpu),
    }
    .render()
}

/// The device view per GPU on the world sizes the estimate tried ([`Estimate::per_world_size`]),
/// after the one GPU it assumed; None when it tried none.
pub fn world_sizes(estimate: &Estimate, gpu: Option<&Gpu>) -> Option<String> {
    if estimate.per_world_size.is_empty() {
        return None;
    }
    let row = |label: String, bytes: u64| Row {
        segments: vec![Segment { name: label.clone(), bytes, class: "view-device".into() }],
        label,
        value: gib(bytes),
        band: None,
    };
    let mut rows = vec![row("1 GPU".into(), estimate.peak.device_bytes)];
    rows.extend(estimate.per_world_size.iter().map(|w| row(format!("{} GPUs", w.gpus), w.device_bytes)));
    let parts: Vec<String> = rows.iter().map(|r| format!("{} {}", r.label, r.value)).collect();
    Some(
        Chart {
            id: "oomlint-world-sizes".into(),
            data: vec![("chart", "world-sizes".into())],
            title: "Device view per GPU on more GPUs".into(),
            description: parts.join(", ") + &on_card(gpu),
            rows,
            markers: capacity(gpu).into_iter().collect(),
            legend: Vec::new(),
            scale: scale(estimate, gpu),
        }
        .render(),
    )
}
