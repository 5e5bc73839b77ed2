//! The model resolution ladder's second step: a hub id (`org/name`) that no local directory
//! answers is read from the snapshot the local Hugging Face cache holds, before the catalog.
//! The cache is handed to the project (tests run in parallel: no process environment), and
//! to the CLI through `HF_HUB_CACHE` on its own command line.

use oomlint::analysis::analyze_bytes;
use oomlint::model::ModelLookup;
use oomlint::project::Project;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// A small Llama-style config: 2 layers of 256, 1000 tokens.
const CONFIG: &str = r#"{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 512, "tie_word_embeddings": false}"#;

const SCRIPT: &str = r#"from trl import SFTConfig, SFTTrainer
args = SFTConfig(output_dir="out", per_device_train_batch_size=2, bf16=True)
trainer = SFTTrainer(model="MODEL", args=args)
"#;

/// A cache at `cache` holding `repo` at revision `rev`, which `refs/main` names.
fn cached(cache: &Path, repo: &str, rev: &str) -> PathBuf {
    let root = cache.join(format!("models--{}", repo.replace('/', "--")));
    let snapshot = root.join("snapshots").join(rev);
    std::fs::create_dir_all(&snapshot).unwrap();
    std::fs::create_dir_all(root.join("refs")).unwrap();
    std::fs::write(root.join("refs/main"), rev).unwrap();
    std::fs::write(snapshot.join("config.json"), CONFIG).unwrap();
    snapshot
}

fn script(dir: &Path, model: &str) -> PathBuf {
    let file = dir.join("train.py");
    std::fs::write(&file, SCRIPT.replace("MODEL", model)).unwrap();
    file
}

fn lookup(cache: Option<PathBuf>, file: &Path) -> Option<ModelLookup> {
    let project = Arc::new(Project::with_hub_cache(cache));
    let options = project.options(file, None).unwrap();
    analyze_bytes(file, &std::fs::read(file).unwrap(), &options).model
}

#[test]
fn a_hub_id_is_read_from_the_cache_at_refs_main() {
    let (cache, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let snapshot = cached(cache.path(), "org/tiny", "0123abcd");
    cached(cache.path(), "org/tiny", "ffff0000"); // another snapshot, not the one main names
    std::fs::write(cache.path().join("models--org--tiny/refs/main"), "0123abcd").unwrap();
    let file = script(work.path(), "org/tiny");
    let Some(ModelLookup::Found(arch)) = lookup(Some(cache.path().to_path_buf()), &file) else {
        panic!("org/tiny not found in the cache")
    };
    assert_eq!(arch.name, "org/tiny");
    assert_eq!(arch.n_embd, 256);
    let expected = format!("from the local Hugging Face cache: {}", snapshot.display());
    assert!(arch.source.starts_with(&expected), "{}", arch.source);
}

#[test]
fn the_cache_answers_before_the_catalog_and_after_a_local_directory() {
    let (cache, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    cached(cache.path(), "meta-llama/Llama-3.2-1B", "aaaa");
    let file = script(work.path(), "meta-llama/Llama-3.2-1B");
    let found = lookup(Some(cache.path().to_path_buf()), &file);
    let arch = found.as_ref().and_then(ModelLookup::architecture).expect("found");
    assert!(arch.source.starts_with("from the local Hugging Face cache"), "{}", arch.source);
    assert_eq!(arch.n_embd, 256);

    // A directory beside the script under the same name wins over the cache.
    let local = work.path().join("meta-llama/Llama-3.2-1B");
    std::fs::create_dir_all(&local).unwrap();
    std::fs::write(local.join("config.json"), CONFIG.replace("\"hidden_size\": 256", "\"hidden_size\": 128")).unwrap();
    let found = lookup(Some(cache.path().to_path_buf()), &file);
    let arch = found.as_ref().and_then(ModelLookup::architecture).expect("found");
    assert!(arch.source.starts_with("local "), "{}", arch.source);
    assert_eq!(arch.n_embd, 128);
}

#[test]
fn a_missing_cache_or_repository_leaves_the_catalog_to_answer() {
    let work = tempfile::tempdir().unwrap();
    let absent = work.path().join("no-cache");
    for cache in [None, Some(absent)] {
        let file = script(work.path(), "meta-llama/Llama-3.2-1B");
        let found = lookup(cache.clone(), &file);
        let arch = found.as_ref().and_then(ModelLookup::architecture).expect("catalog");
        assert!(!arch.source.contains("Hugging Face cache"), "{}", arch.source);
        let file = script(work.path(), "org/never-downloaded");
        assert!(matches!(lookup(cache, &file), Some(ModelLookup::Unknown { .. })));
    }
}

fn estimate(cache: &Path, file: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(["estimate", "--format", "json"])
        .arg(file)
        .env("HF_HUB_CACHE", cache)
        .env("NO_COLOR", "1")
        .output()
        .expect("run oomlint")
}

#[test]
fn estimate_names_the_cached_snapshot_it_read() {
    let (cache, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let snapshot = cached(cache.path(), "org/tiny", "0123abcd");
    let file = script(work.path(), "org/tiny");
    let out = estimate(cache.path(), &file);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["model"]["name"], "org/tiny");
    let source = json["model"]["source"].as_str().unwrap_or_default();
    assert!(source.starts_with(&format!("from the local Hugging Face cache: {}", snapshot.display())), "{source}");

    // No cache there: the id is unknown, as before, with no error about the cache (only the
    // list of steps tried names it).
    let out = estimate(&work.path().join("absent"), &file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown model `org/tiny` (tried a local directory, the local Hugging Face cache,"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("cache").count(), 1, "{stderr}");
}
