//! No unexplained errors on real configs: `oomlint check` runs over the published configs
//! of `../shared/corpus` and the configs, scripts and notebooks of `../shared/corpus-wild`
//! (as a user's checkout has them, with their dependency files), and every error-severity
//! finding must be listed in `tests/CORPUS_EXPECTED.tsv` or `tests/CORPUS_WILD_EXPECTED.tsv`
//! with the framework file and function that raises it. A finding that is not listed fails
//! the test (a false positive until someone shows otherwise), and so does a listed one that
//! no longer fires (the file stays honest). Skips with a notice when a corpus is absent.
//!
//! `OOMLINT_PRINT_CORPUS_FINDINGS=1 cargo test --test corpus_findings -- --nocapture`
//! prints every current error finding as TSV rows without reasons.

use oomlint::analysis::analyze_bytes;
use oomlint::diagnostic::{Diagnostic, Severity};
use oomlint::project::Project;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// (corpus path, rule, the text the finding points at).
type Key = (String, String, String);

fn expected(text: &str) -> BTreeMap<Key, usize> {
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() == 4 && !cols[3].trim().is_empty(), "expected 4 columns with a reason: {line}");
        *rows.entry((cols[0].to_string(), cols[1].to_string(), cols[2].to_string())).or_insert(0) += 1;
    }
    rows
}

/// What a finding points at, on one line (the key or value text, shortened).
fn subject(text: &str, d: &Diagnostic) -> String {
    let raw = text.get(d.span.start..d.span.end).unwrap_or_default();
    let line = raw.lines().next().unwrap_or_default().trim();
    line.chars().take(60).collect::<String>().replace('\t', " ")
}

/// Checks one corpus against its expectations file.
fn check_corpus(name: &str, expectations_file: &str, expectations: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(name);
    let Ok(manifest) = std::fs::read_to_string(dir.join("MANIFEST.tsv")) else {
        eprintln!("notice: ../shared/{name} is absent; skipping its findings test");
        return;
    };
    // As `oomlint check` reads a checkout: settings and pins from the files around each one.
    let project = Arc::new(Project::default());
    let mut actual: BTreeMap<Key, usize> = BTreeMap::new();
    let mut messages: BTreeMap<Key, String> = BTreeMap::new();
    for line in manifest.lines().skip(1) {
        let Some(path) = line.split('\t').next() else { continue };
        let file = dir.join(path);
        if oomlint::format::language_of(&file).is_none() {
            continue;
        }
        let bytes = std::fs::read(&file).expect("corpus file");
        let options = project.options(&file, None).expect("settings");
        let analysis = analyze_bytes(&file, &bytes, &options);
        for d in analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error) {
            let key = (path.to_string(), d.rule.to_string(), subject(&analysis.text, d));
            *actual.entry(key.clone()).or_insert(0) += 1;
            messages.insert(key, d.message.clone());
        }
    }
    if std::env::var_os("OOMLINT_PRINT_CORPUS_FINDINGS").is_some() {
        for ((path, rule, subject), count) in &actual {
            let message = &messages[&(path.clone(), rule.clone(), subject.clone())];
            for _ in 0..*count {
                println!("{path}\t{rule}\t{subject}\t{message}");
            }
        }
    }
    let expected = expected(expectations);
    let mut unexpected = Vec::new();
    for (key, count) in &actual {
        if expected.get(key).copied().unwrap_or(0) < *count {
            unexpected.push(format!("{}\t{}\t{}\t{}", key.0, key.1, key.2, messages[key]));
        }
    }
    let mut stale = Vec::new();
    for (key, count) in &expected {
        if actual.get(key).copied().unwrap_or(0) < *count {
            stale.push(format!("{}\t{}\t{}", key.0, key.1, key.2));
        }
    }
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for ((_, rule, _), count) in &actual {
        *by_rule.entry(rule).or_insert(0) += count;
    }
    eprintln!("{name} error findings by rule: {by_rule:?}");
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "error findings not in tests/{expectations_file} (false positives, or add them with the reason):\n{}\n\n\
         listed in tests/{expectations_file} but no longer reported (remove them):\n{}",
        unexpected.join("\n"),
        stale.join("\n")
    );
}

#[test]
fn every_error_on_the_published_corpus_is_expected() {
    check_corpus("corpus", "CORPUS_EXPECTED.tsv", include_str!("CORPUS_EXPECTED.tsv"));
}

#[test]
fn every_error_on_the_wild_corpus_is_expected() {
    check_corpus("corpus-wild", "CORPUS_WILD_EXPECTED.tsv", include_str!("CORPUS_WILD_EXPECTED.tsv"));
}
