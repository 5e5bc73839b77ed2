//! Writes each schema of `schema/` without its documentation keywords to
//! `$OUT_DIR/schema-lean/` (see `src/schema/lean.rs`); the binary validates with
//! those and keeps the full ones for hover and completion.

// The build script is not the library: it reads schema/ and writes OUT_DIR at build time,
// so the core's no-I/O rules (clippy.toml) do not apply to it.
#![allow(clippy::disallowed_methods, clippy::disallowed_macros)]

use std::path::PathBuf;

#[path = "src/schema/lean.rs"]
mod lean;

fn main() {
    println!("cargo:rerun-if-changed=../../schema");
    println!("cargo:rerun-if-changed=src/schema/lean.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("schema-lean");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/schema-lean");
    let entries = std::fs::read_dir("../../schema").expect("read schema/");
    for path in entries.map(|e| e.expect("read schema/").path()) {
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read a schema");
        let schema: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        let name = path.file_name().expect("a file name");
        std::fs::write(out.join(name), serde_json::to_string(&lean::lean(&schema)).expect("serialize"))
            .expect("write a lean schema");
    }
}
