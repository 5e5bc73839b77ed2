//! Properties that must hold for any input (proptest):
//! - a fix changes no byte outside its edits, and fixing converges;
//! - a sequence of incremental LSP edits yields the diagnostics of a fresh open of the
//!   final text (over the real server's stdio);
//! - positions fall on character boundaries in UTF-8 and UTF-16, and round-trip.

#[allow(dead_code)]
#[path = "lsp/session.rs"]
mod session;

use oomlint::analysis::{analyze_text, Options};
use oomlint::diagnostic::{Applicability, Fix};
use oomlint::fix::{apply, fix_text};
use oomlint::span::{floor_char_boundary, ColumnUnit, LineCol, LineIndex};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use session::Session;
use std::path::{Path, PathBuf};

/// Rule fixtures that carry fixes, with the file name their format is detected from.
fn fixtures_with_fixes() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules");
    let mut found = Vec::new();
    for rule in std::fs::read_dir(&root).expect("fixtures/rules").flatten() {
        for file in std::fs::read_dir(rule.path()).expect("rule fixtures").flatten() {
            let path = file.path();
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let analysis = analyze_text(&path, text.clone(), &Options::default());
            if analysis.diagnostics.iter().any(|d| !d.fixes.is_empty()) {
                found.push((path, text));
            }
        }
    }
    found.sort();
    assert!(found.len() >= 10, "rule fixtures with fixes: {}", found.len());
    found
}

/// Text that may be put at a line start without changing what a config means.
fn benign_line() -> impl Strategy<Value = String> {
    prop_oneof![Just("\n".to_string()), "[a-z é😀\t]{0,12}".prop_map(|s| format!("# {s}\n")), Just("   \n".to_string()),]
}

/// A fixture with comment and blank lines inserted at random line starts, optionally CRLF.
fn mutated_fixture(fixtures: Vec<(PathBuf, String)>) -> impl Strategy<Value = (PathBuf, String)> {
    let count = fixtures.len();
    (0..count, prop::collection::vec((any::<prop::sample::Index>(), benign_line()), 0..4), any::<bool>()).prop_map(
        move |(i, insertions, crlf)| {
            let (path, text) = &fixtures[i];
            let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
            for (at, line) in insertions {
                lines.insert(at.index(lines.len() + 1), line);
            }
            let mut text = lines.concat();
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            (path.clone(), text)
        },
    )
}

/// Whether `fixed` equals `text` outside `fix`'s edits (edits applied in order).
fn only_edits_changed(text: &str, fix: &Fix, fixed: &str) -> bool {
    let mut edits: Vec<_> = fix.edits.iter().collect();
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let (mut from, mut to) = (0, 0);
    for edit in edits {
        let kept = &text[from..edit.span.start];
        if fixed.get(to..to + kept.len()) != Some(kept) {
            return false;
        }
        to += kept.len();
        if fixed.get(to..to + edit.content.len()) != Some(edit.content.as_str()) {
            return false;
        }
        to += edit.content.len();
        from = edit.span.end;
    }
    fixed.get(to..) == Some(&text[from..])
}

#[test]
fn fixes_change_only_their_edits_and_converge() {
    let mut runner = TestRunner::new(Config { cases: 64, ..Config::default() });
    runner
        .run(&mutated_fixture(fixtures_with_fixes()), |(path, text)| {
            let options = Options::default();
            let analysis = analyze_text(&path, text.clone(), &options);
            for fix in analysis.diagnostics.iter().flat_map(|d| &d.fixes) {
                let applied = apply(&text, &[fix]);
                prop_assert_eq!(applied.count, 1, "{} applies on its own", fix.title);
                prop_assert!(only_edits_changed(&text, fix, &applied.text), "{} touched other bytes", fix.title);
            }
            for minimum in [Applicability::Safe, Applicability::Unsafe] {
                let fixed = fix_text(&path, &text, &options, minimum);
                prop_assert!(fixed.converged, "{} does not converge at {minimum:?}", path.display());
                let again = fix_text(&path, &fixed.text, &options, minimum);
                prop_assert_eq!(again.count, 0, "fixing a fixed text changes it again");
            }
            Ok(())
        })
        .unwrap();
}

/// One `didChange` range edit: `[start, end)` in characters of the current text.
#[derive(Debug, Clone)]
struct CharEdit {
    start: prop::sample::Index,
    len: usize,
    text: String,
}

fn char_edit() -> impl Strategy<Value = CharEdit> {
    (any::<prop::sample::Index>(), 0usize..6, "[a-z0-9:_ é😀\n#-]{0,8}").prop_map(|(start, len, text)| CharEdit {
        start,
        len,
        text,
    })
}

/// The byte offset of character `index` of `text` (its length at the end).
fn char_offset(text: &str, index: usize) -> usize {
    text.char_indices().nth(index).map_or(text.len(), |(offset, _)| offset)
}

fn utf16_position(text: &str, offset: usize) -> Value {
    let LineCol { line, column } = LineIndex::new(text).position(text, offset, ColumnUnit::Utf16);
    json!({"line": line, "character": column})
}

/// The published diagnostics without what depends on the URI.
fn comparable(published: &Value) -> Value {
    let mut diagnostics = published["diagnostics"].clone();
    for diagnostic in diagnostics.as_array_mut().into_iter().flatten() {
        if let Some(object) = diagnostic.as_object_mut() {
            object.remove("relatedInformation");
            object.remove("data");
        }
    }
    diagnostics
}

#[test]
fn incremental_edits_publish_what_a_fresh_open_publishes() {
    let base = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/trl/sft-qwen2.5-7b.yaml"))
        .expect("fixture");
    // proptest runs the case as `Fn`: the session and the case counter live in cells.
    let session = std::cell::RefCell::new(Session::start(json!({}), json!({"oomlint": {"gpu": "A10G"}})));
    let case = std::cell::Cell::new(0);
    let mut runner = TestRunner::new(Config { cases: 24, ..Config::default() });
    runner
        .run(&prop::collection::vec(char_edit(), 1..8), |edits| {
            case.set(case.get() + 1);
            let case = case.get();
            let mut session = session.borrow_mut();
            let uri = format!("file:///nonexistent-oomlint/edited/{case}/sft.yaml");
            session.open(&uri, &base);
            let mut text = base.clone();
            let mut changes = Vec::new();
            for edit in &edits {
                let chars = text.chars().count();
                let start = char_offset(&text, edit.start.index(chars + 1));
                let end = char_offset(&text, text[..start].chars().count() + edit.len);
                changes
                    .push(json!({"range": {"start": utf16_position(&text, start), "end": utf16_position(&text, end)},
                    "text": edit.text}));
                text.replace_range(start..end, &edit.text);
            }
            session.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes}),
            );
            let edited = session.wait(|m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && m["params"]["version"] == 2
            });
            let fresh_uri = format!("file:///nonexistent-oomlint/fresh/{case}/sft.yaml");
            let fresh = session.open(&fresh_uri, &text);
            prop_assert_eq!(comparable(&edited["params"]), comparable(&fresh), "final text:\n{}", text);
            for uri in [uri, fresh_uri] {
                session.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
                session.diagnostics(&uri);
            }
            Ok(())
        })
        .unwrap();
    assert!(session.into_inner().shutdown().success());
}

/// Text mixing ASCII, 2-, 3- and 4-byte characters, CR, LF and CRLF.
fn mixed_text() -> impl Strategy<Value = String> {
    "[a-z: é€😀\r\n\t#\u{301}]{0,60}"
}

proptest! {
    #![proptest_config(Config { cases: 512, ..Config::default() })]

    #[test]
    fn positions_round_trip_on_character_boundaries(text in mixed_text(), offset in 0usize..80) {
        let index = LineIndex::new(&text);
        // Inside a line terminator (between `\r` and `\n`) a position clamps to the line's end.
        let floor = floor_char_boundary(&text, offset.min(text.len()));
        let expected = floor.min(index.line_span(&text, index.line_of(floor)).end);
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
            let position = index.position(&text, offset, unit);
            let back = index.offset(&text, position, unit);
            prop_assert!(text.is_char_boundary(back));
            prop_assert_eq!(back, expected, "{:?} at {} in {:?}", unit, offset, text);
        }
    }

    #[test]
    fn any_position_maps_to_a_character_boundary(text in mixed_text(), line in 0usize..8, column in 0usize..40) {
        let index = LineIndex::new(&text);
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Char] {
            let offset = index.offset(&text, LineCol { line, column }, unit);
            prop_assert!(offset <= text.len() && text.is_char_boundary(offset), "{:?} {}:{} in {:?}", unit, line, column, text);
        }
    }

    #[test]
    fn findings_on_arbitrary_yaml_start_and_end_on_boundaries(
        body in "([a-z_]{1,12}: [a-z0-9é😀\"' \\[\\]{},.#-]{0,16}\r?\n){1,8}",
    ) {
        let text = format!("model_name_or_path: Qwen/Qwen2.5-0.5B\n{body}");
        let analysis = analyze_text(Path::new("sft.yaml"), text.clone(), &Options::default());
        for diagnostic in &analysis.diagnostics {
            let spans = std::iter::once(diagnostic.span)
                .chain(diagnostic.related.iter().map(|r| r.span))
                .chain(diagnostic.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.span)));
            for span in spans {
                prop_assert!(span.end <= text.len(), "{} {:?}", diagnostic.code, span);
                prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
                    "{} {:?} in {:?}", diagnostic.code, span, text);
            }
        }
    }
}
