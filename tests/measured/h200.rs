//! The peaks measured on an NVIDIA H200 (`tests/estimator/measured/`, from `tests/gpu/device_run.sh`),
//! each expressed as the TRL SFT config that trains the same way, and estimated through the whole
//! pipeline (YAML → plan → estimate). Shared by `tests/measured.rs` and `cargo bench --bench accuracy`.
//!
//! The `transformers.Trainer` runs (`h200_hf_trainer*.csv`) used labels = inputs: the causal-LM
//! loss over full fp32 logits. TRL's SFTTrainer computed exactly that with `loss_type: nll` up to
//! TRL 1.5 (1.15 and later run a fused, chunked head instead), so those rows are written as TRL SFT
//! configs with `trl` pinned to 1.5.0. The TRL rows (`h200_trl.csv`) ran TRL 1.16.0.

use oomlint::analysis::{analyze_text, Options};
use oomlint::catalog::gpus::resolve_gpu;
use oomlint::estimate::Estimate;
use oomlint::settings::Settings;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The measured CSV files, relative to the repository root.
pub const FILES: [&str; 4] = [
    "tests/estimator/measured/h200_hf_trainer.csv",
    "tests/estimator/measured/h200_hf_trainer_moe.csv",
    "tests/estimator/measured/h200_trl.csv",
    "tests/estimator/measured/h200_trl_qlora.csv",
];
/// The rows repeated with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
pub const EXPANDABLE: &str = "tests/estimator/measured/h200_hf_trainer_expandable.csv";
const GRID: &str = "tests/gpu/grid.json";

pub struct Measured {
    pub id: String,
    /// The run ran out of memory on the 140 GB card.
    pub oom: bool,
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
    /// Parameters with `requires_grad` as the run counted them (PEFT's adapters, or the whole model).
    pub trainable_params: u64,
    /// The TRL config that trains like the measured run.
    pub yaml: String,
    /// The TRL release the config is judged under.
    pub trl: &'static str,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every measured row of `file` (relative to the repository root).
pub fn rows(file: &str) -> Vec<Measured> {
    let grid: Value = serde_json::from_str(&read(GRID)).expect("tests/gpu/grid.json is JSON");
    parse_csv(&read(file))
        .into_iter()
        .map(|fields| {
            let get = |k: &str| fields.get(k).cloned().unwrap_or_default();
            let num = |k: &str| get(k).parse::<u64>().unwrap_or(0);
            let hf_id =
                grid["models"][get("model").as_str()]["hf_id"].as_str().expect("model in grid.json").to_string();
            let trainer = get("trainer");
            Measured {
                id: get("id"),
                oom: get("status") == "oom",
                allocated_bytes: num("allocated_peak_bytes"),
                reserved_bytes: num("reserved_peak_bytes"),
                trainable_params: num("trainable_params"),
                yaml: trl_config(&hf_id, &get),
                trl: if trainer.is_empty() { "1.5.0" } else { "1.16.0" },
            }
        })
        .collect()
}

/// Estimates `row` for the H200 it ran on.
pub fn estimate(row: &Measured) -> Estimate {
    let gpu = resolve_gpu("H200").expect("H200 in the GPU catalog").clone();
    let pins = format!("[framework-versions]\ntrl = \"{}\"\n", row.trl);
    let settings = Settings::from_toml(&pins).expect("valid settings");
    let options = Options { gpu: Some(gpu), settings: Arc::new(settings), ..Options::default() };
    let analysis = analyze_text(Path::new("measured.yaml"), row.yaml.clone(), &options);
    analysis.estimate.unwrap_or_else(|| panic!("{}: no estimate for\n{}", row.id, row.yaml))
}

fn trl_config(hf_id: &str, get: &dyn Fn(&str) -> String) -> String {
    let flag = |k: &str| if get(k) == "True" { "true" } else { "false" };
    let trainer = get("trainer");
    let command = if trainer.is_empty() { "sft" } else { trainer.as_str() };
    let mut yaml = format!(
        "# oomlint: format=trl-{command}\nmodel_name_or_path: {hf_id}\ndtype: {}\n\
         per_device_train_batch_size: {}\ngradient_accumulation_steps: {}\n\
         gradient_checkpointing: {}\nbf16: {}\noptim: {}\n",
        get("dtype"),
        get("batch"),
        get("ga"),
        flag("ckpt"),
        flag("bf16"),
        get("optim"),
    );
    let number = |k: &str| get(k).parse::<u64>().unwrap_or(0);
    yaml += &match command {
        "sft" if trainer.is_empty() => {
            format!("max_length: {}\nloss_type: nll\nattn_implementation: {}\n", get("seq"), get("attn"))
        }
        "sft" => format!("max_length: {}\n", get("seq")),
        "dpo" => format!("max_length: {}\n", number("prompt_len") + number("completion_len")),
        // TRL ≥ 0.28 has no key for the prompt length (the dataset decides it); the reader still
        // takes `max_prompt_length` as the prompts' length, which here were 256 tokens.
        _ => format!(
            "num_generations: {}\nmax_prompt_length: {}\nmax_completion_length: {}\nbeta: {}\nuse_vllm: false\n",
            get("num_generations"),
            get("prompt_len"),
            get("completion_len"),
            get("beta"),
        ),
    };
    yaml += match get("quant").as_str() {
        "nf4" => "load_in_4bit: true\nbnb_4bit_quant_type: nf4\n",
        "nf4-dq" => "load_in_4bit: true\nbnb_4bit_quant_type: nf4\nuse_bnb_nested_quant: true\n",
        "int8" => "load_in_8bit: true\n",
        _ => "",
    };
    if matches!(get("method").as_str(), "lora" | "qlora") {
        let r: u64 = get("lora_r").parse().unwrap_or(16);
        let targets = get("lora_targets");
        let targets = if targets == "all-linear" { targets } else { format!("[{targets}]") };
        yaml += &format!(
            "use_peft: true\nlora_r: {r}\nlora_alpha: {}\nlora_dropout: {}\nlora_target_modules: {targets}\n",
            2 * r,
            get("lora_dropout"),
        );
    }
    yaml
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// Minimal RFC 4180 reader: quoted fields, doubled quotes, newlines inside quotes.
pub fn parse_csv(text: &str) -> Vec<HashMap<String, String>> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    let mut iter = records.into_iter();
    let Some(header) = iter.next() else { return Vec::new() };
    iter.map(|r| header.iter().cloned().zip(r).collect()).collect()
}
