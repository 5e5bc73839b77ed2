//! No unexplained errors or warnings on real configs: `oomlint check` runs over the published
//! configs of `../shared/corpus` and the configs, scripts and notebooks of `../shared/corpus-wild`
//! (as a user's checkout has them, with their dependency files). Every error-severity finding
//! must be listed in `tests/CORPUS_EXPECTED.tsv` or `tests/CORPUS_WILD_EXPECTED.tsv` with the
//! framework file and function that raises it; every warning in `tests/CORPUS_WARNINGS.tsv` or
//! `tests/CORPUS_WILD_WARNINGS.tsv` with the framework file and line it mirrors (or, for a
//! warning about oomlint's own knowledge such as `unknown-model`, exactly that). A finding that
//! is not listed fails the test (a false positive until someone shows otherwise), and so does a
//! listed one that no longer fires (the files stay honest). Skips with a notice when a corpus
//! is absent.
//!
//! `OOMLINT_PRINT_CORPUS_FINDINGS=1 cargo test --test corpus_findings -- --nocapture`
//! prints every current error and warning finding as TSV rows, with the message in place of
//! the reason, under a line naming the expectations file they belong in.

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

/// The findings of one severity: how many times each key fires, and its message.
#[derive(Default)]
struct Findings {
    count: BTreeMap<Key, usize>,
    message: BTreeMap<Key, String>,
}

/// Runs `oomlint check` over one corpus and keeps its errors and warnings; `None` when absent.
fn findings(name: &str) -> Option<(Findings, Findings)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(name);
    let Ok(manifest) = std::fs::read_to_string(dir.join("MANIFEST.tsv")) else {
        eprintln!("notice: ../shared/{name} is absent; skipping its findings test");
        return None;
    };
    // As `oomlint check` reads a checkout: settings and pins from the files around each one.
    let project = Arc::new(Project::default());
    let (mut errors, mut warnings) = (Findings::default(), Findings::default());
    for line in manifest.lines().skip(1) {
        let Some(path) = line.split('\t').next() else { continue };
        let file = dir.join(path);
        if oomlint::format::language_of(&file).is_none() {
            continue;
        }
        let bytes = std::fs::read(&file).expect("corpus file");
        let options = project.options(&file, None).expect("settings");
        let analysis = analyze_bytes(&file, &bytes, &options);
        for d in &analysis.diagnostics {
            let found = match d.severity {
                Severity::Error => &mut errors,
                Severity::Warning => &mut warnings,
                _ => continue,
            };
            let key = (path.to_string(), d.rule.to_string(), subject(&analysis.text, d));
            *found.count.entry(key.clone()).or_insert(0) += 1;
            found.message.insert(key, d.message.clone());
        }
    }
    Some((errors, warnings))
}

/// Compares the findings of one severity with their expectations file; the complaint, if any.
fn check(name: &str, severity: &str, actual: &Findings, expectations_file: &str, expectations: &str) -> String {
    if std::env::var_os("OOMLINT_PRINT_CORPUS_FINDINGS").is_some() {
        println!("# tests/{expectations_file}");
        for (key @ (path, rule, subject), count) in &actual.count {
            for _ in 0..*count {
                println!("{path}\t{rule}\t{subject}\t{}", actual.message[key]);
            }
        }
    }
    let expected = expected(expectations);
    let mut unexpected = Vec::new();
    for (key, count) in &actual.count {
        if expected.get(key).copied().unwrap_or(0) < *count {
            unexpected.push(format!("{}\t{}\t{}\t{}", key.0, key.1, key.2, actual.message[key]));
        }
    }
    let mut stale = Vec::new();
    for (key, count) in &expected {
        if actual.count.get(key).copied().unwrap_or(0) < *count {
            stale.push(format!("{}\t{}\t{}", key.0, key.1, key.2));
        }
    }
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for ((_, rule, _), count) in &actual.count {
        *by_rule.entry(rule).or_insert(0) += count;
    }
    eprintln!("{name} {severity} findings by rule: {by_rule:?}");
    if unexpected.is_empty() && stale.is_empty() {
        return String::new();
    }
    format!(
        "{severity} findings not in tests/{expectations_file} (false positives, or add them with the reason):\n{}\n\n\
         listed in tests/{expectations_file} but no longer reported (remove them):\n{}\n\n",
        unexpected.join("\n"),
        stale.join("\n")
    )
}

#[test]
fn every_error_and_warning_on_the_published_corpus_is_expected() {
    let Some((errors, warnings)) = findings("corpus") else { return };
    let complaints = check("corpus", "error", &errors, "CORPUS_EXPECTED.tsv", include_str!("CORPUS_EXPECTED.tsv"))
        + &check("corpus", "warning", &warnings, "CORPUS_WARNINGS.tsv", include_str!("CORPUS_WARNINGS.tsv"));
    assert!(complaints.is_empty(), "{complaints}");
}

#[test]
fn every_error_and_warning_on_the_wild_corpus_is_expected() {
    let Some((errors, warnings)) = findings("corpus-wild") else { return };
    let wild = "corpus-wild";
    let complaints =
        check(wild, "error", &errors, "CORPUS_WILD_EXPECTED.tsv", include_str!("CORPUS_WILD_EXPECTED.tsv"))
            + &check(wild, "warning", &warnings, "CORPUS_WILD_WARNINGS.tsv", include_str!("CORPUS_WILD_WARNINGS.tsv"));
    assert!(complaints.is_empty(), "{complaints}");
}
