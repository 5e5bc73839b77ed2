//! Latency of `oomlint server` from a `textDocument/didChange` to the
//! `textDocument/publishDiagnostics` carrying its version, on a 200-line TRL config with
//! a GPU set (so every change runs the estimator and the memory rules), over real stdio.
//!
//! Run with `cargo bench --bench lsp_latency`; target: median ≤ 2 ms. To compare releases,
//! `OOMLINT_BENCH_BINARY=/path/to/other/oomlint` runs the same session against that binary.

#[path = "lsp_session.rs"]
mod lsp_session;

use lsp_session::Server;
use oomlint::format::Format;
use oomlint::schema::properties_at;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const LINES: usize = 200;
const CHANGES: usize = 300;
const WARMUP: usize = 20;

/// The TRL fixture, padded to [`LINES`] with schema keys set to their defaults.
fn config() -> String {
    let base = include_str!("../../fixtures/trl/sft-qwen2.5-7b.yaml");
    let mut text = base.to_string();
    let mut lines = text.lines().count();
    for property in properties_at(Format::TrlSft, &[]) {
        if lines >= LINES {
            break;
        }
        let scalar = match &property.default {
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        if text.contains(&format!("\n{}:", property.name)) || property.deprecated {
            continue;
        }
        text.push_str(&format!("{}: {scalar}\n", property.name));
        lines += 1;
    }
    while lines < LINES {
        text.push_str("# padding comment to reach the benchmark's line count\n");
        lines += 1;
    }
    text
}

/// The median time of the core analysis the server runs on every change.
fn analysis_median(text: &str) -> Duration {
    let gpu = oomlint::catalog::resolve_gpu("A10G").expect("A10G is in the catalog").clone();
    let options = oomlint::analysis::Options { gpu: Some(gpu), ..Default::default() };
    let mut samples: Vec<Duration> = (0..CHANGES)
        .map(|_| {
            let started = Instant::now();
            let analysis = oomlint::analysis::analyze_text(Path::new("/bench/sft.yaml"), text.to_string(), &options);
            std::hint::black_box(analysis.diagnostics.len());
            started.elapsed()
        })
        .collect();
    samples.sort();
    percentile(&samples, 0.5)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let text = config();
    let uri = "file:///bench/sft.yaml";
    let binary = std::env::var("OOMLINT_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_oomlint").to_string());
    let (mut server, first) = Server::open(&binary, uri, &text);
    let findings = first["params"]["diagnostics"].as_array().map_or(0, Vec::len);

    let mut samples = Vec::with_capacity(CHANGES);
    for version in 1..=(WARMUP + CHANGES) as i64 {
        let batch = if version % 2 == 0 { "2" } else { "4" };
        let changed = text.replace("per_device_train_batch_size: 2", &format!("per_device_train_batch_size: {batch}"));
        let started = Instant::now();
        server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": changed}]}}));
        server.wait_for(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version);
        if version > WARMUP as i64 {
            samples.push(started.elapsed());
        }
    }
    server.close();

    samples.sort();
    let median = percentile(&samples, 0.5);
    println!("server: {binary}");
    println!(
        "didChange → publishDiagnostics, {} lines, {} findings, {} changes: median {:.3} ms, p90 {:.3} ms, max {:.3} ms",
        text.lines().count(),
        findings,
        samples.len(),
        median.as_secs_f64() * 1e3,
        percentile(&samples, 0.9).as_secs_f64() * 1e3,
        percentile(&samples, 1.0).as_secs_f64() * 1e3,
    );
    println!("analysis alone (in process, same text): median {:.3} ms", analysis_median(&text).as_secs_f64() * 1e3);
    let verdict = if median <= Duration::from_millis(2) { "met" } else { "missed" };
    println!("target median ≤ 2 ms: {verdict}");
}
