//! What the black-box tests of the binary share.

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
