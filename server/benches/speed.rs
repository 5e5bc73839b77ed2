//! Speed, side by side in one run, printed as the Markdown of `tests/bench/SPEED.md`:
//! - `oomlint check` over `../shared/corpus` versus `check-jsonschema` (PyPI) parsing the
//!   same YAML/JSON/TOML files against an empty schema, per file (target: ≥ 50× faster);
//! - `didChange` → `publishDiagnostics` latency on a 200-line config (target: median ≤ 2 ms);
//! - cold start of `oomlint --version`;
//! - peak memory (max RSS) of the corpus check, through GNU time.
//!
//! The corpus runs report wall time and CPU time (user + system, through GNU time): on a
//! shared machine the CPU time is the steadier figure. `oomlint check` analyses files on
//! all cores, which shortens the wall time but not the CPU time; a run pinned to one core
//! (`taskset -c 0`, where installed) shows the one-core wall time. The load average is
//! printed at the start and at the end. The corpus runs of both tools alternate, round by
//! round, so that a change in load falls on both.
//!
//! Run: `cargo bench --bench speed > tests/bench/SPEED.md`. check-jsonschema is installed
//! into a cache venv outside the repository (`$XDG_CACHE_HOME` or `~/.cache`,
//! `oomlint-bench/venv`) on first use; without Python or PyPI that row says why it is missing.

#[path = "lsp_session.rs"]
mod lsp_session;

use lsp_session::Server;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const OOMLINT: &str = env!("CARGO_BIN_EXE_oomlint");
/// Rounds of corpus runs (each tool once per round); the median is reported.
const CORPUS_RUNS: usize = 11;
const COLD_STARTS: usize = 50;
const LSP_LINES: usize = 200;
const LSP_CHANGES: usize = 300;
const LSP_WARMUP: usize = 20;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Runs a command to completion, discarding its output; returns the wall time.
fn timed(command: &mut Command) -> Duration {
    let started = Instant::now();
    let status = command.stdout(Stdio::null()).stderr(Stdio::null()).status().expect("run benchmark command");
    assert!(status.code().is_some(), "{command:?} was killed");
    started.elapsed()
}

const GNU_TIME: &str = "/usr/bin/time";
const TASKSET: &str = "/usr/bin/taskset";

/// Wall time of one run, and its CPU time (user + system) where GNU time is installed.
struct Timing {
    wall: Duration,
    cpu: Option<Duration>,
}

/// Runs `program ARGS` (under GNU time when it is there) and times it.
fn timed_with_cpu(program: &Path, args: &[&std::ffi::OsStr]) -> Timing {
    let report = std::env::temp_dir().join(format!("oomlint-bench-time-{}", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let wall = if Path::new(GNU_TIME).exists() {
        timed(Command::new(GNU_TIME).arg("-o").arg(&report).args(["-f", "%U %S"]).arg(program).args(args))
    } else {
        timed(Command::new(program).args(args))
    };
    let seconds: Option<f64> = std::fs::read_to_string(&report)
        .ok()
        .and_then(|text| text.lines().last()?.split_whitespace().map(|n| n.parse::<f64>().ok()).sum());
    let _ = std::fs::remove_file(&report);
    Timing { wall, cpu: seconds.map(Duration::from_secs_f64) }
}

/// Median wall and CPU time of each command over `runs` rounds, after one warm-up round;
/// a round runs every command once, so a change in the machine's load during the
/// benchmark falls on all of them alike.
fn interleaved_timings(runs: usize, commands: &[&dyn Fn() -> Timing]) -> Vec<Timing> {
    for run in commands {
        run();
    }
    let mut samples: Vec<Vec<Timing>> = commands.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        for (run, samples) in commands.iter().zip(&mut samples) {
            samples.push(run());
        }
    }
    samples
        .into_iter()
        .map(|timings| {
            let cpu: Option<Vec<Duration>> = timings.iter().map(|t| t.cpu).collect();
            Timing { wall: median(timings.iter().map(|t| t.wall).collect()), cpu: cpu.map(median) }
        })
        .collect()
}

fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// The corpus files both tools read: YAML, JSON and TOML (check-jsonschema reads no shell or env files).
fn corpus_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ["yaml", "yml", "json", "toml"].contains(&e))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// check-jsonschema from a cache venv, installed on first use.
fn check_jsonschema() -> Result<PathBuf, String> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
        .ok_or("no cache directory (HOME unset)")?;
    let venv = cache.join("oomlint-bench/venv");
    let tool = venv.join("bin/check-jsonschema");
    if tool.exists() {
        return Ok(tool);
    }
    let ok = |c: &mut Command| c.stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok(Command::new("python3").args(["-m", "venv"]).arg(&venv)) {
        return Err("python3 -m venv failed".into());
    }
    if !ok(Command::new(venv.join("bin/pip")).args(["install", "--quiet", "check-jsonschema"])) {
        return Err("pip install check-jsonschema failed".into());
    }
    Ok(tool)
}

/// Max RSS in KiB of `oomlint ARGS`, through GNU time (`None` without it).
fn max_rss_kib(args: &[&std::ffi::OsStr]) -> Option<u64> {
    let output = Command::new(GNU_TIME).args(["-f", "%M", OOMLINT]).args(args).stdout(Stdio::null()).output().ok()?;
    String::from_utf8_lossy(&output.stderr).lines().last()?.trim().parse().ok()
}

struct Row {
    measure: String,
    oomlint: String,
    other: String,
    target: String,
    verdict: String,
}

fn corpus_rows(rows: &mut Vec<Row>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let files = corpus_files(&root);
    if files.is_empty() {
        eprintln!("notice: {} not found; corpus rows skipped", root.display());
        return;
    }
    let n = files.len() as u32;
    let oomlint_args: Vec<&std::ffi::OsStr> = ["check", "--output-format", "json"]
        .iter()
        .map(|a| a.as_ref())
        .chain(files.iter().map(|f| f.as_os_str()))
        .collect();
    let schema = std::env::temp_dir().join(format!("oomlint-bench-empty-schema-{}.json", std::process::id()));
    std::fs::write(&schema, "{}").expect("write empty schema");
    let their_args: Vec<&std::ffi::OsStr> = [std::ffi::OsStr::new("--schemafile"), schema.as_os_str()]
        .into_iter()
        .chain(files.iter().map(|f| f.as_os_str()))
        .collect();
    let pinned_args: Vec<&std::ffi::OsStr> =
        ["-c", "0", OOMLINT].iter().map(|a| a.as_ref()).chain(oomlint_args.iter().copied()).collect();
    let tool = check_jsonschema();
    let run_ours = || timed_with_cpu(Path::new(OOMLINT), &oomlint_args);
    let run_pinned = || timed_with_cpu(Path::new(TASKSET), &pinned_args);
    let run_theirs = || timed_with_cpu(tool.as_ref().expect("check-jsonschema"), &their_args);
    let mut commands: Vec<&dyn Fn() -> Timing> = vec![&run_ours];
    if Path::new(TASKSET).exists() {
        commands.push(&run_pinned);
    }
    if tool.is_ok() {
        commands.push(&run_theirs);
    }
    let mut timings = interleaved_timings(CORPUS_RUNS, &commands).into_iter();
    let _ = std::fs::remove_file(&schema);
    let ours = timings.next().expect("oomlint's timing");
    let pinned = if Path::new(TASKSET).exists() { timings.next() } else { None };
    let theirs = tool.map(|_| timings.next().expect("check-jsonschema's timing"));
    let per_file = |time: Duration| ms(time / n);
    let compare = |ours: Duration, theirs: Option<Duration>| match theirs {
        Some(theirs) => {
            let ratio = theirs.as_secs_f64() / ours.as_secs_f64();
            (
                format!("{} ({ratio:.0}×)", per_file(ours)),
                per_file(theirs),
                if ratio >= 50.0 { "met" } else { "missed" },
            )
        }
        None => (per_file(ours), String::new(), "n/a"),
    };
    let missing = |why: &String| format!("n/a: {why}");
    let (oomlint, other, verdict) = compare(ours.wall, theirs.as_ref().ok().map(|t| t.wall));
    rows.push(Row {
        measure: format!(
            "corpus check, per file, wall time ({n} YAML/JSON/TOML files, one process; median of {CORPUS_RUNS})"
        ),
        oomlint,
        other: theirs.as_ref().err().map_or(other, missing),
        target: "≥ 50× faster".into(),
        verdict: verdict.into(),
    });
    if let Some(cpu) = ours.cpu {
        let (oomlint, other, _) = compare(cpu, theirs.as_ref().ok().and_then(|t| t.cpu));
        rows.push(Row {
            measure: "corpus check, per file, CPU time (user + system)".into(),
            oomlint,
            other: theirs.as_ref().err().map_or(other, missing),
            target: String::new(),
            verdict: String::new(),
        });
    }
    if let Some(pinned) = pinned {
        let (oomlint, other, _) = compare(pinned.wall, theirs.as_ref().ok().map(|t| t.wall));
        rows.push(Row {
            measure: "corpus check, per file, wall time on one core (`taskset -c 0`: no parallelism)".into(),
            oomlint,
            other: theirs.as_ref().err().map_or(other, missing),
            target: String::new(),
            verdict: String::new(),
        });
    }
    rows.push(Row {
        measure: "corpus check, whole run, wall time".into(),
        oomlint: ms(ours.wall),
        other: theirs.as_ref().map_or_else(missing, |t| ms(t.wall)),
        target: String::new(),
        verdict: String::new(),
    });
    let mut args: Vec<&std::ffi::OsStr> = vec!["check".as_ref(), "--output-format".as_ref(), "json".as_ref()];
    args.push(root.as_os_str());
    let rss =
        max_rss_kib(&args).map_or("n/a (no /usr/bin/time)".into(), |kib| format!("{:.1} MiB", kib as f64 / 1024.0));
    rows.push(Row {
        measure: "peak memory (max RSS) of `oomlint check` over the whole corpus".into(),
        oomlint: rss,
        other: String::new(),
        target: String::new(),
        verdict: String::new(),
    });
}

fn cold_start_row(rows: &mut Vec<Row>) {
    let runs: Vec<Duration> = (0..COLD_STARTS).map(|_| timed(Command::new(OOMLINT).arg("--version"))).collect();
    let fastest = runs.iter().min().copied().unwrap_or_default();
    rows.push(Row {
        measure: format!("cold start, `oomlint --version` (median of {COLD_STARTS}; fastest {})", ms(fastest)),
        oomlint: ms(median(runs)),
        other: String::new(),
        target: String::new(),
        verdict: String::new(),
    });
}

/// A 200-line TRL config: the fixture padded with settings and comments.
fn lsp_config() -> String {
    let mut text = include_str!("../../fixtures/trl/sft-qwen2.5-7b.yaml").to_string();
    let extra = ["logging_steps: 10", "save_steps: 500", "seed: 42", "warmup_ratio: 0.03", "weight_decay: 0.0"];
    for line in extra {
        if !text.contains(&format!("\n{}", line.split(':').next().unwrap_or(line))) {
            text.push_str(line);
            text.push('\n');
        }
    }
    while text.lines().count() < LSP_LINES {
        text.push_str("# padding comment to reach the benchmark's line count\n");
    }
    text
}

fn lsp_row(rows: &mut Vec<Row>) {
    let text = lsp_config();
    let uri = "file:///bench/sft.yaml";
    let (mut server, _) = Server::open(OOMLINT, uri, &text);
    // One incremental edit per change: the batch size's digit, alternating 2 and 4.
    let (line, column) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.strip_prefix("per_device_train_batch_size: ").map(|_| (i, l.len() - 1)))
        .expect("the fixture sets per_device_train_batch_size");
    let mut samples = Vec::with_capacity(LSP_CHANGES);
    for version in 1..=(LSP_WARMUP + LSP_CHANGES) as i64 {
        let digit = if version % 2 == 0 { "2" } else { "4" };
        let range =
            json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 1}});
        let started = Instant::now();
        server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": digit}]}}));
        server.wait_for(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version);
        if version > LSP_WARMUP as i64 {
            samples.push(started.elapsed());
        }
    }
    server.close();
    samples.sort();
    let median = percentile(&samples, 0.5);
    rows.push(Row {
        measure: format!(
            "`didChange` → `publishDiagnostics`, {}-line TRL config, GPU set ({} changes; p90 {}, max {})",
            text.lines().count(),
            samples.len(),
            ms(percentile(&samples, 0.9)),
            ms(percentile(&samples, 1.0))
        ),
        oomlint: format!("{} median", ms(median)),
        other: String::new(),
        target: "median ≤ 2 ms".into(),
        verdict: if median <= Duration::from_millis(2) { "met" } else { "missed" }.into(),
    });
}

fn main() {
    let load_at_start = load_average();
    let mut rows = Vec::new();
    corpus_rows(&mut rows);
    lsp_row(&mut rows);
    cold_start_row(&mut rows);
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("# oomlint speed\n");
    println!(
        "`cargo bench --bench speed` (release build), one run, {cores} cores, load average (1, 5, 15 min) \
         at the start: {load_at_start}; at the end: {}.",
        load_average()
    );
    println!("check-jsonschema parses the same files against an empty schema (`{{}}`), all in one process, as pre-commit runs it.\n");
    println!("| measure | oomlint | check-jsonschema | target | verdict |");
    println!("|---|---|---|---|---|");
    for row in rows {
        println!("| {} | {} | {} | {} | {} |", row.measure, row.oomlint, row.other, row.target, row.verdict);
    }
}
