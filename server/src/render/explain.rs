//! Text output of `oomlint explain`: one miette report per OOM message, pointing at the
//! message in the log (and at the allocation site's frame), with findings and advice.

use crate::explain::failure::{Failure, FailureKind};
use crate::explain::units::format_size;
use crate::explain::vllm::VllmCheck;
use crate::explain::OomError;
use crate::span::LineIndex;
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, Severity,
    SourceCode, SourceSpan, SpanContents,
};
use std::fmt;

/// The part of a log around one error, numbered as in the whole log.
///
/// miette finds line numbers by reading the source from its start; handing it only the
/// lines around the labels keeps rendering independent of the log's size.
struct Excerpt<'a> {
    name: &'a str,
    /// The excerpt: whole lines of the log.
    text: &'a str,
    /// Byte offset and 0-based line of the excerpt's start in the log.
    base: usize,
    base_line: usize,
}

impl SourceCode for Excerpt<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let start = span.offset().saturating_sub(self.base).min(self.text.len());
        let len = span.len().min(self.text.len() - start);
        let local = self.text.read_span(&SourceSpan::new(start.into(), len), before, after)?;
        let shifted = SourceSpan::new((local.span().offset() + self.base).into(), local.span().len());
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_owned(),
            local.data(),
            shifted,
            local.line() + self.base_line,
            local.column(),
            local.line_count(),
        )))
    }
}

/// One OOM message as a miette diagnostic.
struct Report<'a> {
    error: &'a OomError,
    source: Excerpt<'a>,
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
        let shortfall = self.error.diagnosis.shortfall_bytes;
        let what = if shortfall == 0 {
            "failed although the driver reported enough free memory".to_string()
        } else {
            format!("short by {}", format_size(shortfall))
        };
        write!(
            f,
            "CUDA out of memory on GPU {}{rank}: {what} (tried to allocate {}, {} free of {})",
            n.device,
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
        let (text, base) = (self.source.text, self.source.base);
        let span = self.error.span;
        let local = span.start.saturating_sub(base);
        let line_end = text.get(local..).and_then(|m| m.find('\n')).map_or(text.len(), |p| local + p);
        let mut end = line_end.min(local + HEADLINE_BYTES).min(text.len());
        while end > local && !text.is_char_boundary(end) {
            end -= 1;
        }
        (span.start, end.saturating_sub(local))
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

/// Renders every error and failure found in `text` (named `name`), in log order; `color`
/// selects ANSI styling.
pub fn render(errors: &[OomError], failures: &[Failure], name: &str, text: &str, color: bool) -> String {
    if errors.is_empty() && failures.is_empty() {
        return format!("No CUDA out-of-memory message, vLLM start-up memory error or Ray OOM kill found in {name}.\n");
    }
    let lines = LineIndex::new(text);
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(110).with_context_lines(0);
    let mut out = String::new();
    let mut items: Vec<(usize, Result<&OomError, &Failure>)> =
        errors.iter().map(|e| (e.span.start, Ok(e))).chain(failures.iter().map(|f| (f.span.start, Err(f)))).collect();
    items.sort_by_key(|(start, _)| *start);
    for (_, item) in items {
        let rendered = match item {
            Ok(error) => {
                let report = Report { error, source: excerpt(name, text, &lines, error) };
                handler.render_report(&mut out, &report).map_err(|_| report.to_string())
            }
            Err(failure) => {
                let report = FailureReport { failure, source: span_excerpt(name, text, &lines, failure.span) };
                handler.render_report(&mut out, &report).map_err(|_| report.to_string())
            }
        };
        if let Err(plain) = rendered {
            out.push_str(&format!("{plain}\n"));
        }
        out.push('\n');
    }
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = Vec::new();
    if !errors.is_empty() {
        parts.push(count(errors.len(), "CUDA out-of-memory message"));
    }
    if !failures.is_empty() {
        parts.push(count(failures.len(), "vLLM or Ray memory failure"));
    }
    out.push_str(&format!("{} in {name}.\n", parts.join(" and ")));
    out
}

/// One vLLM start-up failure or Ray OOM kill as a miette diagnostic.
struct FailureReport<'a> {
    failure: &'a Failure,
    source: Excerpt<'a>,
}

impl fmt::Debug for FailureReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FailureReport").field("line", &self.failure.line).finish()
    }
}

impl fmt::Display for FailureReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rank = self.failure.rank.map_or(String::new(), |r| format!(" (rank {r})"));
        match &self.failure.kind {
            FailureKind::Vllm { check: VllmCheck::NoCacheBlocks, .. } => {
                write!(f, "vLLM start-up{rank}: no memory left for the KV cache blocks")
            }
            FailureKind::Vllm { check: VllmCheck::MaxLenKvCache, numbers: n, .. } => {
                let len = n.max_model_len.map_or("max_model_len".to_owned(), |l| format!("max_model_len {l}"));
                write!(f, "vLLM start-up{rank}: the KV cache cannot hold one sequence of {len}")
            }
            FailureKind::Vllm { check: VllmCheck::FreeMemory, numbers: n, .. } => write!(
                f,
                "vLLM start-up{rank}: {} free, less than gpu_memory_utilization {} asks for ({})",
                format_size(n.free_bytes.unwrap_or(0)),
                n.gpu_memory_utilization.unwrap_or(0.0),
                format_size(n.requested_bytes.unwrap_or(0))
            ),
            FailureKind::Ray(o) => write!(
                f,
                "Ray OOM killer{rank}: host RAM at {} of {} ({:.1} %), over the {} threshold",
                format_size(o.used_bytes),
                format_size(o.total_bytes),
                o.fraction * 100.0,
                o.threshold
            ),
        }
    }
}

impl std::error::Error for FailureReport<'_> {}

impl Diagnostic for FailureReport<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.failure.kind.code()))
    }

    fn severity(&self) -> Option<Severity> {
        Some(Severity::Error)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (text, base) = (self.source.text, self.source.base);
        let start = self.failure.span.start;
        let local = start.saturating_sub(base).min(text.len());
        let line_end = text[local..].find('\n').map_or(text.len(), |p| local + p);
        let mut end = line_end.min(local + HEADLINE_BYTES);
        while end > local && !text.is_char_boundary(end) {
            end -= 1;
        }
        let label = LabeledSpan::new_primary_with_span(Some("the failure".to_owned()), (start, end - local));
        Some(Box::new(std::iter::once(label)))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let f = self.failure;
        let mut help = String::new();
        for finding in &f.findings {
            help.push_str(&format!("- {finding}\n"));
        }
        help.push_str("what to change, in order:");
        for (i, advice) in f.advice.iter().enumerate() {
            let saves = advice.saves_bytes.map_or(String::new(), |b| format!(" [frees {}]", format_size(b)));
            help.push_str(&format!("\n  {}. {}{saves}", i + 1, advice.title));
        }
        Some(Box::new(help))
    }
}

/// Whole lines covering `span`.
fn span_excerpt<'a>(name: &'a str, text: &'a str, lines: &LineIndex, span: crate::span::Span) -> Excerpt<'a> {
    let base_line = lines.line_of(span.start);
    let base = lines.line_start(base_line);
    let end = lines.line_span(text, lines.line_of(span.end.saturating_sub(1))).end.max(span.end);
    Excerpt { name, text: text.get(base..end).unwrap_or(""), base, base_line }
}

/// Whole lines from the allocation site's frame (or the message) to the message's end.
fn excerpt<'a>(name: &'a str, text: &'a str, lines: &LineIndex, error: &OomError) -> Excerpt<'a> {
    let first = error.site.as_ref().map_or(error.span.start, |s| s.frame.span.start.min(error.span.start));
    let base_line = lines.line_of(first);
    let base = lines.line_start(base_line);
    let end = lines.line_span(text, lines.line_of(error.span.end.saturating_sub(1))).end.max(error.span.end);
    Excerpt { name, text: text.get(base..end).unwrap_or(""), base, base_line }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::explain;

    #[test]
    fn renders_message_findings_and_advice() {
        let text = "Traceback (most recent call last):\n  File \"/w/train.py\", line 3, in main\n    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 23.57 GiB of which 1.19 MiB is free. Process 901 has 6.00 GiB memory in use. Of the allocated memory 16.90 GiB is allocated by PyTorch, and 212.41 MiB is reserved by PyTorch but unallocated.\n";
        let errors = explain(text);
        let out = render(&errors, &[], "train.log", text, false);
        let deep = format!("{}{text}", "step\n".repeat(1000));
        assert!(render(&explain(&deep), &[], "deep.log", &deep, false).contains("deep.log:1004:25"));
        assert!(out.contains("CUDA out of memory on GPU 0: short by 829.44 KiB"), "{out}");
        assert!(out.contains("train.log:4:25"), "{out}");
        assert!(out.contains("train.log:2:1"), "{out}");
        assert!(out.contains("allocation site: gradients grew"), "{out}");
        assert!(out.contains("pid 901: 6.00 GiB"), "{out}");
        assert!(out.contains("1. Stop or move the other processes"), "{out}");
        assert!(out.contains("expandable_segments:True"), "{out}");
        assert!(out.contains("1 CUDA out-of-memory message in train.log."), "{out}");
        assert!(!out.contains('\u{1b}'));
    }

    #[test]
    fn nothing_found() {
        assert_eq!(
            render(&[], &[], "x.log", "", false),
            "No CUDA out-of-memory message, vLLM start-up memory error or Ray OOM kill found in x.log.\n"
        );
    }
}
