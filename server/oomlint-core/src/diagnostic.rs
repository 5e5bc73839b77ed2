//! Findings and their fixes, in byte ranges.

use crate::span::Span;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// How safe it is to apply a fix without review (ruff's model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Shown only; never applied automatically.
    Display,
    /// Changes behaviour or training semantics; applied with `--unsafe-fixes`.
    Unsafe,
    /// Keeps the user's intent; applied by `--fix`.
    Safe,
}

/// Replace the bytes of `span` with `content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub span: Span,
    pub content: String,
}

impl Edit {
    pub fn replace(span: Span, content: impl Into<String>) -> Self {
        Self { span, content: content.into() }
    }

    pub fn insert(at: usize, content: impl Into<String>) -> Self {
        Self { span: Span::empty(at), content: content.into() }
    }

    pub fn delete(span: Span) -> Self {
        Self { span, content: String::new() }
    }

    /// Replaces the key or scalar at `span` with `new`, inside its quotes when it is quoted.
    /// A plain scalar whose replacement YAML would read as something else than a string
    /// (`no`, `1e-5`, `null`) is written double-quoted.
    pub fn replace_keeping_quotes(text: &str, span: Span, new: &str) -> Self {
        let inner = text.get(span.start..span.end).unwrap_or_default();
        let quoted = inner.len() >= 2
            && (inner.starts_with('"') && inner.ends_with('"') || inner.starts_with('\'') && inner.ends_with('\''));
        if quoted {
            return Edit::replace(Span::new(span.start + 1, span.end - 1), new);
        }
        let reads_as_string = crate::syntax::yaml::resolve_plain(new) == crate::syntax::ScalarKind::Str;
        let safe_plain = reads_as_string
            && !new.is_empty()
            && !new.starts_with(['"', '\'', '[', '{', '&', '*', '!', '|', '>', '%', '@', '`'])
            && !new.contains(": ")
            && !new.contains(" #");
        Edit::replace(span, if safe_plain { new.to_string() } else { format!("{new:?}") })
    }
}

/// A set of non-overlapping edits that together make one change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

/// A secondary location with a note (shown as a label or related information).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Stable code, `OOM` + three digits.
    pub code: &'static str,
    /// Kebab-case rule name.
    pub rule: &'static str,
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub related: Vec<Related>,
    pub fixes: Vec<Fix>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_keep_quotes_and_stay_strings() {
        let text = "'evaluation_strategy': a\neval_strategy: no_\n";
        assert_eq!(Edit::replace_keeping_quotes(text, Span::new(0, 21), "eval_strategy").span, Span::new(1, 20));
        let plain = Span::new(text.len() - 4, text.len() - 1);
        assert_eq!(Edit::replace_keeping_quotes(text, plain, "no").content, "\"no\"");
        assert_eq!(Edit::replace_keeping_quotes(text, plain, "steps").content, "steps");
    }
}
