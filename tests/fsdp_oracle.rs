//! The estimator against the FSDP2 oracle (`tests/estimator/fsdp2_oracle.csv`): each row is
//! rank 0 of one training step of a Hugging Face causal LM sharded with FSDP2 over a fake
//! process group, simulated on the CPU by `tests/estimator/fsdp2_oracle.py` (FakeTensorMode +
//! PyTorch's `FSDPMemTracker`; the command and versions are in the CSV header).
//!
//! Each row is written as the Trainer config that runs that step: full fine-tuning of a bf16
//! model without mixed precision (`bf16: false`, so accelerate does not upcast the shards),
//! FSDP2 full shard per decoder layer, torch AdamW, the model's own loss, gradient
//! checkpointing on or off, `num_processes` ranks. oomlint's allocated view of one rank must
//! be within 10 % of the oracle's peak.

use oomlint::analysis::{analyze_text, Options};
use oomlint::format::Format;
use std::path::Path;

const TOLERANCE: f64 = 0.10;

struct Row {
    model: String,
    world: u64,
    ac: bool,
    batch: u64,
    seq: u64,
    peak: f64,
}

fn rows() -> Vec<Row> {
    include_str!("estimator/fsdp2_oracle.csv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("model,") && !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            Row {
                model: f[0].to_string(),
                world: f[1].parse().expect("world"),
                ac: f[2] == "yes",
                batch: f[3].parse().expect("batch"),
                seq: f[4].parse().expect("seq"),
                peak: f[5].parse().expect("peak"),
            }
        })
        .collect()
}

/// The row as the `TrainingArguments` of a Trainer script (`HfArgumentParser` YAML).
fn config(row: &Row) -> String {
    format!(
        "model_name_or_path: Qwen/{}\ndtype: bfloat16\nbf16: false\nnum_processes: {}\n\
         per_device_train_batch_size: {}\nmax_length: {}\ngradient_checkpointing: {}\noptim: adamw_torch\n\
         fsdp: full_shard auto_wrap\nfsdp_config:\n  fsdp_version: 2\n  reshard_after_forward: true\n\
         output_dir: out\nlearning_rate: 1.0e-5\n",
        row.model, row.world, row.batch, row.seq, row.ac
    )
}

#[test]
fn fsdp2_rank_peak_matches_the_oracle() {
    let rows = rows();
    assert_eq!(rows.len(), 18, "2/4/8 ranks × three models × AC on/off");
    let options = Options { format: Some(Format::Transformers), ..Options::default() };
    let mut failures = Vec::new();
    for row in &rows {
        let text = config(row);
        let analysis = analyze_text(Path::new("train_args.yaml"), text.clone(), &options);
        let plan = analysis.plan.as_ref().unwrap_or_else(|| panic!("no plan for\n{text}"));
        assert_eq!(plan.stated_world_size(), Some(row.world), "{text}");
        let est = analysis.estimate.as_ref().unwrap_or_else(|| panic!("no estimate for\n{text}"));
        let ours = est.peak.allocated_bytes as f64;
        let err = ours / row.peak - 1.0;
        let line = format!(
            "{} world={} ac={} b={} s={}: oracle {:.2} GiB, oomlint {:.2} GiB ({:+.1} %)",
            row.model,
            row.world,
            if row.ac { "yes" } else { "no" },
            row.batch,
            row.seq,
            row.peak / (1u64 << 30) as f64,
            ours / (1u64 << 30) as f64,
            err * 100.0
        );
        println!("{line}");
        if err.abs() > TOLERANCE || std::env::var_os("FSDP_ORACLE_COMPONENTS").is_some() {
            println!("  peak phase {:?}", est.peak.phase);
            for c in &est.components {
                println!("  {:<24} {:>7.3} GiB  {:?}", c.name, c.bytes as f64 / (1u64 << 30) as f64, c.live_in);
            }
        }
        if err.abs() > TOLERANCE {
            failures.push(line);
        }
    }
    assert!(failures.is_empty(), "outside ±{} %:\n{}", TOLERANCE * 100.0, failures.join("\n"));
}
