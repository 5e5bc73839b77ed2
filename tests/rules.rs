//! Every registered rule has fixtures under `fixtures/rules/<rule-name>/`: each `fail*`
//! file must produce the rule and each `pass*` file must not. Fixes offered on a
//! `fail*` file must remove their own finding when applied.

use oomlint::analysis::{analyze_bytes, Analysis, Options};
use oomlint::diagnostic::{Diagnostic, Fix};
use oomlint::rules::RULES;
use std::path::{Path, PathBuf};

fn fixture_dir(rule: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules").join(rule)
}

/// The fixture files of one rule whose name starts with `prefix` (`fail` or `pass`).
fn fixtures(rule: &str, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(fixture_dir(rule)) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .collect();
    files.sort();
    files
}

fn analyze(path: &Path, bytes: &[u8]) -> Analysis {
    analyze_bytes(path, bytes, &Options::default())
}

fn findings<'a>(analysis: &'a Analysis, rule: &str) -> Vec<&'a Diagnostic> {
    analysis.diagnostics.iter().filter(|d| d.rule == rule).collect()
}

/// Applies one fix's edits (non-overlapping byte ranges) to `text`.
fn apply(text: &str, fix: &Fix) -> String {
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut out = text.to_string();
    for edit in edits {
        out.replace_range(edit.span.start..edit.span.end, &edit.content);
    }
    out
}

#[test]
fn every_rule_has_fixtures() {
    let missing: Vec<&str> = RULES
        .iter()
        .filter(|r| fixtures(r.name, "fail").is_empty() || fixtures(r.name, "pass").is_empty())
        .map(|r| r.name)
        .collect();
    assert!(missing.is_empty(), "rules without fixtures/rules/<name>/fail* and pass* files: {missing:?}");
}

#[test]
fn fail_fixtures_trigger_and_pass_fixtures_do_not() {
    let mut problems = Vec::new();
    for rule in RULES {
        for path in fixtures(rule.name, "fail") {
            let bytes = std::fs::read(&path).expect("read fixture");
            if findings(&analyze(&path, &bytes), rule.name).is_empty() {
                problems.push(format!("{}: no {} finding", path.display(), rule.name));
            }
        }
        for path in fixtures(rule.name, "pass") {
            let bytes = std::fs::read(&path).expect("read fixture");
            let analysis = analyze(&path, &bytes);
            for d in findings(&analysis, rule.name) {
                problems.push(format!("{}: unexpected {} finding: {}", path.display(), rule.name, d.message));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn fixes_remove_their_finding() {
    let mut problems = Vec::new();
    for rule in RULES {
        for path in fixtures(rule.name, "fail") {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let before = analyze(&path, text.as_bytes());
            for diagnostic in findings(&before, rule.name) {
                for fix in &diagnostic.fixes {
                    let fixed = apply(&text, fix);
                    let after = analyze(&path, fixed.as_bytes());
                    if after.document.is_incomplete() {
                        problems.push(format!("{}: fix `{}` breaks the syntax", path.display(), fix.title));
                    }
                    let same_place = findings(&after, rule.name).into_iter().any(|d| d.message == diagnostic.message);
                    if same_place {
                        problems.push(format!(
                            "{}: fix `{}` leaves `{}`",
                            path.display(),
                            fix.title,
                            diagnostic.message
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
