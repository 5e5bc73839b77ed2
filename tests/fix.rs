//! The fix harness: for every fixture whose findings carry fixes, each fix keeps every
//! byte outside its edits, re-parses without a new syntax error and removes its own
//! finding; fixing the whole file converges. Plus `oomlint check --fix` end to end:
//! counts, permissions, and leaving the file untouched when it cannot be written.

mod common;

use common::oomlint;
use oomlint::analysis::{analyze_bytes, analyze_text, Analysis, Options};
use oomlint::diagnostic::{Applicability, Fix};
use oomlint::fix;
use std::path::{Path, PathBuf};

fn syntax_errors(analysis: &Analysis) -> usize {
    analysis.diagnostics.iter().filter(|d| d.rule == "yaml-syntax").count()
}

/// The bytes outside the fix's edits, in order, must appear unchanged in `fixed`.
fn outside_edits_unchanged(text: &str, fix: &Fix, fixed: &str) -> bool {
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| e.span.start);
    let (mut from, mut shift) = (0usize, 0isize);
    for edit in &edits {
        let kept = &text[from..edit.span.start];
        let at = (from as isize + shift) as usize;
        if fixed.get(at..at + kept.len()) != Some(kept) {
            return false;
        }
        shift += edit.content.len() as isize - edit.span.len() as isize;
        from = edit.span.end;
    }
    let tail = &text[from..];
    fixed.ends_with(tail) && fixed.len() as isize == text.len() as isize + shift
}

#[test]
fn every_fix_is_local_reparses_and_removes_its_finding() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for path in common::fixture_files() {
        let bytes = std::fs::read(&path).expect("read fixture");
        let options = Options::default();
        let analysis = analyze_bytes(&path, &bytes, &options);
        for diagnostic in &analysis.diagnostics {
            for fix in &diagnostic.fixes {
                checked += 1;
                let name = format!("{} ({}: {})", path.display(), diagnostic.rule, fix.title);
                let applied = fix::apply(&analysis.text, &[fix]);
                if applied.count != 1 {
                    problems.push(format!("{name}: fix was not applicable"));
                    continue;
                }
                if !outside_edits_unchanged(&analysis.text, fix, &applied.text) {
                    problems.push(format!("{name}: changed bytes outside its edits"));
                }
                let after = analyze_text(&path, applied.text, &options);
                if syntax_errors(&after) > syntax_errors(&analysis) {
                    problems.push(format!("{name}: introduced a syntax error"));
                }
                let count = |a: &Analysis| a.diagnostics.iter().filter(|d| d.rule == diagnostic.rule).count();
                if count(&after) >= count(&analysis) {
                    problems.push(format!("{name}: its finding is still there"));
                }
            }
        }
    }
    assert!(checked > 0, "no fixture offers a fix");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn fixing_every_fixture_converges() {
    for path in common::fixture_files() {
        let bytes = std::fs::read(&path).expect("read fixture");
        let analysis = analyze_bytes(&path, &bytes, &Options::default());
        if analysis.diagnostics.iter().all(|d| d.fixes.is_empty()) {
            continue;
        }
        let fixed = fix::fix_text(&path, &analysis.text, &Options::default(), Applicability::Unsafe);
        assert!(fixed.converged, "{}: still changing after {} rounds", path.display(), fixed.rounds);
        let again = fix::fix_text(&path, &fixed.text, &Options::default(), Applicability::Unsafe);
        assert_eq!(again.count, 0, "{}: fixing the fixed text changed it", path.display());
    }
}

/// Pins releases that removed the `removed-key` fixture's keys next to it: a rename is safe
/// only when the release that runs is known to have the new name.
fn pin_releases(dir: &Path) {
    std::fs::write(dir.join("requirements.txt"), "trl==1.9.0\ntransformers==5.0.0\n").unwrap();
}

fn copy_fixture(dir: &Path, fixture: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules").join(fixture);
    let target = dir.join(source.file_name().unwrap());
    std::fs::copy(&source, &target).unwrap();
    target
}

#[test]
fn check_fix_applies_safe_fixes_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = copy_fixture(dir.path(), "removed-key/fail.yaml");
    pin_releases(dir.path());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = std::fs::read_to_string(&file).unwrap();
    let out = oomlint(&["check", file.to_str().unwrap(), "--fix", "--output-format", "concise"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("applied 2 fix(es) to 1 file(s)"), "{stderr}");
    let after = std::fs::read_to_string(&file).unwrap();
    let expected = before.replace("torch_dtype:", "dtype:").replace("evaluation_strategy:", "eval_strategy:");
    assert_eq!(after, expected, "only the two keys change; comments and spacing stay");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("removed-key"), "reported after fixing");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 2, "no temporary file left: {leftovers:?}");
}

/// The launch fixture of `deepspeed-batch-arithmetic` and the DeepSpeed file it names, copied
/// into `dir`: (the script, the DeepSpeed file).
fn copy_launch(dir: &Path) -> (PathBuf, PathBuf) {
    std::fs::create_dir(dir.join("launch")).unwrap();
    let conf = copy_fixture(&dir.join("launch"), "deepspeed-batch-arithmetic/launch/ds_zero2.conf");
    (copy_fixture(dir, "deepspeed-batch-arithmetic/fail-launch-world.sh"), conf)
}

#[test]
fn a_fix_of_a_launch_is_written_where_the_value_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let (script, conf) = copy_launch(dir.path());
    let (script_before, conf_before) =
        (std::fs::read_to_string(&script).unwrap(), std::fs::read_to_string(&conf).unwrap());
    // Safe fixes only: this one changes the global batch the file wrote.
    oomlint(&["check", script.to_str().unwrap(), "--fix"]);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), conf_before);
    let out = oomlint(&["check", script.to_str().unwrap(), "--fix", "--unsafe-fixes", "--output-format", "concise"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("applied 1 fix(es) to 1 file(s)"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "the finding is gone: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read_to_string(&script).unwrap(), script_before, "the script is not edited");
    let expected = conf_before.replace("\"train_batch_size\": 64", "\"train_batch_size\": 32");
    assert_ne!(expected, conf_before);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), expected, "only the value changes");
}

#[test]
fn fixing_a_launch_and_the_file_it_names_in_one_run_writes_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let (script, conf) = copy_launch(dir.path());
    let conf_before = std::fs::read_to_string(&conf).unwrap();
    let paths = [conf.to_str().unwrap(), script.to_str().unwrap(), script.to_str().unwrap()];
    let out =
        oomlint(&["check", paths[0], paths[1], paths[2], "--fix", "--unsafe-fixes", "--output-format", "concise"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = conf_before.replace("\"train_batch_size\": 64", "\"train_batch_size\": 32");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), expected);
    let leftovers: Vec<_> =
        std::fs::read_dir(dir.path().join("launch")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

#[test]
fn a_rename_for_an_unpinned_release_needs_the_unsafe_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_fixture(dir.path(), "removed-key/fail.yaml");
    let before = std::fs::read_to_string(&file).unwrap();
    oomlint(&["check", file.to_str().unwrap(), "--fix"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "the installed release may lack the new names");
    oomlint(&["check", file.to_str().unwrap(), "--fix", "--unsafe-fixes"]);
    let expected = before.replace("torch_dtype:", "dtype:").replace("evaluation_strategy:", "eval_strategy:");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
}

#[test]
fn unsafe_fixes_need_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_fixture(dir.path(), "unknown-key/fail.yaml");
    let before = std::fs::read_to_string(&file).unwrap();
    let safe_only = oomlint(&["check", file.to_str().unwrap(), "--fix"]);
    assert_eq!(safe_only.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "did-you-mean renames are unsafe");
    let out = oomlint(&["check", file.to_str().unwrap(), "--fix", "--unsafe-fixes"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(after, before.replace("precison:", "precision:").replace("micro_batch_sise:", "micro_batch_size:"));
    assert_eq!(oomlint(&["check", file.to_str().unwrap(), "--unsafe-fixes"]).status.code(), Some(2));
}

#[test]
fn an_unwritable_file_is_left_untouched_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_fixture(dir.path(), "removed-key/fail.yaml");
    pin_releases(dir.path());
    let before = std::fs::read(&file).unwrap();
    // The temporary file's name is taken: the write must fail before touching the file.
    std::fs::create_dir(dir.path().join(".fail.yaml.oomlint-fix.tmp")).unwrap();
    let out = oomlint(&["check", file.to_str().unwrap(), "--fix"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write fixes"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_file_changed_since_it_was_read_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_fixture(dir.path(), "removed-key/fail.yaml");
    let read = std::fs::read(&file).unwrap();
    std::fs::write(&file, "model_name_or_path: edited-meanwhile\n").unwrap();
    let error = oomlint::write::write_atomically(&file, &read, "fixed\n").unwrap_err();
    assert!(matches!(error, oomlint::write::WriteError::ChangedSinceRead(_)), "{error}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "model_name_or_path: edited-meanwhile\n");
}

#[test]
fn fixes_write_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_fixture(dir.path(), "removed-key/fail.yaml");
    pin_releases(dir.path());
    let link = dir.path().join("link.yaml");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let out = oomlint(&["check", link.to_str().unwrap(), "--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&file).unwrap().contains("eval_strategy: steps"));
}

/// Truncated configs (an editor mid-typing) never make fixing panic.
///
/// Convergence is not asserted here yet: an empty YAML value (`use_peft:` at the end of a
/// truncated file) has its span at the end of the key, before the colon, so a fix that
/// fills it writes `use_peft true:` and the finding stays. Assert `converged` once the
/// syntax layer places empty values after the colon.
#[test]
fn fixing_truncated_fixtures_does_not_panic() {
    for path in common::fixture_files() {
        let text = std::fs::read_to_string(&path).expect("read fixture");
        for step in 1..8 {
            let mut cut = text.len() * step / 8;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            fix::fix_text(&path, &text[..cut], &Options::default(), Applicability::Unsafe);
        }
    }
}
