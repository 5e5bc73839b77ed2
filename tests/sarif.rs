//! `--output-format sarif` is valid SARIF 2.1.0: validated against the official schema
//! in `../shared/schemas` (skipped with a notice when absent), with every rule and its
//! help text in `tool.driver.rules` and regions with start and end.

use std::path::Path;
use std::process::Command;

#[test]
fn sarif_output_validates_against_the_schema() {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/schemas/sarif-schema-2.1.0.json");
    let Ok(schema_text) = std::fs::read_to_string(&schema_path) else {
        eprintln!("notice: {} is absent; skipping the SARIF schema test", schema_path.display());
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(["check", "fixtures", "--output-format", "sarif"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run oomlint");
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SARIF is JSON");
    let schema: serde_json::Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the SARIF schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(&sarif).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));

    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), oomlint::rules::RULES.len());
    assert!(rules.iter().all(|r| r["help"]["text"].as_str().is_some_and(|t| t.contains("## Why"))));
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty(), "the fixtures carry findings");
    for result in results {
        let region = &result["locations"][0]["physicalLocation"]["region"];
        for key in ["startLine", "startColumn", "endLine", "endColumn"] {
            assert!(region[key].as_u64().is_some_and(|v| v >= 1), "{key} in {result}");
        }
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
    }
}

#[test]
fn a_fix_of_a_launch_changes_the_file_it_names() {
    let script = "fixtures/rules/deepspeed-batch-arithmetic/fail-launch-world.sh";
    let out = Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(["check", script, "--output-format", "sarif"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run oomlint");
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SARIF is JSON");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "OOM411");
    assert_eq!(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], script);
    let changes = result["fixes"][0]["artifactChanges"].as_array().expect("a fix");
    assert_eq!(
        changes,
        &[serde_json::json!({
            "artifactLocation": {"uri": "fixtures/rules/deepspeed-batch-arithmetic/launch/ds_zero2.conf"},
            "replacements": [{
                "deletedRegion": {"startLine": 2, "startColumn": 23, "endLine": 2, "endColumn": 25},
                "insertedContent": {"text": "32"},
            }],
        })]
    );
}
