//! What the black-box tests of the binary share.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `oomlint` binary from the repository root (so fixture paths are relative), without colour.
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
