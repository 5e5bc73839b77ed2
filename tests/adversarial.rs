//! Hostile input against the real binary: each case must be answered with a finding
//! (exit 1) or a one-line error (exit 2), never a crash, a hang or unbounded memory.
//! When `prlimit` is installed the binary runs under it: at most [`CPU_SECONDS`] of CPU
//! time (so a loaded machine does not fail the case, a slow algorithm does) and
//! [`MEMORY_LIMIT`] bytes of address space; past either the kernel kills it or an
//! allocation aborts, which fails the case. A wall-clock guard catches a process blocked
//! forever. The limits are listed in the README ("Limits").

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// CPU seconds one case may use.
const CPU_SECONDS: u64 = 5;
/// The address space one run may map (the README's "Limits" names the same figure).
const MEMORY_LIMIT: u64 = 1 << 30;
/// A run still alive after this long is blocked, not slow.
const HANG_GUARD: Duration = Duration::from_secs(60);

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    /// The findings of the only file checked.
    fn diagnostics(&self) -> Vec<Value> {
        self.json()["files"][0]["diagnostics"].as_array().cloned().unwrap_or_default()
    }
}

fn prlimit_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let found = Command::new("prlimit").arg("--version").output().is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("notice: prlimit not found; adversarial cases run without CPU and memory limits");
        }
        found
    })
}

/// Starts `oomlint ARGS` under the limits, with piped stdio.
fn spawn(args: &[&str]) -> Child {
    let binary = env!("CARGO_BIN_EXE_oomlint");
    let mut command = if prlimit_available() {
        let mut c = Command::new("prlimit");
        c.arg(format!("--as={MEMORY_LIMIT}")).arg(format!("--cpu={CPU_SECONDS}")).arg("--").arg(binary);
        c
    } else {
        Command::new(binary)
    };
    command
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start oomlint")
}

/// Reads a child's stream to the end on a thread.
fn collect(mut stream: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        bytes
    })
}

/// Waits for `child`, killing it past the hang guard; a signal (CPU limit, abort) fails.
fn wait(child: &mut Child, what: &str) -> ExitStatus {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after {HANG_GUARD:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.code().is_some(), "{what} was killed ({status}): over {CPU_SECONDS} s of CPU or out of memory");
    status
}

/// Runs `oomlint ARGS` with `stdin` under the limits.
fn oomlint(args: &[&str], stdin: &[u8]) -> Outcome {
    let mut child = spawn(args);
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = collect(child.stdout.take().expect("stdout"));
    let err = collect(child.stderr.take().expect("stderr"));
    let status = wait(&mut child, &format!("oomlint {args:?}"));
    let _ = writer.join();
    Outcome {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned(),
    }
}

/// Writes `content` to a fresh file named `name` and checks it with JSON output.
fn check_file(name: &str, content: &[u8]) -> Outcome {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, content).expect("write input");
    oomlint(&["check", path.to_str().expect("UTF-8 path"), "--output-format", "json"], b"")
}

/// A TRL SFT config head, so detection has something to recognise before the hostile part.
const SFT_HEAD: &str = "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 4\n";

fn assert_finding(outcome: &Outcome, code: &str, message_part: &str) {
    assert_eq!(outcome.code, Some(1), "exit code; stderr: {}", outcome.stderr);
    let found = outcome
        .diagnostics()
        .iter()
        .any(|d| d["code"] == code && d["message"].as_str().is_some_and(|m| m.contains(message_part)));
    assert!(found, "no {code} mentioning {message_part:?} in {:?}", outcome.diagnostics());
}

fn assert_usage_error(outcome: &Outcome, message_part: &str) {
    assert_eq!(outcome.code, Some(2), "exit code; stdout: {}", outcome.stdout);
    let stderr = outcome.stderr.trim();
    assert!(stderr.contains(message_part), "stderr {stderr:?} lacks {message_part:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn alias_bomb_is_cut_at_the_expansion_budget() {
    let mut text = String::from(SFT_HEAD);
    text.push_str("a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
    for (name, previous) in
        ["b", "c", "d", "e", "f", "g", "h", "i"].iter().zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let items = vec![format!("*{previous}"); 9].join(", ");
        text.push_str(&format!("{name}: &{name} [{items}]\n"));
    }
    assert_finding(&check_file("bomb.yaml", text.as_bytes()), "OOM001", "alias expansion");
}

#[test]
fn flow_nesting_200000_deep_stops_at_the_depth_limit() {
    let text = format!("{SFT_HEAD}nested: {}{}\n", "[".repeat(200_000), "]".repeat(200_000));
    let outcome = check_file("deep.yaml", text.as_bytes());
    assert_finding(&outcome, "OOM001", "");
    assert_eq!(
        outcome.diagnostics().iter().find(|d| d["code"] == "OOM001").expect("syntax")["range"]["start"]["line"],
        3
    );
    // JSON stops before building anything, so the format comes from the project settings.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("oomlint.toml"), "[format]\n\"*.json\" = \"deepspeed\"\n").expect("settings");
    let path = dir.path().join("ds_config.json");
    let json = format!("{{\"train_batch_size\": 8, \"x\": {}{}}}", "[".repeat(200_000), "]".repeat(200_000));
    std::fs::write(&path, json).expect("write input");
    let outcome = oomlint(&["check", path.to_str().expect("UTF-8 path"), "--output-format", "json"], b"");
    assert_finding(&outcome, "OOM001", "nesting deeper than 128 levels");
}

#[test]
fn block_nesting_5000_deep_stops_at_the_depth_limit() {
    let mut text = String::from(SFT_HEAD);
    for depth in 0..5_000 {
        text.push_str(&" ".repeat(depth));
        text.push_str("level:\n");
    }
    assert_finding(&check_file("deep-block.yaml", text.as_bytes()), "OOM001", "nesting deeper");
}

#[test]
fn a_20_mb_file_is_refused_unread() {
    let mut text = String::from(SFT_HEAD);
    let line = "# padding padding padding padding padding padding padding padding padding\n";
    while text.len() < 20 << 20 {
        text.push_str(line);
    }
    assert_finding(&check_file("huge.yaml", text.as_bytes()), "OOM006", "over the 16 MiB limit");
}

#[test]
fn invalid_utf8_and_nul_bytes_are_refused_at_the_offending_byte() {
    let mut bytes = SFT_HEAD.as_bytes().to_vec();
    bytes.extend_from_slice(b"output_dir: \xff\xfe out\n");
    let outcome = check_file("latin1.yaml", &bytes);
    assert_finding(&outcome, "OOM006", "not valid UTF-8");
    assert_eq!(outcome.diagnostics()[0]["range"]["start"]["line"], 3);

    let mut bytes = SFT_HEAD.as_bytes().to_vec();
    bytes.extend_from_slice(b"output_dir: out\0\n");
    assert_finding(&check_file("nul.yaml", &bytes), "OOM006", "NUL byte");
}

#[test]
fn a_bom_with_crlf_line_ends_is_read_with_correct_positions() {
    let text =
        "\u{feff}model_name_or_path: Qwen/Qwen2.5-0.5B\r\nper_device_train_batch_size: 4\r\nlearnin_rate: 2e-5\r\n";
    let outcome = check_file("sft.yaml", text.as_bytes());
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr);
    let unknown = outcome.diagnostics().into_iter().find(|d| d["rule"] == "unknown-key").expect("unknown-key finding");
    assert_eq!(unknown["range"]["start"], json!({"line": 3, "column": 1}));
    assert_eq!(unknown["range"]["end"], json!({"line": 3, "column": 13}));
}

#[test]
fn tab_indentation_is_a_syntax_finding_on_the_tab() {
    let text =
        "checkpoint_dir: checkpoints/EleutherAI/pythia-160m\nprecision: bf16-true\ntrain:\n\tmicro_batch_size: 4\n";
    let outcome = check_file("full.yaml", text.as_bytes());
    assert_finding(&outcome, "OOM001", "tab");
    let syntax = &outcome.diagnostics()[0];
    assert_eq!(syntax["range"]["start"], json!({"line": 4, "column": 1}));
}

#[test]
fn integers_beyond_64_bits_are_checked_not_wrapped() {
    // Read as the huge numbers they are: a range check still applies, a sign never flips.
    let text = format!(
        "{SFT_HEAD}zero_stage: 340282366920938463463374607431768211456\ngradient_accumulation_steps: -99999999999999999999999\n"
    );
    let outcome = check_file("sft.yaml", text.as_bytes());
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr);
    for (line, key) in [(3, "zero_stage"), (4, "gradient_accumulation_steps")] {
        let found = outcome.diagnostics().iter().any(|d| {
            d["code"] == "OOM004"
                && d["range"]["start"]["line"] == line
                && d["message"].as_str().is_some_and(|m| m.contains(key))
        });
        assert!(found, "{key} out of range: {:?}", outcome.diagnostics());
    }
    let json = r#"{"train_micro_batch_size_per_gpu": 18446744073709551616, "gradient_accumulation_steps": 1e400}"#;
    let outcome = check_file("ds_config.json", json.as_bytes());
    assert!(matches!(outcome.code, Some(0 | 1)), "{}", outcome.stderr);
    assert_eq!(outcome.json()["files"][0]["format"], "deepspeed");
}

/// A YAML value whose type none of `allowed` (JSON Schema type names) accepts.
fn wrong_value(allowed: &[&str]) -> &'static str {
    if allowed.contains(&"object") {
        "[1, 2]"
    } else {
        "{wrong: type}"
    }
}

/// The JSON Schema types a property accepts (`type`, or the union of `anyOf`).
fn allowed_types(property: &Value) -> Vec<&str> {
    let choices = property["anyOf"].as_array().into_iter().flatten().map(|choice| &choice["type"]);
    std::iter::once(&property["type"])
        .chain(choices)
        .flat_map(|t| match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn every_trl_grpo_key_with_a_wrong_type_is_reported() {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/trl-grpo.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema")).expect("JSON");
    let properties = schema["properties"].as_object().expect("properties");
    let mut text = String::from("# oomlint: format=trl-grpo\n");
    let mut keys = Vec::new();
    for (name, property) in properties {
        let allowed = allowed_types(property);
        if allowed.is_empty() {
            continue;
        }
        text.push_str(&format!("{name}: {}\n", wrong_value(&allowed)));
        keys.push(name.clone());
    }
    assert!(keys.len() > 200, "the schema lists its types ({} keys)", keys.len());
    let outcome = check_file("grpo.yaml", text.as_bytes());
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr);
    let reported: std::collections::HashSet<u64> =
        outcome.diagnostics().iter().filter_map(|d| d["range"]["start"]["line"].as_u64()).collect();
    let missed: Vec<&String> =
        keys.iter().enumerate().filter(|(i, _)| !reported.contains(&(*i as u64 + 2))).map(|(_, k)| k).collect();
    assert!(missed.is_empty(), "keys with a wrong type and no finding: {missed:?}");
}

#[test]
fn an_allocator_string_of_20000_entries_is_answered() {
    // Concise output: 20,000 findings as JSON would measure the serializer, not the parser.
    let check = |text: String| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("cluster.env");
        std::fs::write(&path, text).expect("write input");
        oomlint(&["check", path.to_str().expect("UTF-8 path"), "--output-format", "concise"], b"")
    };
    let repeated: Vec<String> = (0..20_000).map(|i| format!("max_split_size_mb:{}", 128 + i)).collect();
    let outcome = check(format!("PYTORCH_CUDA_ALLOC_CONF={}\n", repeated.join(",")));
    assert!(matches!(outcome.code, Some(0 | 1)), "{}", outcome.stderr);
    assert!(outcome.stdout.contains("is set again later"), "duplicates reported");
    let unknown: Vec<String> = (0..20_000).map(|i| format!("key{i}:1")).collect();
    let outcome = check(format!("PYTORCH_CUDA_ALLOC_CONF={}\n", unknown.join(",")));
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr);
    assert!(outcome.stdout.contains("'key19999'"), "the last entry is read");
}

#[test]
fn a_missing_path_is_a_usage_error() {
    let outcome = oomlint(&["check", "/nonexistent/oomlint/config.yaml"], b"");
    assert_usage_error(&outcome, "cannot read /nonexistent/oomlint/config.yaml");
    for command in ["estimate", "plan", "explain"] {
        let outcome = oomlint(&[command, "/nonexistent/oomlint/config.yaml"], b"");
        assert_usage_error(&outcome, "/nonexistent/oomlint/config.yaml");
    }
}

#[test]
fn a_directory_given_as_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().to_str().expect("UTF-8 path");
    for args in
        [vec!["estimate", path], vec!["plan", path], vec!["explain", path], vec!["check", "--config", path, path]]
    {
        let outcome = oomlint(&args, b"");
        assert_usage_error(&outcome, path);
    }
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Sends each frame the server reads to `out` until it closes its output.
fn read_frames(stdout: impl Read, out: std::sync::mpsc::Sender<Value>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            match line.trim_end().strip_prefix("Content-Length: ") {
                Some(n) => length = n.parse().unwrap_or(0),
                None if line.trim_end().is_empty() => break,
                None => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let message = serde_json::from_slice(&body).expect("the server writes JSON");
        if out.send(message).is_err() {
            return;
        }
    }
}

/// Waits for the reply to request `id`, keeping every message seen in `seen`.
fn reply(incoming: &Receiver<Value>, seen: &mut Vec<Value>, id: Value) -> Value {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        if let Some(found) = seen.iter().find(|m| m["id"] == id && m.get("method").is_none()) {
            return found.clone();
        }
        let left = deadline.saturating_duration_since(Instant::now());
        seen.push(incoming.recv_timeout(left).unwrap_or_else(|e| panic!("no reply to {id} ({e}); seen {seen:?}")));
    }
}

#[test]
fn a_garbled_language_server_session_keeps_answering() {
    let uri = "file:///nonexistent-oomlint/sft.yaml";
    let far = json!({"line": 4_000_000_000u32, "character": 4_000_000_000u32});
    let mut child = spawn(&["server"]);
    let mut stdin = child.stdin.take().expect("stdin");
    let (tx, incoming) = channel();
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || read_frames(stdout, tx));
    let _stderr = collect(child.stderr.take().expect("stderr"));
    let mut send = |bytes: &[u8]| stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("server reads");
    let mut seen = Vec::new();

    send(&frame(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}).to_string(),
    ));
    reply(&incoming, &mut seen, json!(1));
    send(&frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    send(&frame(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
        {"uri": uri, "languageId": "yaml", "version": 1, "text": SFT_HEAD}}})
        .to_string(),
    ));
    send(&frame("{this is not json"));
    send(&frame(r#"{"id": 2, "method": 7}"#));
    send(b"garbage between frames\r\n");
    send(&frame(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": "file:///never/opened.yaml", "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "x"}]}}).to_string()));
    send(&frame(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 3},
        "contentChanges": [{"range": {"start": far, "end": far}, "text": "learnin_rate: 1\n"}]}})
        .to_string(),
    ));
    send(&frame(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": far}})
        .to_string(),
    ));
    send(&frame(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": "file:///never/opened.yaml"}, "position": {"line": 0, "character": 0}}})
        .to_string(),
    ));
    send(&frame(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion",
        "params": {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 0}}})
        .to_string(),
    ));

    assert_eq!(reply(&incoming, &mut seen, Value::Null)["error"]["code"], -32700, "invalid JSON: parse error");
    assert_eq!(reply(&incoming, &mut seen, json!(2))["error"]["code"], -32600, "not JSON-RPC: invalid request");
    assert!(reply(&incoming, &mut seen, json!(3)).get("result").is_some(), "a hover past the end is answered");
    assert_eq!(reply(&incoming, &mut seen, json!(4))["result"], Value::Null, "a hover on an unknown document");
    let completion = reply(&incoming, &mut seen, json!(5));
    assert!(completion["result"].as_array().is_some_and(|items| !items.is_empty()), "{completion}");
    let published = seen
        .iter()
        .rfind(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .expect("diagnostics published");
    assert_eq!(published["params"]["version"], 3, "the out-of-range edit clamps to the end and applies");
    assert!(published["params"]["diagnostics"].to_string().contains("learnin_rate"), "{published}");

    send(&frame(r#"{"jsonrpc":"2.0","id":6,"method":"shutdown"}"#));
    reply(&incoming, &mut seen, json!(6));
    send(&frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
    drop(stdin);
    assert_eq!(wait(&mut child, "oomlint server").code(), Some(0), "a clean exit after the garbage");
    let _ = reader.join();
}

/// The path of a file under the repository's fixtures.
fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(path)
}

#[test]
fn an_ordinary_config_runs_under_the_same_limits() {
    let path = fixture("litgpt/qlora-precision.yaml");
    let outcome = oomlint(&["check", path.to_str().expect("UTF-8 path"), "--output-format", "json"], b"");
    assert!(outcome.diagnostics().iter().any(|d| d["code"] == "OOM101"), "{:?}", outcome.diagnostics());
}

/// Runs `oomlint ARGS` under `strace -f` for network and exec calls; returns the trace,
/// or `None` (with a notice) where strace is missing or not permitted.
fn trace(args: &[&str], stdin: &[u8]) -> Option<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("trace");
    let mut child = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=network,execve", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_oomlint"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    wait(&mut child, "strace oomlint");
    let trace = std::fs::read_to_string(&log).ok().filter(|t| t.contains("execve("));
    if trace.is_none() {
        eprintln!("notice: strace is missing or cannot trace here; the no-network check is skipped");
    }
    trace
}

#[test]
fn oomlint_opens_no_socket_and_runs_no_command() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let fixtures = fixtures.to_str().expect("UTF-8 path");
    let lora = fixture("litgpt/llama-2-7b-lora.yaml");
    let log = fixture("logs/multi-rank-torchrun.log");
    let session = [
        frame(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}).to_string()),
        frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
    ]
    .concat();
    let runs: [(Vec<&str>, &[u8]); 4] = [
        (vec!["check", fixtures, "--gpu", "A10G", "--output-format", "json"], b""),
        (vec!["estimate", lora.to_str().expect("UTF-8 path"), "--gpu", "A10G"], b""),
        (vec!["explain", log.to_str().expect("UTF-8 path")], b""),
        (vec!["server"], &session),
    ];
    for (args, stdin) in runs {
        let Some(trace) = trace(&args, stdin) else { return };
        let calls: Vec<&str> = trace.lines().filter(|l| !l.contains("+++ exited") && !l.contains("--- SIG")).collect();
        let execs = calls.iter().filter(|l| l.contains("execve(")).count();
        assert_eq!(execs, 1, "oomlint {args:?} runs only itself:\n{trace}");
        let network: Vec<&&str> = calls.iter().filter(|l| !l.contains("execve(")).collect();
        assert!(network.is_empty(), "oomlint {args:?} made network calls:\n{trace}");
    }
}
