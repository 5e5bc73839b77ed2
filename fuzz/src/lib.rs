//! What every fuzz target checks beyond "no panic": spans stay inside the text on
//! character boundaries, so every renderer and the language server can slice with them.

use oomlint::analysis::Analysis;
use oomlint::span::Span;
use oomlint::syntax::python::{Program, PyValue, Spanned, Static};
use oomlint::syntax::{Document, Node, Value};

/// Asserts that `span` lies inside `text` and on character boundaries.
pub fn assert_span(text: &str, span: Span, what: &str) {
    assert!(span.start <= span.end && span.end <= text.len(), "{what} {span:?} outside a text of {} bytes", text.len());
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
        "{what} {span:?} is not on character boundaries"
    );
}

/// Checks every node, key, comment and problem span of a parsed document.
pub fn assert_document(text: &str, document: &Document) {
    let mut stack: Vec<&Node> = document.root.iter().collect();
    while let Some(node) = stack.pop() {
        assert_span(text, node.span, "node");
        match &node.value {
            Value::Mapping(mapping) => {
                for entry in &mapping.entries {
                    assert_span(text, entry.key_span, "key");
                    stack.push(&entry.value);
                }
            }
            Value::Sequence(items) => stack.extend(items),
            Value::Scalar(_) => {}
        }
    }
    for comment in &document.comments {
        assert_span(text, comment.span, "comment");
    }
    for problem in &document.problems {
        assert_span(text, problem.span, "syntax problem");
    }
    if let Some(program) = &document.program {
        assert_program(text, program);
    }
}

/// Checks the spans of a script's or notebook's program: calls, arguments, their static
/// values, environment settings and cells.
pub fn assert_program(text: &str, program: &Program) {
    fn value(text: &str, v: &Spanned) {
        assert_span(text, v.span, "value");
        match &v.value {
            PyValue::List(items) => items.iter().for_each(|i| value(text, i)),
            PyValue::Dict(entries) => {
                for (_, key, v) in entries {
                    assert_span(text, *key, "dict key");
                    value(text, v);
                }
            }
            _ => {}
        }
    }
    let known = |s: &Static| {
        if let Static::Known(v) = s {
            value(text, v);
        }
    };
    for call in &program.calls {
        assert_span(text, call.name_span, "callee");
        assert_span(text, call.args_span, "arguments");
        for arg in &call.args {
            assert_span(text, arg.key_span, "keyword");
            assert_span(text, arg.span, "argument");
            known(&arg.value);
            assert!(arg.call.is_none_or(|c| c < program.calls.len()), "argument call out of range");
        }
    }
    for binding in &program.bindings {
        assert!(binding.call < program.calls.len(), "binding of a call out of range");
    }
    for setting in &program.env {
        assert_span(text, setting.name_span, "environment name");
        known(&setting.value);
    }
    for cell in &program.cells {
        assert_span(text, cell.span, "cell");
    }
}

/// Checks the spans of every finding, related note and fix edit of an analysis.
pub fn assert_analysis(analysis: &Analysis) {
    let text = &analysis.text;
    for diagnostic in &analysis.diagnostics {
        assert_span(text, diagnostic.span, diagnostic.code);
        for related in &diagnostic.related {
            assert_span(text, related.span, "related");
        }
        for fix in &diagnostic.fixes {
            for edit in &fix.edits {
                assert_span(text, edit.span, "edit");
            }
        }
    }
}

/// File names the pipeline targets pick from, one per language and detection path.
pub const PATHS: [&str; 12] = [
    "/nonexistent-oomlint-fuzz/config.yaml",
    "/nonexistent-oomlint-fuzz/lora.yaml",
    "/nonexistent-oomlint-fuzz/qlora.yaml",
    "/nonexistent-oomlint-fuzz/grpo.yml",
    "/nonexistent-oomlint-fuzz/ds_config.json",
    "/nonexistent-oomlint-fuzz/oomlint.toml",
    "/nonexistent-oomlint-fuzz/pyproject.toml",
    "/nonexistent-oomlint-fuzz/.env",
    "/nonexistent-oomlint-fuzz/train.sh",
    "/nonexistent-oomlint-fuzz/train.py",
    "/nonexistent-oomlint-fuzz/notebook.ipynb",
    "/nonexistent-oomlint-fuzz/accelerate_config.yaml",
];

/// Splits fuzz input into a path (chosen by the first byte) and the file's bytes.
pub fn path_and_bytes(data: &[u8]) -> (&'static str, &[u8]) {
    match data.split_first() {
        Some((&selector, rest)) => (PATHS[usize::from(selector) % PATHS.len()], rest),
        None => (PATHS[0], data),
    }
}
