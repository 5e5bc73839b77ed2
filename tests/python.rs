//! Python scripts and notebooks end to end through the `oomlint` binary: the Unsloth GRPO
//! acceptance run (out of memory on a 22 GB card as first written, about 17 GB after the
//! memory guide's changes), notebook positions, and snapshots of the Python fixtures.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
mod common;

use common::oomlint;

const GIB: f64 = (1u64 << 30) as f64;

fn json(args: &[&str]) -> Value {
    let out = oomlint(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn codes(check: &Value) -> Vec<String> {
    check["files"][0]["diagnostics"]
        .as_array()
        .map(|d| d.iter().filter_map(|d| d["code"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn estimate(path: &str) -> Value {
    json(&["estimate", path, "--gpu", "A10G", "--format", "json"])
}

#[test]
fn unsloth_grpo_goes_out_of_memory_on_a_22_gb_card() {
    let est = estimate("fixtures/python/unsloth-grpo-oom.py");
    assert_eq!(est["format"], "trl-grpo");
    assert_eq!(est["fit"]["verdict"], "exceeds", "{est:#}");
    let names: Vec<&str> = est["components"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert!(names.contains(&"vllm-reservation"), "{names:?}");
    let check = json(&["check", "fixtures/python/unsloth-grpo-oom.py", "--gpu", "A10G", "--output-format", "json"]);
    assert!(codes(&check).contains(&"OOM601".to_string()), "{check:#}");
    generation_and_training_are_both_shown("fixtures/python/unsloth-grpo-oom.py", &est);
}

/// The phase timeline of a GRPO run shows vLLM's generation and the training phases, in the
/// JSON and in the table, with the peak named once.
fn generation_and_training_are_both_shown(path: &str, est: &Value) {
    let phases = est["phases"].as_array().expect("a timeline");
    let phase = |name: &str| phases.iter().find(|p| p["phase"] == name).unwrap_or_else(|| panic!("no {name}: {est:#}"));
    let generation = phase("generation");
    assert!(generation["components"].as_array().unwrap().iter().any(|c| c == "vllm-reservation"), "{generation}");
    for training in ["forward", "backward", "optimizer-step"] {
        let live = phase(training)["components"].as_array().unwrap();
        assert!(
            live.iter().any(|c| c == "gradients") || live.iter().any(|c| c == "activations"),
            "{training}: {live:?}"
        );
    }
    let peak = phases.iter().find(|p| p["peak"] == true).expect("a peak phase");
    assert_eq!(peak["phase"], est["peak"]["phase"]);
    let table = String::from_utf8_lossy(&oomlint(&["estimate", path, "--gpu", "A10G"]).stdout).into_owned();
    let timeline = &table[table.find("\ntimeline").unwrap_or_else(|| panic!("no timeline in {table}"))..];
    let rows: Vec<&str> = timeline.lines().skip(2).take_while(|l| !l.is_empty()).collect();
    let shown: Vec<&str> = rows.iter().filter_map(|r| r.split_whitespace().next()).collect();
    assert_eq!(shown, ["load", "generation", "forward", "backward", "optimizer-step"], "{timeline}");
    let marked: Vec<&&str> = rows.iter().filter(|r| r.ends_with("◀ peak")).collect();
    assert_eq!(marked.len(), 1, "{timeline}");
    assert!(marked[0].trim_start().starts_with(peak["phase"].as_str().unwrap()), "{timeline}");
    let gib = peak["allocated_bytes"].as_f64().unwrap() / GIB;
    assert!(marked[0].contains(&format!("{gib:.2} GiB")), "{timeline}");
}

#[test]
fn unsloth_grpo_fits_after_the_guides_changes() {
    let est = estimate("fixtures/python/unsloth-grpo-fixed.py");
    assert_eq!(est["fit"]["verdict"], "fits", "{est:#}");
    let device = est["peak"]["device_bytes"].as_f64().unwrap() / GIB;
    // "About 17 GB" in the guide: 15.8 GiB if decimal, 17 GiB if PyTorch's GiB printed as GB.
    assert!((15.5..=18.5).contains(&device), "device peak {device:.2} GiB, the guide measured about 17 GB");
    let check = json(&["check", "fixtures/python/unsloth-grpo-fixed.py", "--gpu", "A10G", "--output-format", "json"]);
    let found = codes(&check);
    assert!(!found.iter().any(|c| c == "OOM601" || c == "OOM602"), "{found:?}");
    generation_and_training_are_both_shown("fixtures/python/unsloth-grpo-fixed.py", &est);
}

#[test]
fn the_vllm_lever_edits_the_keyword_argument_and_constants_edit_their_definition() {
    let est = estimate("fixtures/python/unsloth-grpo-oom.py");
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python/unsloth-grpo-oom.py"))
            .unwrap();
    let lever = est["levers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["title"].as_str().is_some_and(|t| t.contains("vLLM memory fraction")))
        .expect("a vLLM fraction lever");
    let edit = &lever["fixes"][0]["edits"][0];
    let line = edit["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(text.lines().nth(line - 1).unwrap().contains("gpu_memory_utilization=0.6"), "{lever:#}");
    let plan = json(&["plan", "fixtures/python/unsloth-grpo-oom.py", "--format", "json"]);
    let rank_line = plan["plan"]["lora"]["rank"]["origin"]["value"]["start"]["line"].as_u64().unwrap() as usize;
    assert_eq!(text.lines().nth(rank_line - 1).unwrap(), "LORA_RANK = 32");
}

#[test]
fn notebook_findings_name_the_cell_and_the_json_position() {
    let path = "fixtures/python/unsloth-grpo.ipynb";
    let concise = String::from_utf8_lossy(&oomlint(&["check", path, "--output-format", "concise"]).stdout).into_owned();
    let removed = concise.lines().find(|l| l.contains("OOM005")).expect("max_prompt_length is removed");
    assert!(removed.starts_with("fixtures/python/unsloth-grpo.ipynb:cell 7:9:5: OOM005"), "{removed}");
    // JSON output keeps positions in the .ipynb file itself.
    let check = json(&["check", path, "--output-format", "json"]);
    let diagnostic = check["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "OOM005")
        .expect("removed-key in JSON")
        .clone();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    let line = diagnostic["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(text.lines().nth(line - 1).unwrap().contains("max_prompt_length = max_prompt_length"));
    let est = estimate(path);
    assert_eq!(est["fit"]["verdict"], "exceeds");
    // The full output frames the cell's own source, lines counted in the cell.
    let full = String::from_utf8_lossy(&oomlint(&["check", path, "--output-format", "full"]).stdout).into_owned();
    assert!(full.contains("╭─[fixtures/python/unsloth-grpo.ipynb:cell 7:9:5]"), "{full}");
    assert!(full.contains(" 9 │     max_prompt_length = max_prompt_length,\n"), "{full}");
    assert!(!full.contains("\\n\","), "JSON text in the frames: {full}");
}

#[test]
fn a_model_that_is_not_a_decoder_is_said_not_to_be_estimated() {
    for (file, what) in
        [("fixtures/python/embedding-model.py", "embedding model"), ("fixtures/python/speech-model.py", "Whisper")]
    {
        let out = oomlint(&["estimate", file, "--gpu", "A10G", "--format", "json"]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(what) && err.contains("decoder language models only"), "{file}: {err}");
    }
}

#[test]
fn a_notebook_name_reused_across_cells_and_its_env_magic() {
    let plan = json(&["plan", "fixtures/python/cells-reuse-name.ipynb", "--format", "json"]);
    assert_eq!(
        plan["plan"]["model"]["value"]["name"], "unsloth/Qwen2.5-1.5B-Instruct-bnb-4bit",
        "not the reload after training"
    );
    assert_eq!(plan["plan"]["allocator"][0]["value"], "expandable_segments:True");
    let plan = json(&["plan", "fixtures/python/model-flow.py", "--format", "json"]);
    assert_eq!(plan["plan"]["model"]["value"]["name"], "meta-llama/Meta-Llama-3.1-8B-Instruct");
    assert_eq!(plan["plan"]["lora"]["rank"]["value"], 32);
}

#[test]
fn scripts_are_found_when_walking_a_directory() {
    let check = json(&["check", "fixtures/python", "--output-format", "json"]);
    let paths: Vec<&str> = check["files"].as_array().unwrap().iter().filter_map(|f| f["path"].as_str()).collect();
    assert!(paths.iter().any(|p| p.ends_with("unsloth-sft.py")), "{paths:?}");
    assert!(paths.iter().any(|p| p.ends_with(".ipynb")), "{paths:?}");
}

/// Each Python fixture's plan, and its `full` output with an A10G as the target where it
/// has findings (a clean one must stay clean). The rule fixtures written in Python are
/// snapshotted beside them (`tests/rules.rs`); the other formats in `tests/cli.rs`.
#[test]
fn snapshots_of_every_python_fixture() {
    let mut written = BTreeSet::new();
    insta::glob!("../fixtures/python", "*.{py,ipynb}", |path| {
        let file = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).to_string_lossy().replace('\\', "/");
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let out = oomlint(&["check", &file, "--gpu", "A10G", "--output-format", "full"]);
        let code = out.status.code().unwrap_or(-1);
        let full = String::from_utf8_lossy(&out.stdout);
        assert!(code == 0 || code == 1, "{file}: exit {code}: {}", String::from_utf8_lossy(&out.stderr));
        if full == "oomlint: 1 file(s) checked, no problems\n" {
            assert_eq!(code, 0, "{file}");
        } else {
            insta::assert_snapshot!("full", format!("exit: {code}\n{full}"));
            written.insert(format!("python__full@{name}.snap"));
        }
        let plan = oomlint(&["plan", &file, "--format", "json"]);
        insta::assert_snapshot!("plan", String::from_utf8_lossy(&plan.stdout));
        written.insert(format!("python__plan@{name}.snap"));
    });
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut orphans: Vec<String> = std::fs::read_dir(dir)
        .expect("tests/snapshots")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("python__") && name.ends_with(".snap") && !written.contains(name))
        .collect();
    orphans.sort();
    assert!(orphans.is_empty(), "snapshots no test writes (remove them): {orphans:?}");
}
