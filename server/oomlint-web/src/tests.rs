use super::call;
use serde_json::{json, Value};

const LAUNCH: &str = include_str!("../../../fixtures/launch/accelerate_config_files.sh");
const ACCELERATE: &str = include_str!("../../../fixtures/launch/configs/accelerate_ds.yaml");
const DEEPSPEED: &str = include_str!("../../../fixtures/launch/configs/ds_zero3_offload.conf");
const SFT: &str = include_str!("../../../fixtures/launch/configs/sft.yaml");
const LORA: &str = include_str!("../../../fixtures/litgpt/llama-2-7b-lora.yaml");

fn analyze(files: &[(&str, &str)], active: &str, gpu: Option<&str>) -> Value {
    let files: Vec<Value> = files.iter().map(|(name, text)| json!({ "name": name, "text": text })).collect();
    let answer = call("analyze", &json!({ "files": files, "active": active, "gpu": gpu }).to_string());
    serde_json::from_str(&answer).expect("the answer is JSON")
}

fn rules(file: &Value) -> Vec<&str> {
    file["diagnostics"].as_array().unwrap().iter().map(|d| d["rule"].as_str().unwrap()).collect()
}

fn launch_project() -> Vec<(&'static str, &'static str)> {
    vec![
        ("launch/train.sh", LAUNCH),
        ("launch/configs/accelerate_ds.yaml", ACCELERATE),
        ("launch/configs/ds_zero3_offload.conf", DEEPSPEED),
        ("launch/configs/sft.yaml", SFT),
    ]
}

#[test]
fn a_launch_script_reads_the_files_it_names_from_the_project() {
    let answer = analyze(&launch_project(), "launch/train.sh", Some("A10G"));
    let script = &answer["files"][0];
    assert_eq!(script["name"], "launch/train.sh");
    // The mismatch needs the TRL config (bf16) and the accelerate config (fp16) it names.
    assert_eq!(rules(script), ["accelerate-mixed-precision-mismatch"]);
    let estimate = &answer["estimate"];
    assert!(estimate["peak"]["device_gib"].as_f64().unwrap() > 0.0, "{estimate}");
    assert_eq!(estimate["gpu"]["name"], "A10G");
    assert_eq!(analyze(&launch_project(), "launch/train.sh", Some("nvidia a10g"))["gpu"], "A10G", "the catalog's name");
    assert!(estimate["charts"]["views"].as_str().unwrap().starts_with("<svg"), "{}", estimate["charts"]["views"]);
    assert_eq!(estimate["charts"]["phases"].as_array().unwrap().len(), estimate["timeline"].as_array().unwrap().len());
}

#[test]
fn without_the_linked_files_the_launch_loses_what_they_set() {
    let answer = analyze(&launch_project()[..1], "launch/train.sh", Some("A10G"));
    assert!(rules(&answer["files"][0]).is_empty());
}

#[test]
fn settings_and_their_gpu_come_from_the_nearest_oomlint_toml() {
    let settings = "gpu = \"T4\"\nignore = [\"OOM416\"]\n";
    let mut files = launch_project();
    files.push(("launch/oomlint.toml", settings));
    let answer = analyze(&files, "launch/train.sh", None);
    assert!(
        !rules(&answer["files"][0]).contains(&"accelerate-mixed-precision-mismatch"),
        "{:?}",
        rules(&answer["files"][0])
    );
    assert_eq!(answer["estimate"]["gpu"]["name"], "T4");
}

#[test]
fn offsets_are_utf16_code_units() {
    let text = format!("# 🚀 ünïcode\n{LORA}");
    let plain = analyze(&[("lora.yaml", LORA)], "lora.yaml", Some("T4"));
    let shifted = analyze(&[("lora.yaml", &text)], "lora.yaml", Some("T4"));
    let at = |answer: &Value| answer["files"][0]["diagnostics"][0]["range"]["from"].as_u64().unwrap();
    // "# 🚀 ünïcode\n" is 13 UTF-16 code units (the rocket is two) and 17 bytes.
    assert_eq!(at(&shifted), at(&plain) + 13);
}

#[test]
fn levers_carry_their_edits_largest_saving_first() {
    let answer = analyze(&[("lora.yaml", LORA)], "lora.yaml", Some("T4"));
    let levers = answer["estimate"]["levers"].as_array().unwrap();
    assert!(!levers.is_empty());
    let saved: Vec<f64> = levers.iter().map(|l| l["saves_gib"].as_f64().unwrap()).collect();
    assert!(saved.windows(2).all(|w| w[0] >= w[1]), "{saved:?}");
    let edit = levers.iter().flat_map(|l| l["fixes"].as_array().unwrap()).next().unwrap()["edits"][0].clone();
    let (from, to) = (edit["from"].as_u64().unwrap() as usize, edit["to"].as_u64().unwrap() as usize);
    assert!(from <= to && to <= LORA.len(), "{edit}");
}

#[test]
fn bad_requests_get_an_error_not_a_panic() {
    let error = |answer: String| serde_json::from_str::<Value>(&answer).unwrap()["error"].as_str().unwrap().to_string();
    assert!(error(call("analyze", "{")).starts_with("invalid request"));
    assert!(error(call("nothing", "{}")).contains("unknown method"));
    let unknown_gpu = call("analyze", &json!({ "files": [], "active": "x", "gpu": "Z9000" }).to_string());
    assert!(error(unknown_gpu).contains("Z9000"));
}

#[test]
fn info_lists_the_catalog_gpus_and_the_chart_style() {
    let info: Value = serde_json::from_str(&call("info", "")).unwrap();
    let gpus = info["gpus"].as_array().unwrap();
    assert!(gpus.iter().any(|g| g["name"] == "A10G" && g["vendor"] == "nvidia" && g["bf16"] == true));
    assert!(gpus.iter().any(|g| g["vendor"] == "amd" && g["note"].is_string()), "MI250X: one die of two");
    assert!(info["chart_style"].as_str().unwrap().contains("prefers-color-scheme"));
}

#[test]
fn hover_on_a_memory_key_shows_the_breakdown() {
    let at = LORA.find("micro_batch_size").unwrap();
    let request = json!({ "files": [{ "name": "lora.yaml", "text": LORA }], "active": "lora.yaml", "gpu": "A10G", "offset": at + 2 });
    let answer: Value = serde_json::from_str(&call("hover", &request.to_string())).unwrap();
    let markdown = answer["markdown"].as_str().unwrap();
    assert!(markdown.contains("`train.micro_batch_size`"), "{markdown}");
    assert!(markdown.contains("| component | GiB |"), "{markdown}");
    assert_eq!(answer["from"].as_u64().unwrap() as usize, at);
    let nowhere = json!({ "files": [{ "name": "lora.yaml", "text": LORA }], "active": "lora.yaml", "offset": 0 });
    let answer: Value = serde_json::from_str(&call("hover", &nowhere.to_string())).unwrap();
    assert!(answer["markdown"].is_null(), "{answer}");
}
