//! Every registered rule has fixtures under `fixtures/rules/<rule-name>/`: each `fail*`
//! file must produce the rule and each `pass*` file must not. Fixes offered on a
//! `fail*` file must remove their own finding when applied.
//!
//! Each fixture with findings has one snapshot beside it,
//! `fixtures/rules/<rule-name>/snapshots/<fixture>.snap`: what `oomlint check` prints in
//! `full` format, then every fix the findings offer with the diff it makes applied alone.
//! A fixture without findings has no snapshot (and must stay without findings). After an
//! intended change: `INSTA_UPDATE=always cargo test --test rules`, then review the diff.
//!
//! Each rule's declared fix availability (`Always`, `Sometimes`, `None`) must match what
//! its findings on the fixtures offer.

mod common;

use common::{apply, oomlint};
use oomlint::analysis::{analyze_bytes, Analysis, Options};
use oomlint::diagnostic::{Applicability, Diagnostic, Fix};
use oomlint::rules::{FixAvailability, RULES};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
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
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .collect();
    files.sort();
    files
}

fn analyze(path: &Path, bytes: &[u8]) -> Analysis {
    // Named on the command line, as the binary the snapshots run names each fixture; the
    // files a launch script names are read beside it, as the binary reads them.
    let resolver: std::sync::Arc<dyn oomlint::model::Resolver> =
        std::sync::Arc::new(oomlint::project::Project::default());
    analyze_bytes(path, bytes, &Options { named_by_user: true, resolver: Some(resolver), ..Options::default() })
}

fn findings<'a>(analysis: &'a Analysis, rule: &str) -> Vec<&'a Diagnostic> {
    analysis.diagnostics.iter().filter(|d| d.rule == rule).collect()
}

/// Applies one fix's edits (non-overlapping byte ranges) to `text`.
/// The path from the repository root, with `/` separators.
fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).to_string_lossy().replace('\\', "/")
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
                    let after = match fixed_elsewhere(&path, &before, fix) {
                        Some(after) => after,
                        None => analyze(&path, apply(&text, fix).as_bytes()),
                    };
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

/// For a fix that edits a file the fixture is read with (a launch's DeepSpeed file): the
/// fixture and its linked files copied to the same paths under a temporary directory, each
/// fixed there, and the fixture analysed again. None for a fix of the fixture alone.
fn fixed_elsewhere(path: &Path, before: &Analysis, fix: &Fix) -> Option<Analysis> {
    let files = before.edits_by_file(&fix.edits).expect("every edit lies in a file the analysis read");
    if files.iter().all(|g| g.linked.is_none()) {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let under = |p: &Path| dir.path().join(p.strip_prefix("/").unwrap_or(p));
    let write = |p: &Path, text: &str, edits: Option<&Vec<oomlint::diagnostic::Edit>>| {
        let text = edits.map_or(text.to_string(), |edits| apply(text, &Fix { edits: edits.clone(), ..fix.clone() }));
        std::fs::create_dir_all(under(p).parent().unwrap()).unwrap();
        std::fs::write(under(p), text).unwrap();
    };
    let edits_of =
        |linked: Option<&str>| files.iter().find(|g| g.linked.map(|l| l.path.as_str()) == linked).map(|g| &g.edits);
    write(path, &before.text, edits_of(None));
    for linked in &before.linked_files {
        write(Path::new(&linked.path), &linked.text, edits_of(Some(&linked.path)));
    }
    let copy = under(path);
    Some(analyze(&copy, &std::fs::read(&copy).unwrap()))
}

// Snapshots beside the fixtures.

/// Lines of context around each change in a fix's diff.
const CONTEXT: usize = 2;

/// A unified diff of `old` → `new` by lines (hunk headers and ` `, `-`, `+` lines, no
/// file header): the common prefix and suffix, then a longest common subsequence of the
/// rest, which is a few lines for a fix.
fn unified_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    // common[i][j]: the longest common subsequence of a_mid[i..] and b_mid[j..].
    let mut common = vec![vec![0usize; b_mid.len() + 1]; a_mid.len() + 1];
    for i in (0..a_mid.len()).rev() {
        for j in (0..b_mid.len()).rev() {
            common[i][j] =
                if a_mid[i] == b_mid[j] { common[i + 1][j + 1] + 1 } else { common[i + 1][j].max(common[i][j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = a[..prefix].iter().map(|l| (' ', *l)).collect();
    let (mut i, mut j) = (0, 0);
    while i < a_mid.len() || j < b_mid.len() {
        if i < a_mid.len() && j < b_mid.len() && a_mid[i] == b_mid[j] {
            ops.push((' ', a_mid[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < a_mid.len() && (j == b_mid.len() || common[i + 1][j] >= common[i][j + 1]) {
            ops.push(('-', a_mid[i]));
            i += 1;
        } else {
            ops.push(('+', b_mid[j]));
            j += 1;
        }
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| (' ', *l)));

    let changed: Vec<usize> = ops.iter().enumerate().filter(|(_, (tag, _))| *tag != ' ').map(|(k, _)| k).collect();
    let lines = |ops: &[(char, &str)], skip: char| ops.iter().filter(|(tag, _)| *tag != skip).count();
    let mut out = String::new();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut last = changed[k];
        while k + 1 < changed.len() && changed[k + 1] <= last + 2 * CONTEXT + 1 {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let end = (last + 1 + CONTEXT).min(ops.len());
        let hunk = &ops[start..end];
        let (old_len, new_len) = (lines(hunk, '+'), lines(hunk, '-'));
        // An empty side starts at the line before the change, as in `diff -u`.
        let old_start = lines(&ops[..start], '+') + usize::from(old_len > 0);
        let new_start = lines(&ops[..start], '-') + usize::from(new_len > 0);
        let _ = writeln!(out, "@@ -{old_start},{old_len} +{new_start},{new_len} @@");
        for (tag, line) in hunk {
            out.push(*tag);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// 1-based line and column (in characters) of a byte offset.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

fn applicability(fix: &Fix) -> &'static str {
    match fix.applicability {
        Applicability::Safe => "safe",
        Applicability::Unsafe => "unsafe",
        Applicability::Display => "display only",
    }
}

/// The snapshot of one fixture: `oomlint check --output-format full` (exit code and
/// output), then each fix the findings offer, with its diff applied alone.
fn teaching_snapshot(file: &str, analysis: &Analysis) -> String {
    let out = oomlint(&["check", file, "--output-format", "full"]);
    let code = out.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(code == 0 || code == 1, "{file}: exit {code}: {}", String::from_utf8_lossy(&out.stderr));
    // The binary finds the same findings as the library: each starts with its code on a line.
    let printed: Vec<&str> = stdout.lines().filter(|l| l.len() == 6 && l.starts_with("OOM")).collect();
    let found: Vec<&str> = analysis.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(printed, found, "{file}: the binary and the library disagree:\n{stdout}");

    let mut text = format!("exit: {code}\n{stdout}");
    let fixes: Vec<(&Diagnostic, &Fix)> =
        analysis.diagnostics.iter().flat_map(|d| d.fixes.iter().map(move |f| (d, f))).collect();
    if fixes.is_empty() {
        text.push_str("\n── no fix offered\n");
    }
    for (n, (diagnostic, fix)) in fixes.iter().enumerate() {
        let (line, column) = position(&analysis.text, diagnostic.span.start);
        let _ = writeln!(
            text,
            "\n── fix {} of {}, {}: {}\n   for {} {} at {line}:{column}",
            n + 1,
            fixes.len(),
            applicability(fix),
            fix.title,
            diagnostic.code,
            diagnostic.rule,
        );
        // A fix of a launch may edit the file it names: each file's diff under its path.
        let files = analysis.edits_by_file(&fix.edits).expect("every edit lies in a file the analysis read");
        for group in files.iter().filter(|g| !g.edits.is_empty()) {
            let (before, fix) = match group.linked {
                Some(linked) => {
                    let _ = writeln!(text, "   in {}", relative(Path::new(&linked.path)));
                    (linked.text.as_str(), Fix { edits: group.edits.clone(), ..(*fix).clone() })
                }
                None => (analysis.text.as_str(), Fix { edits: group.edits.clone(), ..(*fix).clone() }),
            };
            let applied = oomlint::fix::apply(before, &[&fix]);
            assert_eq!(applied.count, 1, "{file}: fix `{}` does not apply", fix.title);
            text.push_str(&unified_diff(before, &applied.text));
        }
    }
    text
}

/// Every `.snap` file in `dir` (pending `.snap.new` files are insta's, not committed).
fn snapshot_files(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return BTreeSet::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|name| name.ends_with(".snap"))
        .collect()
}

#[test]
fn snapshots_beside_the_fixtures() {
    let mut problems = Vec::new();
    let (mut snapshotted, mut clean) = (0, 0);
    for rule in RULES {
        let dir = fixture_dir(rule.name);
        let snapshots = dir.join("snapshots");
        let mut expected = BTreeSet::new();
        for path in [fixtures(rule.name, "fail"), fixtures(rule.name, "pass")].concat() {
            let file = relative(&path);
            let name = path.file_name().and_then(|n| n.to_str()).expect("a file name").to_string();
            let analysis = analyze(&path, &std::fs::read(&path).expect("read fixture"));
            if analysis.diagnostics.is_empty() {
                // A clean fixture: nothing to show, and it must stay clean.
                clean += 1;
                assert!(name.starts_with("pass"), "{file}: a fail fixture without findings");
                continue;
            }
            snapshotted += 1;
            let snapshot = teaching_snapshot(&file, &analysis);
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path(&snapshots);
            settings.set_prepend_module_to_snapshot(false);
            settings.set_input_file(&path);
            settings.set_omit_expression(true);
            settings.set_description(format!(
                "oomlint check --output-format full {file}, then each fix offered, applied alone"
            ));
            // Every fixture is compared (and its pending snapshot written) before failing.
            let compared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                settings.bind(|| insta::assert_snapshot!(name.as_str(), snapshot))
            }));
            if compared.is_err() {
                problems.push(format!("{file}: the snapshot differs (see the .snap.new beside it)"));
            }
            expected.insert(format!("{name}.snap"));
        }
        for orphan in snapshot_files(&snapshots).difference(&expected) {
            problems.push(format!(
                "{}/{orphan}: no fixture with findings makes this snapshot (remove it)",
                relative(&snapshots)
            ));
        }
    }
    assert!(snapshotted > 0 && clean > 0, "{snapshotted} fixtures with findings, {clean} clean");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// Fix availability.

/// `Sometimes` rules whose fixtures show only one of the two cases, with the reason.
const SHOWN_ONE_WAY: &[(&str, &str)] = &[];

/// As ruff's test harness does: a rule declared `Always` offers a fix on every finding
/// in the fixtures, `None` on none, and `Sometimes` on some but not all.
#[test]
fn declared_fix_availability_matches_the_fixtures() {
    // rule → (a finding with a fix, a finding without), as fixture paths.
    let mut shown: BTreeMap<&str, (Option<String>, Option<String>)> = BTreeMap::new();
    for path in common::fixture_files() {
        let analysis = analyze(&path, &std::fs::read(&path).expect("read fixture"));
        for d in &analysis.diagnostics {
            let (with, without) = shown.entry(d.rule).or_default();
            let slot = if d.fixes.is_empty() { without } else { with };
            slot.get_or_insert_with(|| relative(&path));
        }
    }
    let mut problems = Vec::new();
    for rule in RULES {
        let (with, without) = shown.get(rule.name).cloned().unwrap_or_default();
        let one_way = SHOWN_ONE_WAY.iter().any(|(name, _)| *name == rule.name);
        match (rule.fix, with, without) {
            (FixAvailability::Always, _, Some(path)) => {
                problems.push(format!("{} is declared Always, but its finding in {path} has no fix", rule.name));
            }
            (FixAvailability::None, Some(path), _) => {
                problems.push(format!("{} is declared None, but its finding in {path} has a fix", rule.name));
            }
            (FixAvailability::Sometimes, None, _) if !one_way => {
                problems.push(format!("{} is declared Sometimes, but none of its findings has a fix", rule.name));
            }
            (FixAvailability::Sometimes, Some(path), None) if !one_way => {
                problems.push(format!(
                    "{} is declared Sometimes, but all of its findings have a fix (as in {path}): add a fixture \
                     without one",
                    rule.name
                ));
            }
            (FixAvailability::Sometimes, Some(_), Some(_)) if one_way => {
                problems.push(format!("{} is shown both ways now: remove it from SHOWN_ONE_WAY", rule.name));
            }
            _ => {}
        }
    }
    for (name, _) in SHOWN_ONE_WAY {
        if !RULES.iter().any(|r| r.name == *name && r.fix == FixAvailability::Sometimes) {
            problems.push(format!("SHOWN_ONE_WAY names {name}, which is not a Sometimes rule"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_diff_shows_changed_lines_with_context() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    let new = "a\nB\nc\nd\ne\nf\ng\nh\nI\nj";
    assert_eq!(
        unified_diff(old, new),
        "@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n@@ -7,3 +7,4 @@\n g\n h\n-i\n+I\n+j\n\\ No newline at end of file\n"
    );
    assert_eq!(unified_diff("a\nb\n", "a\nx\nb\n"), "@@ -1,2 +1,3 @@\n a\n+x\n b\n");
    assert_eq!(unified_diff("a\n", ""), "@@ -1,1 +0,0 @@\n-a\n");
    assert_eq!(unified_diff("a\n", "a\n"), "");
}
