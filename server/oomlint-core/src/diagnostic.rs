//! Findings and their fixes, in byte ranges.

use crate::span::Span;
use crate::syntax::{self, notebook, python, Language, Literal};
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

    pub(crate) fn insert(at: usize, content: impl Into<String>) -> Self {
        Self { span: Span::empty(at), content: content.into() }
    }

    pub(crate) fn delete(span: Span) -> Self {
        Self { span, content: String::new() }
    }

    /// Sets the value at `span` to `value`, as `language` writes it (`True` in Python,
    /// `true` in YAML); None where the language cannot write it.
    pub fn set(span: Span, value: &Literal, language: Language) -> Option<Self> {
        Some(Edit::replace(span, syntax::spell(value, language)?))
    }

    /// Replaces the key or string at `span` with `new`, inside its quotes when it is quoted.
    /// A plain scalar whose replacement YAML would read as something else than a string
    /// (`no`, `1e-5`, `null`) is written double-quoted. In a script or notebook a plain
    /// name (a keyword argument) stays a name, a string literal keeps its quotes, and a
    /// notebook's text is written as its JSON string encodes it.
    pub fn replace_keeping_quotes(text: &str, span: Span, new: &str, language: Language) -> Self {
        let inner = text.get(span.start..span.end).unwrap_or_default();
        let quoted_by = |open: &str, close: &str| {
            inner.len() >= open.len() + close.len() && inner.starts_with(open) && inner.ends_with(close)
        };
        let inside = |open: &str, close: &str| Span::new(span.start + open.len(), span.end - close.len());
        match language {
            Language::Python => match ['"', '\''].into_iter().find(|q| quoted_by(&q.to_string(), &q.to_string())) {
                Some(quote) => Edit::replace(inside("\"", "\""), python::escape(new, quote)),
                None => Edit::replace(span, new),
            },
            Language::Notebook => {
                let literal = [("\\\"", '"'), ("'", '\'')].into_iter().find(|(q, _)| quoted_by(q, q));
                match literal {
                    Some((q, quote)) => Edit::replace(inside(q, q), notebook::encode(&python::escape(new, quote))),
                    None => Edit::replace(span, notebook::encode(new)),
                }
            }
            _ if quoted_by("\"", "\"") || quoted_by("'", "'") => Edit::replace(inside("\"", "\""), new),
            _ if syntax::yaml::reads_as_plain_string(new) => Edit::replace(span, new),
            _ => Edit::replace(span, format!("{new:?}")),
        }
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
    /// Text that belongs to no place in the file (a table, an explanation), shown after
    /// the code frame; each note may span several lines.
    pub notes: Vec<String>,
    pub fixes: Vec<Fix>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_keep_quotes_and_stay_strings() {
        let text = "'evaluation_strategy': a\neval_strategy: no_\n";
        let yaml = |span, new| Edit::replace_keeping_quotes(text, span, new, Language::Yaml);
        assert_eq!(yaml(Span::new(0, 21), "eval_strategy").span, Span::new(1, 20));
        let plain = Span::new(text.len() - 4, text.len() - 1);
        assert_eq!(yaml(plain, "no").content, "\"no\"");
        assert_eq!(yaml(plain, "steps").content, "steps");
    }

    #[test]
    fn scripts_and_notebooks_keep_names_and_string_literals() {
        let at = |text: &str, needle: &str| {
            let start = text.find(needle).unwrap();
            Span::new(start, start + needle.len())
        };
        let script = "SFTConfig(evaluation_strategy=\"no\", optim='adamw')\n";
        let rename = Edit::replace_keeping_quotes(script, at(script, "evaluation_strategy"), "no", Language::Python);
        assert_eq!((rename.span, rename.content.as_str()), (at(script, "evaluation_strategy"), "no"));
        let value = Edit::replace_keeping_quotes(script, at(script, "'adamw'"), "it's", Language::Python);
        assert_eq!((value.span, value.content.as_str()), (at(script, "adamw"), "it\\'s"));
        let cell = r#"["SFTConfig(optim=\"adamw\")"]"#;
        let value = Edit::replace_keeping_quotes(cell, at(cell, r#"\"adamw\""#), "a\"b", Language::Notebook);
        assert_eq!((value.span, value.content.as_str()), (at(cell, "adamw"), r#"a\\\"b"#));
    }

    #[test]
    fn each_language_spells_a_set_value() {
        let span = Span::new(0, 4);
        let spelled = |value: Literal, language| Edit::set(span, &value, language).map(|e| e.content);
        let yes = || Literal::Bool(true);
        assert_eq!(spelled(yes(), Language::Yaml).as_deref(), Some("true"));
        assert_eq!(spelled(yes(), Language::Python).as_deref(), Some("True"));
        assert_eq!(spelled(Literal::Null, Language::Python).as_deref(), Some("None"));
        assert_eq!(spelled(Literal::Null, Language::Yaml).as_deref(), Some("null"));
        assert_eq!(spelled(Literal::Null, Language::Toml), None);
        let s = || Literal::Str("unsloth".into());
        assert_eq!(spelled(s(), Language::Yaml).as_deref(), Some("unsloth"));
        assert_eq!(spelled(Literal::Str("no".into()), Language::Yaml).as_deref(), Some("\"no\""));
        assert_eq!(spelled(s(), Language::Json).as_deref(), Some("\"unsloth\""));
        assert_eq!(spelled(s(), Language::Python).as_deref(), Some("\"unsloth\""));
        assert_eq!(spelled(s(), Language::Notebook).as_deref(), Some("\\\"unsloth\\\""));
        assert_eq!(spelled(Literal::Str("a b".into()), Language::Shell).as_deref(), Some("'a b'"));
        assert_eq!(spelled(Literal::Fixed(0.6, 2), Language::Python).as_deref(), Some("0.60"));
        assert_eq!(spelled(Literal::Float(0.6), Language::Notebook).as_deref(), Some("0.6"));
        assert_eq!(spelled(Literal::Int(-3), Language::Toml).as_deref(), Some("-3"));
    }
}
