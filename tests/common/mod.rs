//! What the black-box tests of the binary share.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `oomlint` binary from the repository root (so fixture paths are relative), without colour.
#[allow(dead_code)] // each test binary compiles this module; not all of them run the binary
pub fn oomlint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run oomlint")
}

/// Every fixture file oomlint reads, under `fixtures/`, sorted.
#[allow(dead_code)] // each test binary compiles this module; not all of them walk the fixtures
pub fn fixture_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if oomlint::format::language_of(&path).is_some() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `text` with the edits of `fix` applied, the last first so the earlier offsets hold.
#[allow(dead_code)] // each test binary compiles this module; not all of them apply fixes
pub fn apply(text: &str, fix: &oomlint::diagnostic::Fix) -> String {
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut out = text.to_string();
    for edit in edits {
        out.replace_range(edit.span.start..edit.span.end, &edit.content);
    }
    out
}
