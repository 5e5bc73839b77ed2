//! Horizontal stacked-bar charts written as SVG text: rows of segments on one GiB scale,
//! vertical marker lines (the card's capacity, the peak), a band whisker and a legend.
//! Every string is escaped; coordinates are pure arithmetic on the bytes.

use std::fmt::Write;

/// Width of the drawing (the `viewBox`); the page scales it.
const WIDTH: f64 = 760.0;
/// Where the bars start (row labels sit to the left) and how wide they may grow; the
/// rest on the right holds each row's value label.
const PLOT_X: f64 = 120.0;
const PLOT_W: f64 = 540.0;
/// The title's baseline, the two lanes of marker labels, then the plot.
const TITLE_Y: f64 = 16.0;
const LANES_Y: [f64; 2] = [34.0, 48.0];
const PLOT_Y: f64 = 56.0;
const ROW_H: f64 = 24.0;
const ROW_GAP: f64 = 8.0;
const LEGEND_COLUMNS: usize = 3;
const LEGEND_ROW_H: f64 = 18.0;
/// Average width of one character of the 12 px labels, to tell whether a label fits its segment.
const CHAR_W: f64 = 6.6;

const GIB: f64 = (1u64 << 30) as f64;

/// Escapes text for XML and HTML content and for double- or single-quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// The GiB axis: a round tick step and the scale's end, a whole number of steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scale {
    step: f64,
    end: f64,
}

impl Scale {
    /// About six ticks (1, 2 or 5 times a power of ten GiB) up to `max_bytes` or beyond.
    pub(super) fn up_to(max_bytes: u64) -> Scale {
        let max = (max_bytes as f64 / GIB).max(0.1);
        let raw = max / 6.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(raw);
        // A hair below the quotient, so that 0.5 / 0.1 rounds to 5 steps, not 6.
        Scale { step, end: (max / step - 1e-9).ceil() * step }
    }

    fn x(self, bytes: u64) -> f64 {
        PLOT_X + (bytes as f64 / GIB / self.end).min(1.0) * PLOT_W
    }
}

/// One stacked part of a bar; `class` picks its fill (`c0`…`c11`, `reserved`, `device`).
pub(super) struct Segment {
    pub(super) name: String,
    pub(super) bytes: u64,
    pub(super) class: String,
}

pub(super) struct Row {
    pub(super) label: String,
    pub(super) segments: Vec<Segment>,
    /// Written after the bar's end.
    pub(super) value: String,
    /// Low and high end of the uncertainty band, drawn as a whisker across the bar.
    pub(super) band: Option<(u64, u64)>,
}

/// A vertical line across the rows with its label above them.
pub(super) struct Marker {
    /// `capacity` or `peak`.
    pub(super) class: &'static str,
    pub(super) label: String,
    pub(super) bytes: u64,
}

pub(super) struct Chart {
    /// Unique in the page: the ids of the title and description derive from it.
    pub(super) id: String,
    /// `data-*` attributes of the `<svg>` element (names and values are the caller's constants).
    pub(super) data: Vec<(&'static str, String)>,
    pub(super) title: String,
    pub(super) description: String,
    pub(super) rows: Vec<Row>,
    pub(super) markers: Vec<Marker>,
    /// Swatch class and text.
    pub(super) legend: Vec<(String, String)>,
    pub(super) scale: Scale,
}

impl Chart {
    pub(super) fn render(&self) -> String {
        let rows_h = self.rows.len() as f64 * (ROW_H + ROW_GAP);
        let axis_y = PLOT_Y + rows_h;
        let legend_y = axis_y + 30.0;
        let legend_rows = self.legend.len().div_ceil(LEGEND_COLUMNS);
        let height = legend_y + legend_rows as f64 * LEGEND_ROW_H;
        let id = escape(&self.id);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg class="oomlint-chart" id="{id}" viewBox="0 0 {WIDTH} {height}" role="img" aria-labelledby="{id}-title {id}-desc""#
        );
        for (name, value) in &self.data {
            let _ = write!(s, r#" data-{name}="{}""#, escape(value));
        }
        let _ = writeln!(
            s,
            "><title id=\"{id}-title\">{}</title><desc id=\"{id}-desc\">{}</desc>",
            escape(&self.title),
            escape(&self.description)
        );
        let _ = writeln!(s, r#"<text class="title" x="0" y="{TITLE_Y}">{}</text>"#, escape(&self.title));
        self.axis(&mut s, axis_y);
        for (i, row) in self.rows.iter().enumerate() {
            self.row(&mut s, row, PLOT_Y + i as f64 * (ROW_H + ROW_GAP) + ROW_GAP / 2.0);
        }
        for (lane, marker) in self.markers.iter().enumerate() {
            self.marker(&mut s, marker, LANES_Y[lane.min(1)], axis_y);
        }
        for (i, (class, text)) in self.legend.iter().enumerate() {
            let x = (i % LEGEND_COLUMNS) as f64 * (WIDTH / LEGEND_COLUMNS as f64);
            let y = legend_y + (i / LEGEND_COLUMNS) as f64 * LEGEND_ROW_H;
            let _ = writeln!(
                s,
                r#"<rect class="swatch {}" x="{x:.1}" y="{:.1}" width="10" height="10"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
                escape(class),
                y - 9.0,
                x + 14.0,
                escape(text)
            );
        }
        s.push_str("</svg>\n");
        s
    }

    fn axis(&self, s: &mut String, axis_y: f64) {
        let ticks = (self.scale.end / self.scale.step).round() as u64;
        for t in 0..=ticks {
            let value = t as f64 * self.scale.step;
            let x = PLOT_X + value / self.scale.end * PLOT_W;
            let decimals = (-self.scale.step.log10().floor()).max(0.0) as usize;
            let label = format!("{value:.decimals$}");
            let _ = writeln!(
                s,
                r#"<line class="grid" x1="{x:.1}" y1="{PLOT_Y}" x2="{x:.1}" y2="{axis_y:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
                axis_y + 14.0
            );
        }
        let _ =
            writeln!(s, r#"<text class="tick" x="{:.1}" y="{:.1}">GiB</text>"#, PLOT_X + PLOT_W + 12.0, axis_y + 14.0);
    }

    fn row(&self, s: &mut String, row: &Row, y: f64) {
        let mid = y + ROW_H / 2.0;
        let _ = writeln!(
            s,
            r#"<text class="row-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            PLOT_X - 8.0,
            mid + 4.0,
            escape(&row.label)
        );
        let mut at = 0u64;
        for segment in &row.segments {
            let (x0, x1) = (self.scale.x(at), self.scale.x(at.saturating_add(segment.bytes)));
            at = at.saturating_add(segment.bytes);
            let _ = write!(
                s,
                r#"<rect class="seg {}" x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{ROW_H}"><title>{}: {}</title></rect>"#,
                escape(&segment.class),
                x1 - x0,
                escape(&segment.name),
                gib(segment.bytes)
            );
            let fits = x1 - x0 > segment.name.chars().count() as f64 * CHAR_W + 8.0;
            if fits && segment.name != row.label {
                let _ = write!(
                    s,
                    r#"<text class="seg-label" x="{:.1}" y="{:.1}">{}</text>"#,
                    x0 + 4.0,
                    mid + 4.0,
                    escape(&segment.name)
                );
            }
            s.push('\n');
        }
        let mut end = self.scale.x(at);
        if let Some((low, high)) = row.band {
            let (x0, x1) = (self.scale.x(low), self.scale.x(high));
            let _ = writeln!(
                s,
                r#"<g class="band"><title>band: {} to {}</title><line x1="{x0:.1}" y1="{mid:.1}" x2="{x1:.1}" y2="{mid:.1}"/><line x1="{x0:.1}" y1="{:.1}" x2="{x0:.1}" y2="{:.1}"/><line x1="{x1:.1}" y1="{:.1}" x2="{x1:.1}" y2="{:.1}"/></g>"#,
                gib(low),
                gib(high),
                mid - 6.0,
                mid + 6.0,
                mid - 6.0,
                mid + 6.0
            );
            end = end.max(x1);
        }
        let _ = writeln!(
            s,
            r#"<text class="value" x="{:.1}" y="{:.1}">{}</text>"#,
            end + 6.0,
            mid + 4.0,
            escape(&row.value)
        );
    }

    fn marker(&self, s: &mut String, marker: &Marker, label_y: f64, axis_y: f64) {
        let x = self.scale.x(marker.bytes);
        // Labels read away from the nearer edge of the plot.
        let (anchor, dx) = if x > PLOT_X + PLOT_W / 2.0 { ("end", -4.0) } else { ("start", 4.0) };
        let _ = writeln!(
            s,
            r#"<line class="{class}" data-bytes="{bytes}" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{axis_y:.1}"/><text class="{class}-label" x="{:.1}" y="{label_y:.1}" text-anchor="{anchor}">{}</text>"#,
            label_y - 10.0,
            x + dx,
            escape(&marker.label),
            class = marker.class,
            bytes = marker.bytes,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn scale_has_round_steps_and_reaches_the_maximum() {
        let g = 1u64 << 30;
        assert_eq!(Scale::up_to(22 * g + g / 5), Scale { step: 5.0, end: 25.0 });
        assert_eq!(Scale::up_to(80 * g), Scale { step: 20.0, end: 80.0 });
        let small = Scale::up_to(g / 2);
        assert!((small.step - 0.1).abs() < 1e-9 && (small.end - 0.5).abs() < 1e-9, "{small:?}");
        let s = Scale::up_to(7 * g);
        assert_eq!(s.x(0), PLOT_X);
        assert!(s.x(7 * g) <= PLOT_X + PLOT_W && s.x(100 * g) == PLOT_X + PLOT_W);
    }
}
