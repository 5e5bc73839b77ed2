//! The local Hugging Face cache, read for the core: where it is (from the environment, once
//! at start-up) and which snapshot of a hub repository it holds. Read-only; never the network.

use super::checkpoint::read_checkpoint;
use crate::catalog::{Checkpoint, LocalModelError};
use std::path::{Path, PathBuf};

/// The hub cache directory the Hugging Face libraries use: `$HF_HUB_CACHE`, else
/// `$HF_HOME/hub`, else `~/.cache/huggingface/hub` (`$XDG_CACHE_HOME` is not consulted,
/// as `huggingface_hub` does not for the hub cache). None when no home directory is known.
pub fn dir_from_environment() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("HF_HUB_CACHE") {
        return Some(dir);
    }
    if let Some(home) = set("HF_HOME") {
        return Some(home.join("hub"));
    }
    let home = set("HOME").or_else(|| set("USERPROFILE"))?;
    Some(home.join(".cache").join("huggingface").join("hub"))
}

/// The snapshot of `repo` (`org/name`) in the cache at `cache`: the revision given, else
/// the one `refs/main` points to, else the snapshot modified last. None when the cache holds
/// no snapshot of the repository.
pub fn snapshot(cache: &Path, repo: &str, revision: Option<&str>) -> Option<Result<Checkpoint, LocalModelError>> {
    let (org, name) = repo.split_once('/')?;
    let root = cache.join(format!("models--{org}--{name}"));
    let snapshots = root.join("snapshots");
    if !snapshots.is_dir() {
        return None;
    }
    let named = |rev: &str| {
        let rev = rev.trim();
        let valid = !rev.is_empty() && !rev.contains(['/', '\\']) && rev != "." && rev != "..";
        valid.then(|| snapshots.join(rev)).filter(|dir| dir.is_dir())
    };
    let by_ref = |r: &str| {
        let path = root.join("refs").join(r);
        std::fs::read_to_string(path).ok().and_then(|rev| named(&rev))
    };
    let dir = match revision {
        Some(rev) => named(rev).or_else(|| by_ref(rev)),
        None => by_ref("main").or_else(|| newest(&snapshots)),
    }?;
    Some(read_checkpoint(&dir))
}

/// The snapshot directory modified last.
fn newest(snapshots: &Path) -> Option<PathBuf> {
    std::fs::read_dir(snapshots)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let meta = entry.metadata().ok().filter(|m| m.is_dir())?;
            Some((meta.modified().ok(), entry.path()))
        })
        .max()
        .map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000}"#;

    fn snapshot_dir(cache: &Path, repo: &str, rev: &str) -> PathBuf {
        let dir = cache.join(format!("models--{}", repo.replace('/', "--"))).join("snapshots").join(rev);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), CONFIG).unwrap();
        dir
    }

    #[test]
    fn follows_refs_main_then_a_named_revision() {
        let cache = tempfile::tempdir().unwrap();
        let main = snapshot_dir(cache.path(), "org/tiny", "aaa");
        let other = snapshot_dir(cache.path(), "org/tiny", "bbb");
        let refs = cache.path().join("models--org--tiny/refs");
        std::fs::create_dir_all(&refs).unwrap();
        std::fs::write(refs.join("main"), "aaa").unwrap();
        assert_eq!(snapshot(cache.path(), "org/tiny", None).unwrap().unwrap().dir, main);
        assert_eq!(snapshot(cache.path(), "org/tiny", Some("bbb")).unwrap().unwrap().dir, other);
        assert!(snapshot(cache.path(), "org/tiny", Some("../x")).is_none());
    }

    #[test]
    fn without_refs_takes_the_only_snapshot_and_a_missing_repository_is_none() {
        let cache = tempfile::tempdir().unwrap();
        let dir = snapshot_dir(cache.path(), "org/tiny", "ccc");
        assert_eq!(snapshot(cache.path(), "org/tiny", None).unwrap().unwrap().dir, dir);
        assert!(snapshot(cache.path(), "org/other", None).is_none());
        assert!(snapshot(&cache.path().join("absent"), "org/tiny", None).is_none());
    }
}
