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

#[test]
fn amd_and_blackwell_cards_are_named_like_any_other() {
    // Far more than an A10G's 24 GB, well within an MI300X's 192 GB.
    let fixture = "fixtures/rules/exceeds-gpu-memory/fail.yaml";
    let (text, _) = without_modeline(fixture);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sft.yaml"), &text).unwrap();
    let exceeds = |rules: Vec<String>| rules.contains(&"exceeds-gpu-memory".to_string());
    assert!(exceeds(cli_rules(dir.path(), "sft.yaml", &["--gpu", "A10G"])));
    assert!(!exceeds(cli_rules(dir.path(), "sft.yaml", &["--gpu", "MI300X"])));

    let path = dir.path().join("sft.yaml");
    let estimate = |gpu: &str| {
        // Exit 1 where the run does not fit; the report is on stdout either way.
        let out = oomlint(&["estimate", path.to_str().unwrap(), "--gpu", gpu, "--format", "json"]);
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or_else(|e| panic!("{gpu}: {e}: {out:?}"))["gpu"].clone()
    };
    // The capacity PyTorch on ROCm reports (torch total_memory = rocm-smi's VRAM total).
    assert_eq!(estimate("AMD Instinct MI300X"), json!({"name": "MI300X", "memory_bytes": 206_141_652_992u64}));
    // One die of an MI250X, and the GB10's unified memory, say what the verdict is against.
    let mi250x = estimate("mi250x");
    assert_eq!(mi250x["memory_bytes"], 65_520u64 << 20);
    assert!(mi250x["note"].as_str().is_some_and(|n| n.contains("two")), "{mi250x}");
    let gb10 = estimate("DGX Spark");
    assert_eq!(gb10["name"], "GB10");
    assert!(gb10["note"].as_str().is_some_and(|n| n.contains("unified memory")), "{gb10}");
    let table = oomlint(&["estimate", path.to_str().unwrap(), "--gpu", "GB10"]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("GB10: ") && table.contains("shares its 128 GB LPDDR5X with the CPU"), "{table}");

    // PyTorch on ROCm reads PYTORCH_HIP_ALLOC_CONF.
    let levers = |gpu: &str| {
        let out = oomlint(&["estimate", path.to_str().unwrap(), "--gpu", gpu, "--format", "json"]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["levers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["title"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let on = |titles: Vec<String>, var: &str| titles.iter().any(|t| t.starts_with(&format!("Set {var}=")));
    assert!(on(levers("MI250X"), "PYTORCH_HIP_ALLOC_CONF"));
    assert!(on(levers("A10G"), "PYTORCH_CUDA_ALLOC_CONF"));

    // A bare name with several sizes is refused with its candidates.
    let out = oomlint(&["estimate", path.to_str().unwrap(), "--gpu", "RTX 5060 Ti"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("name one: `RTX-5060-Ti-8GB` or `RTX-5060-Ti-16GB`"), "{err}");
}
