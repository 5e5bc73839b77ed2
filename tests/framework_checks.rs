//! oomlint's verl and OpenRLHF errors against the frameworks' own start-up checks.
//!
//! `tests/framework_checks/verl.tsv` and `openrlhf.tsv` hold, for every fixture of the verl
//! and OpenRLHF rules, the verdict of the framework's own validation code run on CPU by
//! `verl_validate.py` and `openrlhf_validate.py` beside them (their docstrings give the
//! command that regenerates each table; `AGREEMENT.md` is the readable summary). For each row
//! the framework could run, oomlint must report an error exactly when the framework rejected
//! the config, and that error must come from the fixture's own rule. Rows marked `not-run`
//! (a check that needs GPUs, a value only known at run time) are only required to exist.

mod common;

use common::oomlint;
use serde_json::Value;
use std::path::Path;

struct Row {
    fixture: String,
    verdict: String,
    message: String,
}

fn rows(table: &str) -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/framework_checks").join(table);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{table}: no {name}"));
    let (fixture, verdict, message) = (column("fixture"), column("verdict"), column("message"));
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            let cell = |i: usize| cells.get(i).copied().unwrap_or("").to_string();
            Row { fixture: cell(fixture), verdict: cell(verdict), message: cell(message) }
        })
        .collect()
}

/// (rule, message) of each error `oomlint check` reports for `fixture`.
fn errors(fixture: &str) -> Vec<(String, String)> {
    let out = oomlint(&["check", fixture, "--output-format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    report["files"][0]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| (d["rule"].as_str().unwrap().to_string(), d["message"].as_str().unwrap().to_string()))
        .collect()
}

fn fixtures_of(prefix: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules");
    let mut out = Vec::new();
    for rule in std::fs::read_dir(&dir).expect("fixtures/rules").flatten() {
        let name = rule.file_name().to_string_lossy().to_string();
        if !name.starts_with(prefix) {
            continue;
        }
        for file in std::fs::read_dir(rule.path()).expect("rule dir").flatten() {
            let path = file.path();
            if path.is_file() && path.extension().is_some_and(|e| e == "sh") {
                out.push(format!("fixtures/rules/{name}/{}", file.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out
}

fn check(table: &str, prefix: &str) {
    let rows = rows(table);
    let listed: Vec<&str> = rows.iter().map(|r| r.fixture.as_str()).collect();
    let missing: Vec<String> = fixtures_of(prefix).into_iter().filter(|f| !listed.contains(&f.as_str())).collect();
    assert!(missing.is_empty(), "fixtures without a row in {table} (rerun its script): {missing:?}");

    let mut problems = Vec::new();
    let mut compared = 0;
    for row in &rows {
        let rejected = match row.verdict.as_str() {
            "reject" => true,
            "pass" => false,
            "not-run" => continue,
            other => panic!("{table}: {}: unknown verdict {other}", row.fixture),
        };
        compared += 1;
        let rule = row.fixture.split('/').nth(2).unwrap_or_default();
        let errors = errors(&row.fixture);
        if rejected && !errors.iter().any(|(r, _)| r == rule) {
            problems.push(format!(
                "{}: the framework rejects it ({}), oomlint has no {rule} error",
                row.fixture, row.message
            ));
        }
        if !rejected && !errors.is_empty() {
            problems.push(format!("{}: the framework accepts it, oomlint reports {errors:?}", row.fixture));
        }
    }
    assert!(compared > 0, "{table}: no row the framework ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn verl_errors_agree_with_verls_own_checks() {
    check("verl.tsv", "verl-");
}

#[test]
fn openrlhf_errors_agree_with_openrlhfs_own_checks() {
    check("openrlhf.tsv", "openrlhf-");
}
