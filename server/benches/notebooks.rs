//! The estimator against the peaks Unsloth's own notebooks print
//! (`../shared/corpus-wild/unsloth-notebooks/nb/*.ipynb`).
//!
//! Run with `cargo bench --bench notebooks` (prints Markdown; `tests/estimator/NOTEBOOKS.md` is
//! its committed output). A notebook counts when its outputs print
//! `GPU = <name>. Max memory = X GB.` and `Peak reserved memory = Y GB.`: Y is
//! `torch.cuda.max_memory_reserved() / 1024**3`, so it is compared with the reserved view in GiB,
//! on the card the notebook ran on. Encoder-only embedding models and speech models are listed
//! apart: they are not decoder-LM training; so are notebooks whose training added nothing to a
//! peak set before it. Nothing is fitted to these rows.

use oomlint::analysis::{analyze_bytes, Options};
use oomlint::catalog::resolve_gpu;
use oomlint::estimate::{Levers, Verdict};
use oomlint::model::ModelLookup;
use std::path::{Path, PathBuf};

const GIB: f64 = (1u64 << 30) as f64;

/// One notebook with a recorded peak.
struct Row {
    name: String,
    gpu: String,
    measured_gib: f64,
    outcome: Outcome,
}

enum Outcome {
    /// Encoder-only embedding or speech model: not counted (the reason).
    Excluded(&'static str),
    /// No estimate (the reason).
    Failed(String),
    Estimated {
        reserved_gib: f64,
        low: f64,
        high: f64,
        verdict: Option<Verdict>,
    },
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus-wild/unsloth-notebooks/nb");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("notice: {} not found; nothing to score", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ipynb"))
        .collect();
    paths.sort();
    let rows: Vec<Row> = paths.iter().filter_map(|p| row(p)).collect();
    report(&rows);
}

/// Concatenated code-cell sources and outputs of a notebook.
fn cells(nb: &serde_json::Value) -> (String, String) {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
        _ => String::new(),
    };
    let (mut source, mut output) = (String::new(), String::new());
    for cell in nb["cells"].as_array().into_iter().flatten() {
        if cell["cell_type"] == "code" {
            source += &text(&cell["source"]);
            source.push('\n');
        }
        for out in cell["outputs"].as_array().into_iter().flatten() {
            let t = if out["text"].is_null() { &out["data"]["text/plain"] } else { &out["text"] };
            output += &text(t);
        }
    }
    (source, output)
}

/// The number after `prefix` up to `suffix` (`GPU = T4. Max memory = 14.7 GB.`).
fn between<'a>(text: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    let start = text.find(prefix)? + prefix.len();
    let len = text[start..].find(suffix)?;
    Some(&text[start..start + len])
}

fn row(path: &Path) -> Option<Row> {
    let bytes = std::fs::read(path).ok()?;
    let nb: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let (source, output) = cells(&nb);
    let gpu = between(&output, "GPU = ", ". Max memory = ")?;
    let measured_gib: f64 = between(&output, "Peak reserved memory = ", " GB.")?.trim().parse().ok()?;
    let gpu = gpu.trim_start_matches("NVIDIA ").trim_start_matches("Tesla ").to_string();
    let name = path.file_name()?.to_string_lossy().into_owned();
    let outcome = if let Some(why) = excluded(&source).or_else(|| peak_before_training(&output)) {
        Outcome::Excluded(why)
    } else {
        estimate(path, &bytes, &gpu)
    };
    Some(Row { name, gpu, measured_gib, outcome })
}

/// Not decoder-LM training: Unsloth's sentence-transformer loader (encoder-only embedding
/// models) and speech models.
fn excluded(source: &str) -> Option<&'static str> {
    if source.contains("FastSentenceTransformer") {
        return Some("encoder-only embedding model (`FastSentenceTransformer`)");
    }
    let speech = ["WhisperForConditionalGeneration", "CsmForConditionalGeneration", "snac", "Orpheus"];
    speech.iter().any(|m| source.contains(m)).then_some("speech model")
}

/// The notebook's own `Peak reserved memory for training` (the peak minus what was reserved
/// before `trainer.train()`) is zero: the peak was set before training (loading, or inference
/// cells that run first), so it does not measure the training step.
fn peak_before_training(output: &str) -> Option<&'static str> {
    let added: f64 = between(output, "Peak reserved memory for training = ", " GB.")?.trim().parse().ok()?;
    (added <= 0.0).then_some("peak set before `trainer.train()` (its `Peak reserved memory for training` is 0): a loading or inference peak, not training")
}

fn estimate(path: &Path, bytes: &[u8], gpu: &str) -> Outcome {
    let card = match resolve_gpu(gpu) {
        Ok(g) => g.clone(),
        Err(_) => return Outcome::Failed(format!("GPU `{gpu}` not in the catalog")),
    };
    let options = Options { gpu: Some(card), levers: Levers::ForFindings, ..Options::default() };
    let analysis = analyze_bytes(path, bytes, &options);
    let Some(est) = analysis.estimate else {
        let why = match &analysis.model {
            Some(ModelLookup::Unknown { name, .. }) => format!("unknown model `{name}`"),
            Some(ModelLookup::Unreadable { name, reason, .. }) => {
                let here = concat!(env!("CARGO_MANIFEST_DIR"), "/../");
                format!("cannot read `{name}`: {}", reason.replace(here, "../"))
            }
            _ if analysis.plan.is_none() => "no training plan".to_string(),
            _ => "names no model".to_string(),
        };
        return Outcome::Failed(why);
    };
    Outcome::Estimated {
        reserved_gib: est.peak.reserved_bytes as f64 / GIB,
        low: est.band.0,
        high: est.band.1,
        verdict: est.fit.map(|f| f.verdict),
    }
}

fn verdict_name(v: Option<Verdict>) -> &'static str {
    match v {
        Some(Verdict::Fits) => "fits",
        Some(Verdict::Tight) => "tight",
        Some(Verdict::MayExceed) => "may exceed",
        Some(Verdict::Exceeds) => "exceeds",
        None => "",
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn report(rows: &[Row]) {
    println!("# Estimates against Unsloth's notebooks\n");
    println!("Every notebook of `../shared/corpus-wild/unsloth-notebooks/nb` whose outputs print the GPU and");
    println!("`Peak reserved memory` (`max_memory_reserved() / 1024**3`), estimated on that GPU through the");
    println!("whole pipeline (`cargo bench --bench notebooks`). Error = (estimate − measured) / measured in the");
    println!("reserved view; band = the estimate's stated band applied to its reserved view.\n");
    println!("| notebook | GPU | estimate GiB | measured GiB | error | in band | band | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut errors = Vec::new();
    let (mut counted, mut inside, mut exceeds, mut may_exceed) = (0usize, 0usize, 0usize, 0usize);
    let (mut widest_low, mut widest_high) = (0f64, 0f64);
    let mut failed = Vec::new();
    let mut excluded = Vec::new();
    for r in rows {
        match &r.outcome {
            Outcome::Excluded(why) => excluded.push((r, *why)),
            Outcome::Failed(why) => {
                counted += 1;
                failed.push((r, why.clone()));
            }
            Outcome::Estimated { reserved_gib, low, high, verdict } => {
                counted += 1;
                let error = reserved_gib / r.measured_gib - 1.0;
                let within =
                    r.measured_gib >= reserved_gib * (1.0 + low) && r.measured_gib <= reserved_gib * (1.0 + high);
                errors.push(error.abs());
                inside += usize::from(within);
                exceeds += usize::from(*verdict == Some(Verdict::Exceeds));
                may_exceed += usize::from(*verdict == Some(Verdict::MayExceed));
                widest_low = widest_low.max(-low);
                widest_high = widest_high.max(*high);
                println!(
                    "| {} | {} | {reserved_gib:.2} | {:.2} | {:+.1} % | {} | {:+.0} % / {:+.0} % | {} |",
                    r.name,
                    r.gpu,
                    r.measured_gib,
                    error * 100.0,
                    if within { "yes" } else { "no" },
                    low * 100.0,
                    high * 100.0,
                    verdict_name(*verdict)
                );
            }
        }
    }
    errors.sort_by(f64::total_cmp);
    let estimated = errors.len();
    println!("\n## Summary\n");
    println!("| figure | value | target |");
    println!("|---|---|---|");
    println!(
        "| decoder-LM training notebooks estimated | {estimated} of {counted} ({:.0} %) | ≥ 90 % |",
        100.0 * estimated as f64 / counted.max(1) as f64
    );
    println!("| median \\|error\\| (reserved) | {:.1} % | ≤ 15 % |", percentile(&errors, 0.5) * 100.0);
    println!("| p90 \\|error\\| (reserved) | {:.1} % | |", percentile(&errors, 0.9) * 100.0);
    println!(
        "| measured inside the stated band | {inside} of {estimated} ({:.0} %) | ≥ 90 % |",
        100.0 * inside as f64 / estimated.max(1) as f64
    );
    println!("| widest band, high side | +{:.0} % | ≤ +35 % |", widest_high * 100.0);
    println!(
        "| widest band, low side (reaches the run at short samples where batches are padded to their longest) | −{:.0} % | ≤ −35 % |",
        widest_low * 100.0
    );
    println!("| judged `exceeds` on their own card | {exceeds} | 0 |");
    println!("| judged `may-exceed` (exceeds once a batch holds a sample of the maximum length) | {may_exceed} | |");
    println!("\n## Not estimated\n");
    if failed.is_empty() {
        println!("Every decoder-LM training notebook gets an estimate.");
    } else {
        println!("| notebook | GPU | measured GiB | why |");
        println!("|---|---|---|---|");
    }
    for (r, why) in failed {
        println!("| {} | {} | {:.2} | {why} |", r.name, r.gpu, r.measured_gib);
    }
    println!("\n## Excluded (not decoder-LM training, or the peak is not training's)\n");
    println!("| notebook | GPU | measured GiB | why |");
    println!("|---|---|---|---|");
    for (r, why) in excluded {
        println!("| {} | {} | {:.2} | {why} |", r.name, r.gpu, r.measured_gib);
    }
}
