//! Latency of `oomlint server` from a `textDocument/didChange` to the
//! `textDocument/publishDiagnostics` carrying its version, on a 200-line TRL config with
//! a GPU set (so every change runs the estimator and the memory rules), over real stdio.
//!
//! Run with `cargo bench --bench lsp_latency`; target: median ≤ 2 ms.

use oomlint::format::Format;
use oomlint::schema::properties_at;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
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

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_oomlint"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start oomlint server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server { child, stdin, stdout }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("read header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = value.parse().expect("length");
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).expect("read body");
        serde_json::from_slice(&body).expect("JSON")
    }

    /// Reads until a message satisfies `wanted`.
    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.receive();
            if wanted(&message) {
                return message;
            }
        }
    }
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
    let mut server = Server::start();
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {}, "initializationOptions": {"oomlint": {"gpu": "A10G"}}}}));
    server.wait_for(|m| m["id"] == 1);
    server.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 0, "text": text}}}));
    let first = server.wait_for(|m| m["method"] == "textDocument/publishDiagnostics");
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
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    server.wait_for(|m| m["id"] == 2);
    server.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = server.child.wait();

    samples.sort();
    let median = percentile(&samples, 0.5);
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
