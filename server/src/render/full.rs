//! Code frames with labelled spans, through miette.

use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, Severity};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report};

fn report(analysis: &Analysis, d: &Diagnostic) -> Report {
    let severity = match d.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    };
    let mut labels = vec![LabeledSpan::new_primary_with_span(Some(d.rule.to_string()), d.span.start..d.span.end)];
    labels.extend(
        d.related.iter().map(|r| LabeledSpan::new_with_span(Some(r.message.clone()), r.span.start..r.span.end)),
    );
    let mut diagnostic =
        MietteDiagnostic::new(d.message.clone()).with_code(d.code).with_severity(severity).with_labels(labels);
    if let Some(fix) = d.fixes.first() {
        diagnostic = diagnostic.with_help(format!("fix: {}", fix.title));
    }
    Report::new(diagnostic).with_source_code(
        NamedSource::new(analysis.path.display().to_string(), analysis.text.clone()).with_language("yaml"),
    )
}

/// Renders every finding of one file; `color` selects ANSI styling.
pub fn render(analysis: &Analysis, color: bool, out: &mut String) {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    for d in &analysis.diagnostics {
        let report = report(analysis, d);
        let _ = handler.render_report(out, report.as_ref());
        out.push('\n');
    }
}
