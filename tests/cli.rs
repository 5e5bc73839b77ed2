//! Black-box tests of the `oomlint` binary: exit codes, and each output format on a few
//! representative files (snapshots in `tests/snapshots/`). What every rule reports and
//! fixes is snapshotted beside its fixtures (`tests/rules.rs`).

use std::collections::BTreeSet;
use std::path::Path;
mod common;

use common::oomlint;
use std::process::Output;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The output formats, as `--output-format` names them.
const FORMATS: [&str; 5] = ["full", "concise", "json", "github", "sarif"];

/// What each format is shown on: YAML with two safe fixes, JSON with related labels, a
/// notebook (positions in cells), one run over a shell script (safe and unsafe fixes)
/// and a clean file, and a memory finding (its breakdown is a note, not labels).
const CASES: &[(&str, &[&str])] = &[
    ("yaml-fixes", &["fixtures/rules/removed-key/fail.yaml"]),
    ("memory-note", &["fixtures/rules/exceeds-gpu-memory/fail-fixable.yaml"]),
    ("json-related", &["fixtures/rules/deepspeed-batch-arithmetic/fail.json"]),
    ("notebook", &["fixtures/python/unsloth-grpo.ipynb"]),
    ("two-files", &["fixtures/rules/alloc-conf-invalid/fail-range.sh", "fixtures/rules/unknown-key/pass.yaml"]),
];

/// SARIF without its rules table (every rule's documentation, checked in `tests/sarif.rs`)
/// and with the tool's version left out, so that neither a doc edit nor a release changes
/// the snapshot.
fn sarif_without_rules_table(text: &str) -> String {
    let mut sarif: serde_json::Value = serde_json::from_str(text).expect("SARIF is JSON");
    for run in sarif["runs"].as_array_mut().expect("runs") {
        let driver = &mut run["tool"]["driver"];
        let count = driver["rules"].as_array().map_or(0, Vec::len);
        driver["rules"] = format!("[{count} rules, not shown]").into();
        driver["version"] = "[version]".into();
    }
    serde_json::to_string_pretty(&sarif).expect("serialize") + "\n"
}

#[test]
fn every_format_on_representative_files() {
    for (case, files) in CASES {
        for format in FORMATS {
            let mut args = vec!["check", "--output-format", format];
            args.extend_from_slice(files);
            let out = oomlint(&args);
            let code = out.status.code().unwrap_or(-1);
            assert!(code == 0 || code == 1, "{files:?}: exit {code}: {}", String::from_utf8_lossy(&out.stderr));
            let text = if format == "sarif" { sarif_without_rules_table(&stdout(&out)) } else { stdout(&out) };
            let mut settings = insta::Settings::clone_current();
            settings.set_description(format!("oomlint {}", args.join(" ")));
            settings.set_omit_expression(true);
            settings.bind(|| insta::assert_snapshot!(format!("{format}@{case}"), format!("exit: {code}\n{text}")));
        }
    }
}

/// The example configs outside `fixtures/rules/` and `fixtures/python/` (covered by their
/// own snapshots): one line per finding, none for the many clean ones.
/// `estimate` on a run it judges tight: the solver's `fits` is the verdict's (10 % free), so
/// it has no micro batch to offer and says so in words (it printed "largest micro batch that
/// fits: 0"), and the sequence lever sets the length the solver found (it offered half the
/// length, 652, beside the solver's 1024).
#[test]
fn estimate_gives_one_answer_for_what_fits() {
    let out = oomlint(&["estimate", "fixtures/rules/low-memory-headroom/fail.yaml"]);
    let text = stdout(&out);
    assert!(text.contains("tight (under 10 % headroom)"), "{text}");
    assert!(text.contains("largest micro batch that fits: none (not even 1)"), "{text}");
    assert!(!text.contains("fits: 0"), "{text}");
    let longest = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("longest sequence that fits at this micro batch: "))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no longest sequence: {text}"));
    assert!(text.contains(&format!("Shorten the maximum sequence length to {longest} ")), "{text}");
    assert!(!text.contains("to 652"), "{text}");
}

/// The memory finding's vLLM lever and `vllm-memory-overcommit`'s fix name one fraction: the
/// largest that leaves the verdict's headroom.
#[test]
fn the_vllm_fraction_has_one_answer() {
    for file in
        ["fixtures/rules/vllm-memory-overcommit/fail.yaml", "fixtures/rules/vllm-memory-overcommit/fail-unsloth.py"]
    {
        let out = oomlint(&["check", file, "--output-format", "json"]);
        let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        let mut fractions = std::collections::BTreeMap::new();
        for d in json["files"][0]["diagnostics"].as_array().expect("diagnostics") {
            for fix in d["fixes"].as_array().into_iter().flatten() {
                if let Some(rest) =
                    fix["title"].as_str().and_then(|t| t.strip_prefix("Lower the vLLM memory fraction to "))
                {
                    let value = rest.split_whitespace().next().unwrap_or_default().to_string();
                    fractions.insert(d["code"].as_str().unwrap_or_default().to_string(), value);
                }
            }
        }
        assert_eq!(fractions.len(), 2, "{file}: both findings offer the fraction: {fractions:?}");
        let values: std::collections::BTreeSet<_> = fractions.values().collect();
        assert_eq!(values.len(), 1, "{file}: one answer: {fractions:?}");
    }
}

/// A hub id that no catalog entry, local directory or cache knows, but whose name gives a
/// known family and a size, is estimated from a shape sized from its name, says so in the
/// JSON and the table, and gets the wider band; a name without a size stays unknown and
/// says which steps were tried.
#[test]
fn a_stated_longest_sample_sizes_batches_that_take_their_length_from_the_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nper_device_train_batch_size: 4\nmax_length: 4096\n\
                  bf16: true\nuse_peft: true\nlora_r: 16\nload_in_4bit: true\ngradient_checkpointing: true\n";
    let estimate = |header: &str| {
        let path = dir.path().join("sft.yaml");
        std::fs::write(&path, format!("{header}{config}")).expect("write config");
        let out = oomlint(&["estimate", path.to_str().expect("utf-8 path"), "--gpu", "T4", "--format", "json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    let at_most = estimate("");
    let stated = estimate("# oomlint: sample-tokens=600\n");
    let peak = |e: &serde_json::Value| e["peak"]["device_bytes"].as_u64().expect("peak");
    assert!(peak(&stated) < peak(&at_most), "{stated}");
    let said = stated["missing_inputs"].as_array().expect("missing inputs").iter().filter_map(|m| m.as_str());
    assert!(
        said.into_iter().any(|m| m.starts_with(
            "sample lengths: the longest sample holds 600 tokens, as `# oomlint: sample-tokens=600` states"
        )),
        "{stated}"
    );
    // With the length known, the verdict no longer waits on the data.
    assert_eq!((&at_most["fit"]["verdict"], &stated["fit"]["verdict"]), (&"may-exceed".into(), &"fits".into()));
}

#[test]
fn estimate_sizes_a_model_from_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = |model: &str| {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python/unsloth-sft.py"))
                .expect("fixture")
                .replace("unsloth/Meta-Llama-3.1-8B-bnb-4bit", model);
        let path = dir.path().join("train.py");
        std::fs::write(&path, text).expect("write script");
        path
    };
    let run = |path: &Path, format: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_oomlint"))
            .args(["estimate", path.to_str().expect("utf-8 path"), "--gpu", "H100-80GB", "--format", format])
            .env("HF_HOME", dir.path().join("no-cache"))
            .env("HF_HUB_CACHE", dir.path().join("no-cache"))
            .env("NO_COLOR", "1")
            .output()
            .expect("run oomlint")
    };
    let path = script("unsloth/Qwen3.6-27B");
    let out = run(&path, "json");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let source = json["model"]["source"].as_str().unwrap_or_default();
    assert!(source.starts_with("sized from its name (family Qwen3.5, nearest catalog member Qwen3.5-27B;"), "{json}");
    let parameters = json["model"]["parameters"].as_u64().unwrap_or_default();
    assert!((24_300_000_000..29_700_000_000).contains(&parameters), "{json}");
    // Unsloth's own ±30 % and the name's ±35 %, in quadrature: ±46 % before fragmentation.
    let (low, high) = (json["band"]["low"].as_f64().unwrap_or(0.0), json["band"]["high"].as_f64().unwrap_or(0.0));
    assert!(low <= -0.46 && high >= 0.46, "{json}");
    let table = stdout(&run(&path, "table"));
    assert!(table.contains("architecture sized from its name (family Qwen3.5"), "{table}");

    // A dated release the catalog has under another date takes that release's shape.
    let path = script("unsloth/Magistral-Small-2509-unsloth-bnb-4bit");
    let json: serde_json::Value = serde_json::from_str(&stdout(&run(&path, "json"))).expect("json");
    let source = json["model"]["source"].as_str().unwrap_or_default();
    assert!(source.contains("another release of Magistral-Small-2506"), "{json}");

    let path = script("EssentialAI/rnj-1-instruct");
    let out = run(&path, "json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "tried a local directory, the local Hugging Face cache, the catalog, and its name (its name gives no size)"
        ),
        "{stderr}"
    );
}

#[test]
fn findings_on_the_example_configs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut dirs: Vec<String> = std::fs::read_dir(&root)
        .expect("fixtures")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|name| !["rules", "python", "logs"].contains(&name.as_str()))
        .map(|name| format!("fixtures/{name}"))
        .collect();
    dirs.sort();
    let mut args = vec!["check", "--output-format", "concise"];
    args.extend(dirs.iter().map(String::as_str));
    let out = oomlint(&args);
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 1, "exit {code}: {}", String::from_utf8_lossy(&out.stderr));
    let mut settings = insta::Settings::clone_current();
    settings.set_description("oomlint check --output-format concise fixtures/<each directory but rules, python, logs>");
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!("example_configs", format!("exit: {code}\n{}", stdout(&out))));
}

/// Every `cli__*` and `lsp__*` file in `tests/snapshots/` is one a test still writes
/// (`python__*` files are checked in `tests/python.rs`).
#[test]
fn no_orphan_snapshots() {
    let mut expected: BTreeSet<String> = CASES
        .iter()
        .flat_map(|(case, _)| FORMATS.iter().map(move |format| format!("cli__{format}@{case}.snap")))
        .collect();
    expected.insert("cli__example_configs.snap".to_string());
    expected.extend(EXPLAIN_CASES.iter().map(|(case, _)| format!("cli__explain@{case}.snap")));
    let lsp = include_str!("lsp.rs");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(dir).expect("tests/snapshots").filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".snap") else { continue };
        let written = if let Some(lsp_name) = stem.strip_prefix("lsp__") {
            lsp.contains(&format!("assert_snapshot!(\"{lsp_name}\""))
        } else {
            !name.starts_with("cli__") || expected.contains(&name)
        };
        if !written {
            orphans.push(name);
        }
    }
    orphans.sort();
    assert!(orphans.is_empty(), "snapshots no test writes (remove them): {orphans:?}");
}

#[test]
fn exit_codes() {
    assert_eq!(oomlint(&["check", "fixtures/trl/sft-qwen2.5-7b.yaml"]).status.code(), Some(0));
    let missing = oomlint(&["check", "fixtures/does-not-exist.yaml"]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(stderr.lines().count(), 1, "one-line message: {stderr}");
    assert!(stderr.contains("does-not-exist.yaml"));
    assert_eq!(oomlint(&["check", "--output-format", "xml", "fixtures"]).status.code(), Some(2));
    assert_eq!(oomlint(&["rule", "no-such-rule"]).status.code(), Some(2));
}

#[test]
fn syntax_errors_fail_and_point_at_the_tab() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lora.yaml");
    std::fs::write(&file, "checkpoint_dir: x\ntrain:\n\tmicro_batch_size: 4\n").unwrap();
    let out = oomlint(&["check", file.to_str().unwrap(), "--output-format", "concise"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains(":3:1: OOM001 yaml-syntax:"), "{text}");
}

#[test]
fn directories_are_walked_honouring_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "ignored/\n").unwrap();
    std::fs::create_dir_all(dir.path().join("configs")).unwrap();
    std::fs::create_dir_all(dir.path().join("ignored")).unwrap();
    let dup = "model_name_or_path: x\nbf16: true\nbf16: true\n";
    std::fs::write(dir.path().join("configs/sft.yaml"), dup).unwrap();
    std::fs::write(dir.path().join("ignored/sft.yaml"), dup).unwrap();
    std::fs::write(dir.path().join("notes.txt"), dup).unwrap();
    let out = oomlint(&["check", dir.path().to_str().unwrap(), "--output-format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<&str> = report["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with("configs/sft.yaml"));
    let rules: Vec<&str> =
        report["files"][0]["diagnostics"].as_array().unwrap().iter().map(|d| d["rule"].as_str().unwrap()).collect();
    assert!(rules.contains(&"duplicate-key"), "{rules:?}");
}

/// The rule names of each file in a JSON report, by file name.
fn rules_by_file(out: &Output) -> Vec<(String, Vec<String>)> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let name = f["path"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            let rules =
                f["diagnostics"].as_array().unwrap().iter().map(|d| d["rule"].as_str().unwrap().into()).collect();
            (name, rules)
        })
        .collect()
}

#[test]
fn a_named_file_that_is_not_recognised_gets_a_note_and_walks_stay_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let ci = dir.path().join("ci.yaml");
    std::fs::write(&ci, "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n").unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "a: [1, 2\n").unwrap();
    let named = oomlint(&["check", ci.to_str().unwrap(), dir.path().join("broken.yaml").to_str().unwrap()]);
    let text = stdout(&named);
    assert!(text.contains("unrecognized-file") && text.contains("not checked: oomlint does not take it"), "{text}");
    assert!(text.contains("OOM001"), "a named YAML file that does not parse is an error (yaml-syntax): {text}");
    assert!(text.contains("0 file(s) checked, 2 not training config(s): 1 error(s)"), "{text}");
    assert_eq!(named.status.code(), Some(1));

    let walked = oomlint(&["check", dir.path().to_str().unwrap()]);
    assert!(
        stdout(&walked).contains("0 file(s) checked, 2 not training config(s), no problems"),
        "{}",
        stdout(&walked)
    );
    let hook = oomlint(&["check", "--skip-unrecognized", ci.to_str().unwrap(), "--output-format", "json"]);
    assert_eq!(rules_by_file(&hook), [("ci.yaml".to_string(), Vec::<String>::new())]);
}

#[test]
fn excluded_files_are_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let dup = "model_name_or_path: x\nbf16: true\nbf16: true\n";
    for sub in ["configs", "helm", "legacy"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join("sft.yaml"), dup).unwrap();
    }
    std::fs::write(dir.path().join("oomlint.toml"), "exclude = [\"helm\"]\n").unwrap();
    let legacy = format!("{}/legacy/**", dir.path().display());
    let out = oomlint(&["check", dir.path().to_str().unwrap(), "--exclude", &legacy, "--output-format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<&str> = report["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    let configs: Vec<&&str> = files.iter().filter(|f| f.ends_with("sft.yaml")).collect();
    assert_eq!(configs.len(), 1, "{files:?}");
    assert!(configs[0].ends_with("configs/sft.yaml"), "{files:?}");
    // A file the settings exclude is skipped even when named (pre-commit names every file).
    let named = oomlint(&["check", dir.path().join("helm/sft.yaml").to_str().unwrap(), "--output-format", "json"]);
    assert!(rules_by_file(&named).is_empty());
}

#[test]
fn unreadable_input_is_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("weights.yaml");
    std::fs::write(&file, b"a: 1\n\xff\xfe").unwrap();
    let out = oomlint(&["check", file.to_str().unwrap(), "--output-format", "concise"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("OOM006 unreadable-input: file is not valid UTF-8 (byte 5)"), "{}", stdout(&out));
}

#[test]
fn rules_are_listed_and_documented() {
    let list = stdout(&oomlint(&["rules"]));
    assert!(list.contains("OOM001  yaml-syntax"));
    let doc = oomlint(&["rule", "OOM002"]);
    assert_eq!(doc.status.code(), Some(0));
    assert!(stdout(&doc).contains("## Why"));
}

/// `explain` on vLLM's start-up memory errors and Ray's OOM killer: the text report of each
/// fixture log, and the JSON with the verl script they ran (advice in its keys, with edits).
const EXPLAIN_CASES: &[(&str, &[&str])] = &[
    ("vllm-no-cache-blocks", &["explain", "fixtures/logs/vllm-no-cache-blocks.log"]),
    ("vllm-max-len-kv-cache", &["explain", "fixtures/logs/vllm-max-len-kv-cache.log", "--gpu", "H100"]),
    ("ray-oom-killer", &["explain", "fixtures/logs/ray-oom-killer.log"]),
    (
        "vllm-no-cache-blocks-verl-json",
        &[
            "explain",
            "fixtures/logs/vllm-no-cache-blocks.log",
            "--config",
            "fixtures/logs/verl-run.sh",
            "--format",
            "json",
        ],
    ),
];

#[test]
fn explain_reads_vllm_and_ray_failures() {
    for &(case, args) in EXPLAIN_CASES {
        let out = oomlint(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let mut settings = insta::Settings::clone_current();
        settings.set_description(format!("oomlint {}", args.join(" ")));
        settings.set_omit_expression(true);
        settings.bind(|| insta::assert_snapshot!(format!("explain@{case}"), stdout(&out)));
    }
    let json: serde_json::Value = serde_json::from_slice(
        &oomlint(&[
            "explain",
            "fixtures/logs/ray-oom-killer.log",
            "--config",
            "fixtures/logs/verl-run.sh",
            "--format",
            "json",
        ])
        .stdout,
    )
    .expect("JSON");
    assert_eq!(json["errors"], serde_json::json!([]));
    let failure = &json["failures"][0];
    assert_eq!(failure["kind"], "ray-host-oom");
    assert_eq!(failure["threshold"], 0.95);
    let edit = &failure["advice"][0]["fixes"][0]["edits"][0];
    assert_eq!(edit["content"], "false");
    assert_eq!(edit["range"]["start"]["line"], 12);
}
