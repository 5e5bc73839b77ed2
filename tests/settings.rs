//! Project settings end to end: the checked-in `schema/oomlint.json` accepts the bundled
//! config and rejects bad ones, agrees with the keys oomlint reads, and `oomlint check`
//! honours `oomlint.toml` / `[tool.oomlint]` (found by walking up, or `--config`),
//! modelines and suppression comments.

use oomlint::format::Format;
use oomlint::schema;
use oomlint::settings::{Settings, KEYS};
use oomlint::syntax::{self, Language};
use std::path::Path;
use std::process::{Command, Output};

fn validate(text: &str) -> schema::Findings {
    schema::check(Format::Oomlint, &syntax::parse(text, Language::Toml))
}

fn problems(findings: &schema::Findings) -> usize {
    findings.unknown_keys.len() + findings.invalid_values.len()
}

#[test]
fn the_schema_accepts_the_bundled_config_and_settings_read_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/oomlint/oomlint.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(validate(&text), schema::Findings::default());
    let settings = Settings::from_toml(&text).unwrap();
    assert_eq!(settings.gpu.as_deref(), Some("A10G"));
}

#[test]
fn the_schema_rejects_bad_configs() {
    let unknown = validate("gpu = \"A10G\"\nheadrom = 0.1\n");
    assert_eq!(unknown.unknown_keys[0].key, "headrom");
    assert_eq!(unknown.unknown_keys[0].suggestion().as_deref(), Some("headroom"));
    for bad in [
        "headroom = 1.5\n",
        "ignore = \"OOM003\"\n",
        "[severity]\nunknown-key = \"loud\"\n",
        "[format]\n\"*.yaml\" = \"not-a-format\"\n",
    ] {
        assert!(problems(&validate(bad)) > 0, "accepted: {bad}");
        assert!(Settings::from_toml(bad).is_err(), "settings accepted: {bad}");
    }
    let pyproject = "[project]\nname = \"x\"\n[tool.oomlint]\nheadroom = -1\n";
    assert_eq!(validate(pyproject).invalid_values.len(), 1, "only [tool.oomlint] is validated");
}

#[test]
fn schema_and_settings_know_the_same_keys() {
    let schema = schema::get("oomlint").unwrap();
    let mut in_schema: Vec<&str> = schema.root["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    in_schema.sort();
    let mut read = KEYS.to_vec();
    read.sort();
    assert_eq!(in_schema, read);
}

fn oomlint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run oomlint")
}

fn rules_reported(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1).and_then(|r| r.split_whitespace().nth(1)).map(str::to_string))
        .collect()
}

const TYPO: &str =
    "checkpoint_dir: checkpoints/EleutherAI/pythia-160m\nprecision: bf16-true\nlogger_name: csv\nlogger_nmae: csv\n";

#[test]
fn the_nearest_config_applies_with_per_file_ignores_and_severity() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("configs/experiments")).unwrap();
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"demo\"\n\n[tool.oomlint]\n[tool.oomlint.per-file-ignores]\n\"configs/experiments/**\" = [\"unknown-key\"]\n[tool.oomlint.severity]\nunknown-key = \"warning\"\n",
    )
    .unwrap();
    std::fs::write(root.join("configs/lora.yaml"), TYPO).unwrap();
    std::fs::write(root.join("configs/experiments/lora.yaml"), TYPO).unwrap();
    let out = oomlint(root, &["check", "configs", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "unknown-key is a warning here: {}", String::from_utf8_lossy(&out.stdout));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = report["files"].as_array().unwrap();
    let of = |suffix: &str| {
        files.iter().find(|f| f["path"].as_str().unwrap().ends_with(suffix)).unwrap()["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["rule"] == "unknown-key")
            .map(|d| d["severity"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(of("configs/lora.yaml"), ["warning"]);
    assert!(of("experiments/lora.yaml").is_empty());
}

#[test]
fn config_option_and_bad_configs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("lora.yaml"), TYPO).unwrap();
    std::fs::write(root.join("strict.toml"), "select = [\"OOM0\"]\nignore = [\"OOM003\"]\n").unwrap();
    let out = oomlint(root, &["check", "lora.yaml", "--config", "strict.toml", "--output-format", "concise"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(rules_reported(&out).is_empty(), "{:?}", rules_reported(&out));

    let out = oomlint(root, &["check", "lora.yaml", "--ignore", "OOM603,unknown-key", "--output-format", "concise"]);
    assert!(rules_reported(&out).is_empty(), "{:?}", rules_reported(&out));
    let out = oomlint(root, &["check", "lora.yaml", "--select", "unknown-key", "--output-format", "concise"]);
    assert_eq!(rules_reported(&out), ["unknown-key"]);
    assert_eq!(oomlint(root, &["check", "lora.yaml", "--select", "nope"]).status.code(), Some(2));

    std::fs::write(root.join("broken.toml"), "ignore = [\"no-such-rule\"]\n").unwrap();
    let out = oomlint(root, &["check", "lora.yaml", "--config", "broken.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("unknown rule `no-such-rule`"), "{stderr}");

    // A discovered config that is broken is an error too, not silently ignored.
    std::fs::write(root.join("oomlint.toml"), "headroom = 3\n").unwrap();
    assert_eq!(oomlint(root, &["check", "lora.yaml"]).status.code(), Some(2));
}

#[test]
fn suppression_comments_and_unused_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = format!("{TYPO}  # oomlint: ignore[unknown-key]\n").replace("csv\n  #", "csv  #");
    std::fs::write(root.join("lora.yaml"), &text).unwrap();
    let out = oomlint(root, &["check", "lora.yaml", "--output-format", "concise"]);
    assert_eq!(rules_reported(&out), Vec::<String>::new(), "{text}");
    std::fs::write(root.join("lora.yaml"), format!("# oomlint: disable-file[OOM001, unknown-key]\n{TYPO}")).unwrap();
    let out = oomlint(root, &["check", "lora.yaml", "--output-format", "concise"]);
    assert_eq!(rules_reported(&out), ["unused-suppression"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("lora.yaml:1:25: OOM007 unused-suppression: `OOM001` is suppressed here but does not occur"),
        "{stdout}"
    );
}

#[test]
fn removed_keys_follow_the_pinned_versions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("recipes/sft")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules/removed-key/fail.yaml");
    std::fs::copy(&fixture, root.join("recipes/sft/config.yaml")).unwrap();
    let removed = |out: &Output| rules_reported(out).iter().filter(|r| *r == "removed-key").count();
    let check = || oomlint(root, &["check", "recipes/sft/config.yaml", "--output-format", "concise"]);

    // No pin: the newest releases, where both keys are gone.
    assert_eq!(removed(&check()), 2);
    // Pinned before both removals in the repository's requirements.
    std::fs::write(root.join("requirements.txt"), "trl==0.19.1\ntransformers>=4.44,<4.47\n").unwrap();
    assert_eq!(removed(&check()), 0, "{}", String::from_utf8_lossy(&check().stdout));
    // framework-versions in oomlint.toml wins over the requirements.
    std::fs::write(root.join("oomlint.toml"), "[framework-versions]\ntrl = \"0.27.0\"\n").unwrap();
    let out = check();
    assert_eq!(removed(&out), 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("`torch_dtype` was removed in trl 0.27, pinned trl==0.27.0"));
}

#[test]
fn suppressions_are_not_unused_while_the_file_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{TYPO}  # oomlint: ignore[unknown-key]\ntrain:\n\tmicro_batch_size: 4\n")
        .replace("csv\n  #", "csv  #");
    std::fs::write(dir.path().join("lora.yaml"), text).unwrap();
    let out = oomlint(dir.path(), &["check", "lora.yaml", "--output-format", "concise"]);
    assert_eq!(rules_reported(&out), ["yaml-syntax"]);
}
