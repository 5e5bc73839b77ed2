//! Text output of `oomlint explain`: one miette report per OOM message, pointing at the
//! message in the log (and at the allocation site's frame), with findings and advice.

use super::units::format_size;
use super::OomError;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, Severity, SourceCode};
use std::fmt;
use std::sync::Arc;

/// One OOM message as a miette diagnostic.
struct Report<'a> {
    error: &'a OomError,
    source: NamedSource<Arc<str>>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report").field("line", &self.error.line).finish()
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = &self.error.numbers;
        let rank = self.error.rank.map_or(String::new(), |r| format!(" (rank {r})"));
        write!(
            f,
            "CUDA out of memory on GPU {}{rank}: short by {} (tried to allocate {}, {} free of {})",
            n.device,
            format_size(self.error.diagnosis.shortfall_bytes),
            format_size(n.requested_bytes),
            format_size(n.free_bytes),
            format_size(n.total_bytes)
        )
    }
}

impl std::error::Error for Report<'_> {}

/// How much of the message the label underlines.
const HEADLINE_BYTES: usize = 60;

impl Report<'_> {
    /// The start of the message on its first line, as `(offset, length)`.
    fn headline(&self) -> (usize, usize) {
        let text = self.source.inner();
        let span = self.error.span;
        let line_end = text.get(span.start..span.end).and_then(|m| m.find('\n')).map_or(span.end, |p| span.start + p);
        let mut end = line_end.min(span.start + HEADLINE_BYTES);
        while end > span.start && !text.is_char_boundary(end) {
            end -= 1;
        }
        (span.start, end - span.start)
    }
}

impl Diagnostic for Report<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new("cuda-oom"))
    }

    fn severity(&self) -> Option<Severity> {
        Some(Severity::Error)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let e = self.error;
        let mut labels = vec![LabeledSpan::new_primary_with_span(Some("the OOM message".to_owned()), self.headline())];
        if let Some(site) = &e.site {
            let what =
                site.component.map_or("allocation site".to_owned(), |c| format!("allocation site: {} grew", c.name()));
            labels.push(LabeledSpan::new_with_span(Some(what), (site.frame.span.start, site.frame.span.len())));
        }
        Some(Box::new(labels.into_iter()))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let d = &self.error.diagnosis;
        let mut help = String::new();
        for finding in &d.findings {
            help.push_str(&format!("- {finding}\n"));
        }
        help.push_str("what to change, in order:");
        for (i, advice) in d.advice().enumerate() {
            let saves = advice.saves_bytes.map_or(String::new(), |b| format!(" [frees {}]", format_size(b)));
            help.push_str(&format!("\n  {}. {}{saves}", i + 1, advice.title));
        }
        Some(Box::new(help))
    }
}

/// Renders every error found in `text` (named `name`); `color` selects ANSI styling.
pub fn render(errors: &[OomError], name: &str, text: &str, color: bool) -> String {
    if errors.is_empty() {
        return format!("No CUDA out-of-memory message found in {name}.\n");
    }
    let source = NamedSource::new(name, Arc::<str>::from(text));
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(110).with_context_lines(1);
    let mut out = String::new();
    for error in errors {
        let report = Report { error, source: source.clone() };
        if handler.render_report(&mut out, &report).is_err() {
            out.push_str(&format!("{report}\n"));
        }
        out.push('\n');
    }
    let plural = if errors.len() == 1 { "" } else { "s" };
    out.push_str(&format!("{} CUDA out-of-memory message{plural} in {name}.\n", errors.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::super::explain;
    use super::*;

    #[test]
    fn renders_message_findings_and_advice() {
        let text = "Traceback (most recent call last):\n  File \"/w/train.py\", line 3, in main\n    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 23.57 GiB of which 1.19 MiB is free. Process 901 has 6.00 GiB memory in use. Of the allocated memory 16.90 GiB is allocated by PyTorch, and 212.41 MiB is reserved by PyTorch but unallocated.\n";
        let errors = explain(text);
        let out = render(&errors, "train.log", text, false);
        assert!(out.contains("CUDA out of memory on GPU 0: short by 829.44 KiB"), "{out}");
        assert!(out.contains("train.log:4"), "{out}");
        assert!(out.contains("allocation site: gradients grew"), "{out}");
        assert!(out.contains("pid 901: 6.00 GiB"), "{out}");
        assert!(out.contains("1. Stop or move the other processes"), "{out}");
        assert!(out.contains("expandable_segments:True"), "{out}");
        assert!(out.contains("1 CUDA out-of-memory message in train.log."), "{out}");
        assert!(!out.contains('\u{1b}'));
    }

    #[test]
    fn nothing_found() {
        assert_eq!(render(&[], "x.log", "", false), "No CUDA out-of-memory message found in x.log.\n");
    }
}
