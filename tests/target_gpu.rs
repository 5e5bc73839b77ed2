//! The target GPU reaches every GPU-dependent rule the same way, whether it comes from
//! `--gpu`, the project's `oomlint.toml`, a modeline, or the editor's setting, and in one
//! order of precedence: `--gpu`, then the modeline, then the editor, then the settings.

mod common;
#[path = "lsp/session.rs"]
#[allow(dead_code)] // shared with tests/lsp.rs, which uses all of it
mod session;

use common::oomlint;
use serde_json::{json, Value};
use session::Session;
use std::path::Path;

/// Each GPU-dependent rule with a fixture that fires on the card its modeline names.
const CASES: [(&str, &str); 5] = [
    ("bf16-unsupported-gpu", "fixtures/rules/bf16-unsupported-gpu/fail.yaml"),
    ("bf16-unsupported-gpu", "fixtures/rules/bf16-unsupported-gpu/fail-explicit.yaml"),
    ("exceeds-gpu-memory", "fixtures/rules/exceeds-gpu-memory/fail.yaml"),
    ("low-memory-headroom", "fixtures/rules/low-memory-headroom/fail.yaml"),
    ("vllm-memory-overcommit", "fixtures/rules/vllm-memory-overcommit/fail.yaml"),
];

/// The fixture's text without its `# oomlint: gpu=` modeline, and the card it named.
fn without_modeline(fixture: &str) -> (String, String) {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture)).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let gpu = first.strip_prefix("# oomlint: gpu=").unwrap_or_else(|| panic!("{fixture}: no modeline"));
    (rest.to_string(), gpu.replace('_', " "))
}

/// The rule names `oomlint check` reports for `file`, run from `dir`.
fn cli_rules(dir: &Path, file: &str, extra: &[&str]) -> Vec<String> {
    let file = dir.join(file);
    let mut args = vec!["check", "--output-format", "json", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = oomlint(&args);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    report["files"][0]["diagnostics"].as_array().unwrap().iter().map(|d| d["rule"].as_str().unwrap().into()).collect()
}

fn lsp_rules(session: &mut Session, uri: &str, text: &str) -> Vec<String> {
    let published = session.open(uri, text);
    let codes: Vec<String> =
        published["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
    codes.iter().map(|code| name_of(code)).collect()
}

fn name_of(code: &str) -> String {
    oomlint::rules::find(code).map(|r| r.name.to_string()).unwrap_or_else(|| code.to_string())
}

#[test]
fn every_gpu_dependent_rule_sees_the_gpu_from_every_source() {
    for (rule, fixture) in CASES {
        let (text, gpu) = without_modeline(fixture);
        let dir = tempfile::tempdir().unwrap();
        let name = Path::new(fixture).file_name().unwrap().to_str().unwrap();
        std::fs::write(dir.path().join(name), &text).unwrap();
        assert!(!cli_rules(dir.path(), name, &[]).contains(&rule.to_string()), "{fixture}: fires without a GPU");
        assert!(cli_rules(dir.path(), name, &["--gpu", &gpu]).contains(&rule.to_string()), "{fixture}: --gpu");

        let modeline = format!("# oomlint: gpu={}\n{text}", gpu.replace(' ', "_"));
        std::fs::write(dir.path().join(name), &modeline).unwrap();
        assert!(cli_rules(dir.path(), name, &[]).contains(&rule.to_string()), "{fixture}: modeline");

        std::fs::write(dir.path().join(name), &text).unwrap();
        std::fs::write(dir.path().join("oomlint.toml"), format!("gpu = \"{gpu}\"\n")).unwrap();
        assert!(cli_rules(dir.path(), name, &[]).contains(&rule.to_string()), "{fixture}: oomlint.toml");

        let mut session = Session::with_gpu(&gpu);
        let uri = format!("file:///nowhere/{name}");
        assert!(lsp_rules(&mut session, &uri, &text).contains(&rule.to_string()), "{fixture}: editor setting");
        session.shutdown();
    }
}

#[test]
fn the_gpu_is_chosen_in_one_order() {
    // bf16 on a T4 is refused; on an A10G it is not.
    let (text, _) = without_modeline("fixtures/rules/bf16-unsupported-gpu/fail.yaml");
    let fires = |rules: Vec<String>| rules.contains(&"bf16-unsupported-gpu".to_string());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("oomlint.toml"), "gpu = \"A10G\"\n").unwrap();
    std::fs::write(dir.path().join("sft.yaml"), format!("# oomlint: gpu=T4\n{text}")).unwrap();
    assert!(fires(cli_rules(dir.path(), "sft.yaml", &[])), "a modeline wins over oomlint.toml");
    assert!(!fires(cli_rules(dir.path(), "sft.yaml", &["--gpu", "A10G"])), "--gpu wins over a modeline");

    let mut session = Session::start(json!({}), json!({"oomlint": {"gpu": "A10G"}}));
    let modeline = format!("# oomlint: gpu=T4\n{text}");
    assert!(fires(lsp_rules(&mut session, "file:///nowhere/a.yaml", &modeline)), "a modeline wins over the editor");
    assert!(!fires(lsp_rules(&mut session, "file:///nowhere/b.yaml", &text)), "the editor's A10G");
    session.shutdown();

    let mut session = Session::start(json!({}), json!({"oomlint": {"gpu": "T4"}}));
    let uri = format!("file://{}", dir.path().join("c.yaml").display());
    assert!(fires(lsp_rules(&mut session, &uri, &text)), "the editor wins over oomlint.toml");
    session.shutdown();
}
