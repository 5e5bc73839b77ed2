//! TOML (`oomlint.toml`, `pyproject.toml`) through `toml_edit`, which keeps spans.

use super::{
    Document, Entry, Language, Literal, Mapping, Node, ProblemKind, Scalar, ScalarKind, ScalarStyle, SyntaxProblem,
    Value,
};
use crate::span::Span;
use toml_edit::{Item, Table, TableLike};

/// How TOML writes `literal` (None for null: TOML has none).
pub(crate) fn spell(literal: &Literal) -> Option<String> {
    match literal {
        Literal::Null => None,
        Literal::Str(s) => Some(serde_json::to_string(s).unwrap_or_default()),
        other => Some(other.to_string()),
    }
}

pub fn parse(text: &str) -> Document {
    let mut doc =
        Document { language: Language::Toml, root: None, comments: Vec::new(), problems: Vec::new(), program: None };
    match toml_edit::Document::parse(text) {
        Ok(parsed) => {
            let table: &Table = parsed.as_table();
            doc.root = Some(Node { span: Span::new(0, text.len()), value: Value::Mapping(mapping(table, 0)) });
            doc.comments = super::hash_comments(text, &super::string_spans(&doc.root));
        }
        Err(error) => {
            let range = error.span().unwrap_or(0..0);
            let start = range.start.min(text.len());
            doc.problems.push(SyntaxProblem {
                kind: ProblemKind::Syntax,
                message: error.message().to_string(),
                span: Span::new(start, range.end.max(start).min(text.len())),
            });
        }
    }
    doc
}

fn to_span(range: Option<std::ops::Range<usize>>, fallback: Span) -> Span {
    range.map_or(fallback, |r| Span::new(r.start, r.end))
}

/// toml_edit bounds nesting itself (its parser has a recursion limit).
fn mapping(table: &dyn TableLike, depth: usize) -> Mapping {
    let mut entries = Vec::new();
    for (key, item) in table.iter() {
        let key_span = to_span(table.key(key).and_then(|k| k.span()), Span::default());
        if let Some(value) = node(item, key_span, depth + 1) {
            entries.push(Entry { key: key.to_string(), key_span, value });
        }
    }
    Mapping { entries }
}

fn node(item: &Item, fallback: Span, depth: usize) -> Option<Node> {
    match item {
        Item::None => None,
        Item::Table(t) => Some(Node { span: to_span(t.span(), fallback), value: Value::Mapping(mapping(t, depth)) }),
        Item::ArrayOfTables(a) => Some(Node {
            span: to_span(a.span(), fallback),
            value: Value::Sequence(
                a.iter()
                    .map(|t| Node { span: to_span(t.span(), fallback), value: Value::Mapping(mapping(t, depth)) })
                    .collect(),
            ),
        }),
        Item::Value(v) => Some(value(v, fallback, depth)),
    }
}

fn value(v: &toml_edit::Value, fallback: Span, depth: usize) -> Node {
    use toml_edit::Value as V;
    let span = to_span(v.span(), fallback);
    let scalar = |text: String, style, kind| Node { span, value: Value::Scalar(Scalar { text, style, kind }) };
    match v {
        V::String(s) => scalar(s.value().clone(), ScalarStyle::DoubleQuoted, ScalarKind::Str),
        V::Integer(i) => scalar(i.value().to_string(), ScalarStyle::Plain, ScalarKind::Int(*i.value())),
        V::Float(f) => scalar(f.value().to_string(), ScalarStyle::Plain, ScalarKind::Float(*f.value())),
        V::Boolean(b) => scalar(b.value().to_string(), ScalarStyle::Plain, ScalarKind::Bool(*b.value())),
        V::Datetime(d) => scalar(d.value().to_string(), ScalarStyle::Plain, ScalarKind::Str),
        V::Array(a) => Node { span, value: Value::Sequence(a.iter().map(|v| value(v, span, depth + 1)).collect()) },
        V::InlineTable(t) => Node { span, value: Value::Mapping(mapping(t, depth + 1)) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_kinds() {
        let text = "[tool.oomlint]\ngpu = \"A10G\" # card\nheadroom = 0.1\nignore = [\"OOM101\"]\n";
        let doc = parse(text);
        assert!(doc.problems.is_empty(), "{:?}", doc.problems);
        let m = doc.root_mapping().unwrap();
        let gpu = m.entry_path("tool.oomlint.gpu").unwrap();
        assert_eq!(&text[gpu.key_span.start..gpu.key_span.end], "gpu");
        assert_eq!(&text[gpu.value.span.start..gpu.value.span.end], "\"A10G\"");
        assert_eq!(m.entry_path("tool.oomlint.headroom").unwrap().value.as_scalar().unwrap().as_f64(), Some(0.1));
        assert_eq!(doc.comments.len(), 1);
    }

    #[test]
    fn syntax_error_has_a_span() {
        let doc = parse("a = \n");
        assert_eq!(doc.problems.len(), 1);
        assert_eq!(doc.problems[0].kind, ProblemKind::Syntax);
    }
}
