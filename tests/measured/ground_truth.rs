//! Reading the rows of `../shared/ground-truth/ground_truth.csv`, and the LitGPT rows that ran on
//! more than one device written as the YAML config that launched them. Shared by
//! `cargo bench --bench accuracy` and `tests/measured.rs`.
//!
//! With `devices > 1` LitGPT's finetune scripts run FSDP (`FULL_SHARD`, one unit per `Block`)
//! with every `Block` checkpointed, and print rank 0's `max_memory_allocated()`; LitGPT's reader
//! (`format/litgpt.rs`) states exactly that, so those rows go through it.

use oomlint::analysis::{analyze_text, Options};
use oomlint::catalog::Gpu;
use oomlint::estimate::Context;
use oomlint::format::Format;
use oomlint::plan::Plan;
use oomlint::versions::Version;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub type Row = HashMap<String, String>;

/// The CSV, next to the repository (absent where `../shared` is).
pub fn csv_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/ground-truth/ground_truth.csv")
}

pub fn field<'a>(row: &'a Row, key: &str) -> &'a str {
    row.get(key).map_or("", |s| s.trim())
}

pub fn leading_number(text: &str) -> Option<u64> {
    let digits: String = text
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect();
    digits.replace(',', "").parse().ok()
}

pub fn micro_batch(row: &Row) -> u64 {
    leading_number(field(row, "micro_batch_size")).unwrap_or(1)
}

/// The padded length at the peak where the row knows it, else the configured cap.
pub fn sequence_length(row: &Row) -> Option<u64> {
    leading_number(field(row, "effective_seq_len")).or_else(|| leading_number(field(row, "max_seq_length")))
}

pub fn devices(row: &Row) -> u64 {
    leading_number(field(row, "devices")).unwrap_or(1)
}

/// A LitGPT fine-tuning row measured on more than one device (inference rows excluded).
pub fn is_litgpt_multi_device_training(row: &Row) -> bool {
    field(row, "source").starts_with("Lightning-AI/litgpt")
        && field(row, "measurement_type") == "measured"
        && field(row, "task").contains("SFT")
        && devices(row) > 1
}

/// The plan LitGPT's reader builds from the row written as its `litgpt finetune_*` config.
pub fn litgpt_multi_device_plan(row: &Row) -> Result<Plan, String> {
    let format = match field(row, "method") {
        "lora" => Format::LitgptLora,
        "adapter" => Format::LitgptAdapter,
        "adapter_v2" => Format::LitgptAdapterV2,
        "full" => Format::LitgptFull,
        // LitGPT refuses to quantize on more than one device.
        other => return Err(format!("method not expressible on {} devices ({other})", devices(row))),
    };
    let text = litgpt_config(row, format)?;
    let options = Options { format: Some(format), ..Options::default() };
    let analysis = analyze_text(Path::new("row.yaml"), text.clone(), &options);
    analysis.plan.map(|p| *p).ok_or_else(|| format!("LitGPT config not read:\n{text}"))
}

fn litgpt_config(row: &Row, format: Format) -> Result<String, String> {
    let micro = micro_batch(row);
    let seq = sequence_length(row).ok_or("no sequence length")?;
    let global = leading_number(field(row, "global_batch_size")).unwrap_or(micro);
    let mut yaml = format!(
        "checkpoint_dir: checkpoints/{}\nprecision: {}\ndevices: {}\n",
        field(row, "model_id"),
        field(row, "precision"),
        devices(row),
    );
    if format == Format::LitgptLora {
        let rank = leading_number(field(row, "lora_r")).unwrap_or(8);
        yaml += &format!("lora_r: {rank}\nlora_alpha: {}\nlora_dropout: 0.05\n", 2 * rank);
        let named: Vec<&str> = field(row, "lora_targets").split(';').map(str::trim).collect();
        for target in ["query", "key", "value", "projection", "mlp", "head"] {
            yaml += &format!("lora_{target}: {}\n", named.contains(&target));
        }
    }
    yaml += &format!("train:\n  micro_batch_size: {micro}\n  global_batch_size: {global}\n  max_seq_length: {seq}\n");
    Ok(yaml)
}

/// Releases named in the row (`LitGPT 0.4.7`, `bitsandbytes 0.41.1`; `lit-gpt` is the
/// package before its 0.1 release) and whether the longest sample was forced into iteration 0.
pub fn context(row: &Row) -> Context {
    let reference = field(row, "source_path_or_ref");
    let release_after = |name: &str| reference.split(name).nth(1).and_then(Version::parse);
    let litgpt = if field(row, "framework").contains("lit-gpt") {
        Some(Version::release(&[0, 0]))
    } else {
        release_after("LitGPT ")
    };
    Context {
        bitsandbytes: release_after("bitsandbytes "),
        litgpt,
        first_batch_longest: field(row, "effective_seq_len").contains("forced into iteration 0"),
        ..Context::default()
    }
}

/// Capacity as `torch.cuda.get_device_properties().total_memory` reports it.
pub fn gpu(text: &str) -> Option<Gpu> {
    let t = text.to_ascii_lowercase();
    let (name, gib) = if t.contains("a100") && t.contains("80") && !t.contains("40 or 80") {
        ("A100-80GB", 79.15)
    } else if t.contains("a100") && t.contains("40") && !t.contains("40 or 80") {
        ("A100-40GB", 39.39)
    } else if t.contains("a10g") {
        ("A10G", 22.07)
    } else if t.contains("t4") {
        ("T4", 14.58)
    } else if t.contains("l4") {
        ("L4", 22.04)
    } else {
        return None;
    };
    Some(Gpu {
        name: name.into(),
        memory_bytes: (gib * (1u64 << 30) as f64) as u64,
        bf16: !t.contains("t4"),
        fp8: t.contains("l4"),
        compute_capability: String::new(),
        vendor: Default::default(),
        aliases: Vec::new(),
        note: None,
        source: "accuracy tool: driver-reported capacity".into(),
    })
}
