//! GitHub Actions workflow commands (`::error file=…,line=…::message`).

use super::range;
use crate::analysis::Analysis;
use crate::diagnostic::Severity;

/// Escapes a command's message (`%`, CR, LF).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a command property (also `:` and `,`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(analysis: &Analysis, out: &mut String) {
    for d in &analysis.diagnostics {
        let (start, end) = range(analysis, d.span);
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        out.push_str(&format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            escape_property(&analysis.path.display().to_string()),
            start.line,
            start.column,
            end.line,
            end.column,
            escape_property(&format!("{} {}", d.code, d.rule)),
            escape_data(&d.message)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape_data("50% a\r\nb"), "50%25 a%0D%0Ab");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
