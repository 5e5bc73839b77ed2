//! The 461 published configs in `../shared/corpus`: every file is classified into the
//! framework its `MANIFEST.tsv` names, parses without a syntax error, and gets no
//! duplicate-key finding except the known one. Prints the confusion table.

use oomlint::analysis::{analyze_bytes, Options};
use oomlint::format::Format;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if dir.join("MANIFEST.tsv").is_file() {
        Some(dir)
    } else {
        eprintln!("notice: ../shared/corpus is absent; skipping the corpus test");
        None
    }
}

/// The manifest's framework column for a detected format.
fn family(format: Format) -> &'static str {
    match format {
        Format::LitgptLora
        | Format::LitgptAdapter
        | Format::LitgptAdapterV2
        | Format::LitgptFull
        | Format::LitgptPretrain => "litgpt",
        Format::TrlSft | Format::TrlDpo | Format::TrlGrpo => "trl",
        Format::Transformers => "transformers",
        Format::Axolotl => "axolotl",
        Format::Llamafactory => "llamafactory",
        Format::Accelerate => "accelerate",
        Format::Deepspeed => "deepspeed",
        Format::Verl => "verl",
        Format::Openrlhf => "openrlhf",
        Format::Env => "env",
        Format::Oomlint | Format::Unknown => "other",
    }
}

#[test]
fn corpus_is_classified_and_parses() {
    let Some(dir) = corpus_dir() else { return };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("manifest");
    let mut confusion: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut findings = Vec::new();
    let mut files = 0;
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (path, expected) = (cols[0], cols[5]);
        let bytes = std::fs::read(dir.join(path)).expect("corpus file");
        let analysis = analyze_bytes(Path::new(path), &bytes, &Options::default());
        let got = family(analysis.format);
        *confusion.entry((expected.to_string(), got)).or_default() += 1;
        // The manifest predates the launch-script reader: a shell script it files under `env`
        // that launches verl is read as verl's format.
        let launch = expected == "env" && path.ends_with(".sh") && got == "verl";
        if got != expected && !launch {
            wrong.push(format!("{path}: expected {expected}, detected {}", analysis.format));
        }
        for d in &analysis.diagnostics {
            if d.rule == "yaml-syntax" || d.rule == "duplicate-key" {
                findings.push(format!("{path}: {} {}", d.rule, d.message));
            }
        }
        files += 1;
    }
    println!("expected → detected: files");
    for ((expected, got), n) in &confusion {
        println!("{expected:>14} → {got:<14} {n}");
    }
    assert_eq!(files, 461, "the corpus has 461 files");
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
    assert_eq!(
        findings,
        ["accelerate/tests/test_configs/0_30_0_sagemaker.yaml: duplicate-key duplicate key `debug`; the last value wins"],
        "only the known duplicate key"
    );
}
