//! Reads one config from standard input and prints what the core makes of it: the
//! format, the estimate and every finding, one per line.
//!
//! `cargo run -p oomlint-core --example analyze_stdin -- NAME < FILE`, where NAME is the
//! file name the text goes by (its extension picks the language: `.py`, `.yaml`, …). The
//! core never opens NAME. tests/wasm/build.sh builds this for wasm32-wasip1 and checks
//! that under a WASI runtime it prints what the native build prints.

// An example is a leaf, not the library: it reads stdin and writes stdout, which the
// core's clippy.toml forbids in the core itself.
#![allow(clippy::disallowed_methods, clippy::disallowed_macros)]

use oomlint_core::analysis::{analyze_bytes, Options};
use oomlint_core::span::ColumnUnit;
use std::io::Read;
use std::path::Path;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "config.yaml".to_owned());
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("analyze_stdin: reading stdin: {e}");
        std::process::exit(2);
    }
    let analysis = analyze_bytes(Path::new(&name), &bytes, &Options::default());
    println!("format: {}", analysis.format);
    println!("language: {:?}", analysis.document.language);
    match &analysis.estimate {
        Some(estimate) => println!(
            "estimate: {} parameters ({} trainable), peak {} on the device ({:?})",
            estimate.parameters,
            estimate.trainable_parameters,
            oomlint_core::estimate::format_bytes(estimate.peak.device_bytes),
            estimate.peak.phase
        ),
        None => println!("estimate: none"),
    }
    for d in &analysis.diagnostics {
        let at = analysis.line_index.position(&analysis.text, d.span.start, ColumnUnit::Char);
        println!(
            "{}:{}:{}: {} {} {}: {}",
            name,
            at.line + 1,
            at.column + 1,
            d.severity.as_str(),
            d.code,
            d.rule,
            d.message
        );
    }
    println!("findings: {}", analysis.diagnostics.len());
}
