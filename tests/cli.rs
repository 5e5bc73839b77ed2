//! Black-box tests of the `oomlint` binary: exit codes, output formats and snapshots
//! of every fixture in `full`, `concise` and JSON output.

use std::path::Path;
mod common;

use common::oomlint;
use std::process::Output;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

#[test]
fn snapshots_of_every_fixture() {
    insta::glob!("../fixtures", "**/*.{yaml,yml,json,toml,sh,env}", |path| {
        let file = relative(path);
        for format in ["concise", "json", "full"] {
            let out = oomlint(&["check", &file, "--output-format", format]);
            let code = out.status.code().unwrap_or(-1);
            assert!(code == 0 || code == 1, "{file}: exit {code}: {}", String::from_utf8_lossy(&out.stderr));
            insta::assert_snapshot!(format!("{format}"), format!("exit: {code}\n{}", stdout(&out)));
        }
    });
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
