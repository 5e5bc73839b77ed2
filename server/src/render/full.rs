//! Code frames with labelled spans, through miette. In notebooks the frame is the code
//! cell with lines counted inside it (`notebook.ipynb:cell 4:12:30`), not the JSON text.

use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, Severity};
use crate::syntax::notebook::{cell_sources, CellSource};
use crate::syntax::Language;
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report};

fn report(analysis: &Analysis, d: &Diagnostic, cells: &[CellSource]) -> Report {
    let severity = match d.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    };
    let in_cell = cells.iter().find_map(|cell| Some((cell, cell.span_of(d.span)?)));
    let mut labels = Vec::new();
    let mut notes = Vec::new();
    match in_cell {
        Some((cell, span)) => {
            labels.push(LabeledSpan::new_primary_with_span(Some(d.rule.to_string()), span.start..span.end));
            for related in &d.related {
                let label = Some(related.message.clone());
                match cells.iter().find_map(|c| Some((c, c.span_of(related.span)?))) {
                    Some((other, span)) if other.number == cell.number => {
                        labels.push(LabeledSpan::new_with_span(label, span.start..span.end));
                    }
                    Some((other, span)) => {
                        let line = other.text.get(..span.start).map_or(0, |before| before.matches('\n').count());
                        notes.push(format!("cell {} line {}: {}", other.number, line + 1, related.message));
                    }
                    None => notes.push(related.message.clone()),
                }
            }
        }
        None => {
            labels.push(LabeledSpan::new_primary_with_span(Some(d.rule.to_string()), d.span.start..d.span.end));
            labels.extend(
                d.related.iter().map(|r| LabeledSpan::new_with_span(Some(r.message.clone()), r.span.start..r.span.end)),
            );
        }
    }
    let mut diagnostic =
        MietteDiagnostic::new(d.message.clone()).with_code(d.code).with_severity(severity).with_labels(labels);
    notes.extend(d.notes.iter().cloned());
    notes.extend(d.fixes.first().map(|fix| format!("fix: {}", fix.title)));
    if !notes.is_empty() {
        diagnostic = diagnostic.with_help(notes.join("\n"));
    }
    let path = analysis.path.display();
    let source = match in_cell {
        Some((cell, _)) => {
            NamedSource::new(format!("{path}:cell {}", cell.number), cell.text.clone()).with_language("python")
        }
        None => NamedSource::new(path.to_string(), analysis.text.clone()).with_language("yaml"),
    };
    Report::new(diagnostic).with_source_code(source)
}

/// Renders every finding of one file; `color` selects ANSI styling.
pub fn render(analysis: &Analysis, color: bool, out: &mut String) {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let cells =
        if analysis.document.language == Language::Notebook { cell_sources(&analysis.text) } else { Vec::new() };
    for d in &analysis.diagnostics {
        let report = report(analysis, d, &cells);
        let _ = handler.render_report(out, report.as_ref());
        out.push('\n');
    }
}
