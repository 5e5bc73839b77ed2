//! Suppression comments.
//!
//! - `# oomlint: ignore[OOM101, unknown-key]` at the end of a line suppresses those rules
//!   on that line; on a line of its own, on the next line. Codes or names; a bare
//!   `# oomlint: ignore` suppresses every rule there.
//! - `# oomlint: disable-file[...]` (or a bare `# oomlint: disable-file`) in the first
//!   20 lines suppresses the rules in the whole file.
//!
//! A code matches a finding by the finding's rule code (any case) or rule name, so this
//! module needs no rule registry. A suppression (or one of its codes) that matched no
//! finding is reported by `unused-suppression`, as is a code that names no rule.

use crate::diagnostic::Diagnostic;
use crate::span::{LineIndex, Span};
use crate::syntax::Comment;

/// `disable-file` comments count only in the first lines of a file.
const FILE_DIRECTIVE_LINES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Findings that start on this 0-based line.
    Line(usize),
    File,
}

/// One code inside the brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub text: String,
    pub span: Span,
    pub(crate) used: bool,
}

impl Code {
    /// Whether this code names the rule of `diagnostic` (its code in any case, or its name).
    pub(crate) fn names(&self, diagnostic: &Diagnostic) -> bool {
        self.text.eq_ignore_ascii_case(diagnostic.code) || self.text == diagnostic.rule
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    pub(crate) scope: Scope,
    /// The whole comment, `#` to the end of the line.
    pub(crate) comment: Span,
    /// Empty: every rule.
    pub codes: Vec<Code>,
    /// For a bare suppression: whether it matched anything.
    pub(crate) used: bool,
    /// Whether the comment stands alone on its line.
    pub(crate) own_line: bool,
}

impl Suppression {
    fn matches(&self, diagnostic: &Diagnostic, line: usize) -> bool {
        let in_scope = match self.scope {
            Scope::Line(l) => l == line,
            Scope::File => true,
        };
        in_scope && (self.codes.is_empty() || self.codes.iter().any(|c| c.names(diagnostic)))
    }

    /// Whether nothing in this comment was used.
    pub(crate) fn is_unused(&self) -> bool {
        if self.codes.is_empty() {
            !self.used
        } else {
            self.codes.iter().all(|c| !c.used)
        }
    }
}

/// Reads every suppression comment of a file.
pub fn parse(text: &str, comments: &[Comment], index: &LineIndex) -> Vec<Suppression> {
    let mut out = Vec::new();
    for comment in comments {
        let Some(raw) = text.get(comment.span.start..comment.span.end) else {
            continue;
        };
        let body = raw.trim_start_matches('#');
        let body_start = comment.span.start + (raw.len() - body.len());
        let trimmed = body.trim_start();
        let Some(rest) = trimmed.strip_prefix("oomlint:") else {
            continue;
        };
        let rest_start = body_start + (body.len() - trimmed.len()) + "oomlint:".len();
        let directive = rest.trim_start();
        let directive_start = rest_start + (rest.len() - directive.len());
        let line = index.line_of(comment.span.start);
        let line_start = index.line_start(line);
        let own_line = text[line_start..comment.span.start].trim().is_empty();
        let (scope, after) = if let Some(after) = directive.strip_prefix("disable-file") {
            if line >= FILE_DIRECTIVE_LINES {
                continue;
            }
            (Scope::File, after)
        } else if let Some(after) = directive.strip_prefix("ignore") {
            (Scope::Line(if own_line { line + 1 } else { line }), after)
        } else {
            continue;
        };
        let after_start = directive_start + (directive.len() - after.len());
        let codes = match after.strip_prefix('[') {
            // An unclosed or empty list (`ignore[]`) is not a directive: it must not mean "all".
            Some(list) => match list.find(']').map(|close| codes(&list[..close], after_start + 1)) {
                Some(codes) if !codes.is_empty() => codes,
                _ => continue,
            },
            // `ignore` must end there or be followed by a blank (`ignored` is not a directive).
            None if after.is_empty() || after.starts_with(char::is_whitespace) => Vec::new(),
            None => continue,
        };
        out.push(Suppression { scope, comment: comment.span, codes, used: false, own_line });
    }
    out
}

fn codes(list: &str, offset: usize) -> Vec<Code> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in list.split(',') {
        let trimmed = part.trim();
        let lead = part.len() - part.trim_start().len();
        if !trimmed.is_empty() {
            let at = offset + start + lead;
            out.push(Code { text: trimmed.to_string(), span: Span::new(at, at + trimmed.len()), used: false });
        }
        start += part.len() + 1;
    }
    out
}

/// Drops suppressed findings and marks the suppressions (and codes) that were used.
pub(crate) fn apply(diagnostics: &mut Vec<Diagnostic>, suppressions: &mut [Suppression], index: &LineIndex) {
    if suppressions.is_empty() {
        return;
    }
    diagnostics.retain(|d| {
        let line = index.line_of(d.span.start);
        let mut suppressed = false;
        for s in suppressions.iter_mut().filter(|s| s.matches(d, line)) {
            suppressed = true;
            s.used = true;
            for code in s.codes.iter_mut().filter(|c| c.names(d)) {
                code.used = true;
            }
        }
        !suppressed
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::rules;
    use crate::syntax::{self, Language};

    fn diagnostic(code: &'static str, text: &str, at: &str) -> Diagnostic {
        let start = text.find(at).unwrap();
        Diagnostic {
            code,
            rule: rules::find(code).unwrap().name,
            severity: Severity::Error,
            message: String::new(),
            span: Span::new(start, start + at.len()),
            related: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
        }
    }

    fn run(text: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<Suppression> {
        let doc = syntax::parse(text, Language::Yaml);
        let index = LineIndex::new(text);
        let mut found = parse(text, &doc.comments, &index);
        apply(diagnostics, &mut found, &index);
        found
    }

    #[test]
    fn line_and_line_above() {
        let text = "a: 1  # oomlint: ignore[OOM001]\n# oomlint: ignore[duplicate-key, OOM006]\nb: 2\nc: 3\n";
        let mut diagnostics = vec![
            diagnostic("OOM001", text, "a: 1"),
            diagnostic("OOM002", text, "b: 2"),
            diagnostic("OOM002", text, "c: 3"),
        ];
        let found = run(text, &mut diagnostics);
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(&text[diagnostics[0].span.start..diagnostics[0].span.end], "c: 3");
        assert!(!found[0].is_unused());
        let codes: Vec<(&str, bool)> =
            found[1].codes.iter().map(|c| (&text[c.span.start..c.span.end], c.used)).collect();
        assert_eq!(codes, [("duplicate-key", true), ("OOM006", false)]);
    }

    #[test]
    fn bare_and_file_wide() {
        let text = "# oomlint: disable-file[OOM002]\na: 1\nb: 2 # oomlint: ignore\nc: 3 # oomlint: ignored\nd: 4 # oomlint: ignore[ , ]\n";
        let mut diagnostics = vec![
            diagnostic("OOM002", text, "a: 1"),
            diagnostic("OOM001", text, "b: 2"),
            diagnostic("OOM001", text, "c: 3"),
        ];
        let found = run(text, &mut diagnostics);
        assert_eq!(found.len(), 2, "`ignored` and an empty list are not directives");
        assert_eq!(diagnostics.len(), 1);
        assert!(found.iter().all(|s| !s.is_unused()));
    }

    #[test]
    fn unknown_codes_and_late_file_directives() {
        let mut text = "x: 1\n".repeat(FILE_DIRECTIVE_LINES);
        text.push_str("# oomlint: disable-file\n# oomlint: ignore[nope]\ny: 1\n");
        let found = run(&text, &mut Vec::new());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].codes[0].text, "nope");
        assert!(found[0].is_unused());
    }
}
