//! The JSON outputs against their schemas in `schema/output/`: `estimate --format json` on a
//! spread of fixtures (LitGPT, DeepSpeed through LLaMA-Factory and Axolotl, Trainer and TRL
//! scripts, Unsloth GRPO scripts and a notebook) and `check --output-format json` on all of
//! them, and what the estimate's phase timeline must hold.

use serde_json::Value;
use std::path::Path;
mod common;

use common::oomlint;

/// `(fixture, generates)`: whether the run generates completions on the training GPU (RL).
const ESTIMATED: [(&str, bool); 12] = [
    ("fixtures/litgpt/llama-2-7b-lora.yaml", false),
    ("fixtures/litgpt/qlora-precision.yaml", false),
    ("fixtures/litgpt-full/valid.yaml", false),
    ("fixtures/llamafactory/qwen3-8b-full-sft-ds3.yaml", false),
    ("fixtures/axolotl/lora-mistral-7b-8bit-zero2.yaml", false),
    ("fixtures/python/transformers-trainer.py", false),
    ("fixtures/trl/sft-qwen2.5-7b.yaml", false),
    ("fixtures/trl/grpo-vllm-colocate.yaml", true),
    ("fixtures/axolotl/grpo-qwen2.5-1.5b-vllm.yaml", true),
    ("fixtures/python/unsloth-grpo-oom.py", true),
    ("fixtures/python/unsloth-grpo-fixed.py", true),
    ("fixtures/python/unsloth-grpo.ipynb", true),
];

const ORDER: [&str; 6] = ["load", "generation", "log-probs", "forward", "backward", "optimizer-step"];

fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/output").join(name);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("schema")).expect("JSON");
    jsonschema::draft202012::meta::validate(&schema).unwrap_or_else(|e| panic!("{name} against the metaschema: {e}"));
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{name} does not compile: {e}"))
}

fn errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator.iter_errors(value).map(|e| format!("{} {e}", e.instance_path())).collect()
}

fn run_json(args: &[&str]) -> Value {
    let out = oomlint(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn estimate(path: &str, gpu: Option<&str>) -> Value {
    let mut args = vec!["estimate", path, "--format", "json"];
    args.extend(gpu.map(|g| ["--gpu", g]).into_iter().flatten());
    run_json(&args)
}

fn u64_at(value: &Value, key: &str) -> u64 {
    value[key].as_u64().unwrap_or_else(|| panic!("{key} in {value}"))
}

#[test]
fn estimates_validate_against_the_estimate_schema() {
    let schema = validator("estimate.json");
    for (path, _) in ESTIMATED {
        for gpu in [None, Some("A10G")] {
            let est = estimate(path, gpu);
            let found = errors(&schema, &est);
            assert!(found.is_empty(), "{path} {gpu:?}: {found:#?}");
            assert_eq!(est["gpu"].is_null(), gpu.is_none(), "{path}");
        }
    }
    // The schema is closed: a field the output gains fails until the schema names it.
    let mut est = estimate(ESTIMATED[0].0, Some("A10G"));
    est["phases"][0]["reserved_bytes"] = Value::from(1);
    assert!(!errors(&schema, &est).is_empty(), "an unknown field in a phase passes");
    est = estimate(ESTIMATED[0].0, Some("A10G"));
    est["timeline"] = Value::Array(Vec::new());
    assert!(!errors(&schema, &est).is_empty(), "an unknown top-level field passes");
}

#[test]
fn a_file_without_an_estimate_prints_no_json() {
    for path in ["fixtures/deepspeed/zero2-explicit-batch.json", "fixtures/python/embedding-model.py"] {
        let out = oomlint(&["estimate", path, "--gpu", "A10G", "--format", "json"]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert!(out.stdout.is_empty(), "{path}: {}", String::from_utf8_lossy(&out.stdout));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot estimate"), "{path}");
    }
}

#[test]
fn check_output_validates_against_the_check_schema() {
    let schema = validator("check.json");
    let mut args = vec!["check", "--gpu", "A10G", "--output-format", "json"];
    args.extend(ESTIMATED.iter().map(|(path, _)| *path));
    args.extend(["fixtures/deepspeed", "fixtures/rules/exceeds-gpu-memory", "fixtures/env"]);
    let check = run_json(&args);
    let found = errors(&schema, &check);
    assert!(found.is_empty(), "{found:#?}");
    let diagnostics =
        check["files"].as_array().expect("files").iter().flat_map(|f| f["diagnostics"].as_array().unwrap());
    let mut diagnostics = diagnostics.peekable();
    assert!(diagnostics.peek().is_some(), "the fixtures have findings to validate");
    assert!(diagnostics.any(|d| d["notes"].is_array() && !d["fixes"].as_array().unwrap().is_empty()));
}

#[test]
fn the_timeline_runs_in_order_to_one_peak_that_is_the_estimates() {
    for (path, generates) in ESTIMATED {
        let est = estimate(path, Some("A10G"));
        let phases = est["phases"].as_array().expect("phases");
        let names: Vec<&str> = phases.iter().filter_map(|p| p["phase"].as_str()).collect();
        // None of these runs has log-prob passes (verl).
        let expected: Vec<&str> =
            ORDER.into_iter().filter(|p| *p != "log-probs" && (generates || *p != "generation")).collect();
        assert_eq!(names, expected, "{path}");
        let peaks: Vec<&Value> = phases.iter().filter(|p| p["peak"] == true).collect();
        assert_eq!(peaks.len(), 1, "{path}: {phases:#?}");
        assert_eq!(peaks[0]["phase"], est["peak"]["phase"], "{path}");
        assert_eq!(u64_at(peaks[0], "allocated_bytes"), u64_at(&est["peak"], "allocated_bytes"), "{path}");
        let load = u64_at(&phases[0], "allocated_bytes");
        let largest = phases.iter().map(|p| u64_at(p, "allocated_bytes")).max().unwrap_or(0);
        assert_eq!(largest, u64_at(&est["peak"], "allocated_bytes"), "{path}: the peak is the largest phase");
        for phase in phases {
            assert!(load <= u64_at(phase, "allocated_bytes"), "{path}: load above {}", phase["phase"]);
            // Each phase's bytes are its components' bytes.
            let bytes: u64 = phase["components"]
                .as_array()
                .unwrap()
                .iter()
                .map(|name| {
                    let component = est["components"].as_array().unwrap().iter().find(|c| c["name"] == *name);
                    u64_at(component.unwrap_or_else(|| panic!("{path}: {name} is not a component")), "bytes")
                })
                .sum();
            assert_eq!(bytes, u64_at(phase, "allocated_bytes"), "{path}: {}", phase["phase"]);
        }
        let weights_at_load = phases[0]["components"].as_array().unwrap().iter().any(|c| c == "weights");
        assert!(weights_at_load, "{path}: the weights are loaded");
    }
}
