//! JSON (DeepSpeed configs) through `jsonc-parser`, with the strict grammar of
//! Python's `json.load` (what the HF Trainer and accelerate read DeepSpeed files with):
//! no comments, no trailing commas, no single quotes.

use super::{
    json_depth_exceeds, Document, Entry, Language, Literal, Mapping, Node, ProblemKind, Scalar, ScalarKind,
    ScalarStyle, SyntaxProblem, Value, MAX_DEPTH,
};
use crate::span::{floor_char_boundary, Span};
use crate::HashMap;
use jsonc_parser::ast;
use jsonc_parser::{parse_to_ast, CollectOptions, ParseOptions};

/// How JSON writes `literal`.
pub(crate) fn spell(literal: &Literal) -> String {
    match literal {
        Literal::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        other => other.to_string(),
    }
}

pub fn parse(text: &str) -> Document {
    let mut doc =
        Document { language: Language::Json, root: None, comments: Vec::new(), problems: Vec::new(), program: None };
    if let Some(at) = json_depth_exceeds(text, MAX_DEPTH) {
        doc.problems.push(SyntaxProblem {
            kind: ProblemKind::Syntax,
            message: format!("nesting deeper than {MAX_DEPTH} levels"),
            span: Span::new(at, at + 1),
        });
        return doc;
    }
    let options = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        ..ParseOptions::default()
    };
    match parse_to_ast(text, &CollectOptions::default(), &options) {
        Ok(result) => doc.root = result.value.map(|v| convert(v, &mut doc.problems)),
        Err(error) => {
            let range = error.range();
            // At least one character wide, on character boundaries (the error may point at
            // a multi-byte character).
            let start = floor_char_boundary(text, range.start.min(text.len()));
            let next = text[start..].chars().next().map_or(start, |c| start + c.len_utf8());
            let mut end = range.end.max(next).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            doc.problems.push(SyntaxProblem {
                kind: ProblemKind::Syntax,
                message: error.kind().to_string(),
                span: Span::new(start, end),
            });
        }
    }
    doc
}

fn span(range: jsonc_parser::common::Range) -> Span {
    Span::new(range.start, range.end)
}

fn scalar(range: jsonc_parser::common::Range, text: String, style: ScalarStyle, kind: ScalarKind) -> Node {
    Node { span: span(range), value: Value::Scalar(Scalar { text, style, kind }) }
}

/// Depth is bounded by [`json_depth_exceeds`], so recursion here is shallow.
fn convert(value: ast::Value<'_>, problems: &mut Vec<SyntaxProblem>) -> Node {
    match value {
        ast::Value::StringLit(s) => scalar(s.range, s.value.into_owned(), ScalarStyle::DoubleQuoted, ScalarKind::Str),
        ast::Value::NumberLit(n) => scalar(n.range, n.value.to_string(), ScalarStyle::Plain, number_kind(n.value)),
        ast::Value::BooleanLit(b) => {
            scalar(b.range, b.value.to_string(), ScalarStyle::Plain, ScalarKind::Bool(b.value))
        }
        ast::Value::NullKeyword(n) => scalar(n.range, "null".into(), ScalarStyle::Plain, ScalarKind::Null),
        ast::Value::Array(a) => Node {
            span: span(a.range),
            value: Value::Sequence(a.elements.into_iter().map(|v| convert(v, problems)).collect()),
        },
        ast::Value::Object(o) => {
            let mut seen: HashMap<String, Span> = HashMap::default();
            let mut entries = Vec::with_capacity(o.properties.len());
            for prop in o.properties {
                let (key, key_range) = match prop.name {
                    ast::ObjectPropName::String(s) => (s.value.into_owned(), s.range),
                    ast::ObjectPropName::Word(w) => (w.value.to_string(), w.range),
                };
                let key_span = span(key_range);
                if let Some(&first) = seen.get(&key) {
                    problems.push(SyntaxProblem {
                        kind: ProblemKind::DuplicateKey { first },
                        message: format!("duplicate key `{key}`; the last value wins"),
                        span: key_span,
                    });
                } else {
                    seen.insert(key.clone(), key_span);
                }
                entries.push(Entry { key, key_span, value: convert(prop.value, problems) });
            }
            Node { span: span(o.range), value: Value::Mapping(Mapping { entries }) }
        }
    }
}

fn number_kind(text: &str) -> ScalarKind {
    if text.contains(['.', 'e', 'E']) {
        return text.parse().map_or(ScalarKind::Str, ScalarKind::Float);
    }
    match text.parse::<i64>() {
        Ok(i) => ScalarKind::Int(i),
        Err(_) => ScalarKind::BigInt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_kinds() {
        let text = r#"{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "train_batch_size": "auto", "x": 1.5e3}"#;
        let doc = parse(text);
        assert!(doc.problems.is_empty());
        let m = doc.root_mapping().unwrap();
        let stage = m.entry_path("zero_optimization.stage").unwrap();
        assert_eq!(&text[stage.key_span.start..stage.key_span.end], "\"stage\"");
        assert_eq!(stage.value.as_scalar().unwrap().as_i64(), Some(3));
        assert_eq!(m.get("train_batch_size").unwrap().as_scalar().unwrap().as_str(), Some("auto"));
        assert_eq!(m.get("x").unwrap().as_scalar().unwrap().as_f64(), Some(1500.0));
    }

    #[test]
    fn errors_duplicates_and_depth() {
        let doc = parse("{\"a\": 1,}");
        assert_eq!(doc.problems[0].kind, ProblemKind::Syntax);
        let doc = parse("{\"a\": 1, \"a\": 2}");
        assert!(matches!(doc.problems[0].kind, ProblemKind::DuplicateKey { .. }));
        let doc = parse(&"[".repeat(200_000));
        assert!(doc.problems[0].message.contains("nesting"));
        let doc = parse("{\"big\": 123456789012345678901234567890}");
        let big = doc.root_mapping().unwrap().get("big").unwrap();
        assert_eq!(big.as_scalar().unwrap().kind, ScalarKind::BigInt);
    }

    #[test]
    fn an_error_at_a_multibyte_character_spans_the_whole_character() {
        // Found by fuzzing (fuzz/regressions/parse_json): the span ended inside `ᛛ`.
        let text = "{\n  \"a\":6.4ᛛ4\n}";
        let span = parse(text).problems[0].span;
        assert_eq!(&text[span.start..span.end], "ᛛ");
    }
}
