//! GPU models: capacity and bf16 support.
//!
//! The facts live in `server/data/gpus.json`. [`resolve_gpu`] accepts the spellings people
//! and drivers use: a query and every catalog name and alias are compared after
//! lowercasing, dropping the words `nvidia`, `geforce` and `tesla`, and removing everything
//! but letters and digits, so `A100 80GB`, `a100-80gb`, `NVIDIA A100-SXM4-80GB` and
//! `a100_80gb` are one key.
//!
//! A bare name whose memory size varies (`a100`, `v100`, `rtx 4060 ti`) is refused with its
//! candidates rather than guessed: the capacities differ up to twofold, so a guess would
//! silently decide the verdict. `h100` names the 80 GB SXM card (the PCIe card has the same
//! capacity within 0.1 %; the 94 GB NVL must be named).

use crate::HashMap;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

use super::models::quoted_list;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    /// Canonical name, e.g. `A100-80GB`.
    pub name: String,
    /// Capacity as the driver reports it (what `torch.cuda.get_device_properties().total_memory` sees).
    pub memory_bytes: u64,
    pub bf16: bool,
    /// CUDA compute capability, e.g. 8.0.
    pub compute_capability: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub source: String,
}

/// A GPU name that matches no catalog entry, or a bare name that several entries share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownGpu {
    pub(crate) query: String,
    /// True when the name is known but its memory size is not (`a100`).
    ambiguous: bool,
    /// Catalog names to choose from (ambiguous) or that look alike (unknown), at most three.
    pub(crate) suggestions: Vec<String>,
}

impl fmt::Display for UnknownGpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ambiguous {
            return write!(
                f,
                "GPU `{}` comes in several memory sizes; name one: {}",
                self.query,
                quoted_list(&self.suggestions)
            );
        }
        write!(f, "unknown GPU `{}`", self.query)?;
        if !self.suggestions.is_empty() {
            write!(f, "; did you mean {}?", quoted_list(&self.suggestions))?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownGpu {}

#[derive(Deserialize)]
struct GpuFile {
    gpus: Vec<Gpu>,
    ambiguous: Vec<AmbiguousName>,
}

/// A bare name shared by entries of different capacity.
#[derive(Deserialize)]
struct AmbiguousName {
    name: String,
    candidates: Vec<String>,
}

struct GpuIndex {
    gpus: Vec<Gpu>,
    by_key: HashMap<String, usize>,
    ambiguous: HashMap<String, Vec<String>>,
}

fn index() -> &'static GpuIndex {
    static INDEX: OnceLock<GpuIndex> = OnceLock::new();
    INDEX.get_or_init(|| {
        // The embedded file is checked by the tests; a parse failure is a build defect.
        let file: GpuFile =
            serde_json::from_str(include_str!("../../data/gpus.json")).expect("server/data/gpus.json is valid");
        let mut by_key = HashMap::default();
        for (i, gpu) in file.gpus.iter().enumerate() {
            for key in gpu_keys(gpu) {
                by_key.entry(normalize(key)).or_insert(i);
            }
        }
        let ambiguous = file.ambiguous.into_iter().map(|a| (normalize(&a.name), a.candidates)).collect();
        GpuIndex { gpus: file.gpus, by_key, ambiguous }
    })
}

fn gpu_keys(gpu: &Gpu) -> impl Iterator<Item = &str> {
    std::iter::once(gpu.name.as_str()).chain(gpu.aliases.iter().map(String::as_str))
}

/// Lowercase, without vendor words, letters and digits only.
fn normalize(name: &str) -> String {
    let lower = name.to_lowercase();
    let kept: String = lower.chars().filter(char::is_ascii_alphanumeric).collect();
    ["nvidia", "geforce", "tesla"].iter().fold(kept, |acc, word| acc.replace(word, ""))
}

/// Every GPU of the catalog, in its order (a playground's GPU picker lists them).
pub fn all_gpus() -> &'static [Gpu] {
    &index().gpus
}

/// Resolves a GPU name (`a100-40gb`, `NVIDIA A10G`, `rtx4090`, `t4`, ...).
pub fn resolve_gpu(name: &str) -> Result<&'static Gpu, UnknownGpu> {
    let idx = index();
    let key = normalize(name);
    if let Some(&i) = idx.by_key.get(&key) {
        return Ok(&idx.gpus[i]);
    }
    if let Some(candidates) = idx.ambiguous.get(&key) {
        return Err(UnknownGpu { query: name.to_string(), ambiguous: true, suggestions: candidates.clone() });
    }
    Err(UnknownGpu { query: name.to_string(), ambiguous: false, suggestions: suggest(&key) })
}

/// Up to three catalog names whose keys look like `key`, most similar first.
fn suggest(key: &str) -> Vec<String> {
    let idx = index();
    let mut scored: Vec<(f64, usize)> = idx
        .by_key
        .iter()
        .map(|(candidate, &i)| (strsim::jaro_winkler(key, candidate), i))
        .filter(|(score, _)| *score >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, i) in scored {
        let name = &idx.gpus[i].name;
        if !out.contains(name) {
            out.push(name.clone());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// The GPU a driver reports: the catalog entry's facts with the reported capacity, or, for
/// a name the catalog lacks, a GPU with that capacity and unknown compute capability.
///
/// `total_bytes` should be the capacity CUDA reports (NVML v2 `total - reserved`); it also
/// picks between the sizes of an ambiguous name.
pub fn gpu_from_nvml_name(name: &str, total_bytes: u64) -> Gpu {
    let known = match resolve_gpu(name) {
        Ok(gpu) => Some(gpu),
        Err(e) if e.ambiguous => e
            .suggestions
            .iter()
            .filter_map(|s| resolve_gpu(s).ok())
            .min_by_key(|gpu| gpu.memory_bytes.abs_diff(total_bytes)),
        Err(_) => None,
    };
    match known {
        Some(gpu) => Gpu {
            memory_bytes: total_bytes,
            source: format!("reported by the driver as `{}`; other facts: {}", name.trim(), gpu.source),
            ..gpu.clone()
        },
        None => Gpu {
            name: name.trim().to_string(),
            memory_bytes: total_bytes,
            bf16: false,
            compute_capability: "unknown".to_string(),
            aliases: Vec::new(),
            source: "reported by the driver; not in the catalog, so bf16 support is not assumed".to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(name: &str) -> &'static Gpu {
        match resolve_gpu(name) {
            Ok(gpu) => gpu,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn spellings_resolve() {
        let table = [
            ("a100-40gb", "A100-40GB"),
            ("A100 40GB", "A100-40GB"),
            ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
            ("A100 80GB", "A100-80GB"),
            ("a100_80gb", "A100-80GB"),
            ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
            ("NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"),
            ("NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"),
            ("h100", "H100-80GB"),
            ("NVIDIA H100 80GB HBM3", "H100-80GB"),
            ("NVIDIA H100 PCIe", "H100-PCIe"),
            ("H100 NVL", "H100-NVL"),
            ("NVIDIA H200", "H200"),
            ("NVIDIA A10G", "A10G"),
            ("a10g", "A10G"),
            ("A10", "A10"),
            ("rtx4090", "RTX-4090"),
            ("4090", "RTX-4090"),
            ("NVIDIA GeForce RTX 4090", "RTX-4090"),
            ("RTX 3090", "RTX-3090"),
            ("NVIDIA GeForce RTX 3060", "RTX-3060-12GB"),
            ("rtx 4060 ti 16gb", "RTX-4060-Ti-16GB"),
            ("t4", "T4"),
            ("Tesla T4", "T4"),
            ("Colab T4", "T4"),
            ("Tesla V100-SXM2-16GB", "V100-16GB"),
            ("Tesla P100-PCIE-16GB", "P100"),
            ("NVIDIA RTX A6000", "RTX-A6000"),
            ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"),
            ("L40S", "L40S"),
            ("nvidia l4", "L4"),
            ("NVIDIA B200", "B200"),
            ("GH200", "GH200"),
            ("RTX 5090", "RTX-5090"),
        ];
        for (query, expected) in table {
            assert_eq!(gpu(query).name, expected, "{query}");
        }
    }

    #[test]
    fn sizeless_names_are_refused_with_their_sizes() {
        for (query, sizes) in [
            ("a100", ["A100-40GB", "A100-80GB"]),
            ("NVIDIA A100", ["A100-40GB", "A100-80GB"]),
            ("v100", ["V100-16GB", "V100-32GB"]),
            ("NVIDIA GeForce RTX 4060 Ti", ["RTX-4060-Ti-8GB", "RTX-4060-Ti-16GB"]),
        ] {
            let err = resolve_gpu(query).err();
            assert_eq!(err.as_ref().map(|e| e.ambiguous), Some(true), "{query}");
            assert_eq!(err.map(|e| e.suggestions).unwrap_or_default(), sizes, "{query}");
        }
        let message = resolve_gpu("a100").err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(message, "GPU `a100` comes in several memory sizes; name one: `A100-40GB` or `A100-80GB`");
    }

    #[test]
    fn unknown_names_suggest_similar_ones() {
        let err = resolve_gpu("a10h").err();
        assert_eq!(err.as_ref().map(|e| e.ambiguous), Some(false));
        let suggestions = err.map(|e| e.suggestions).unwrap_or_default();
        assert!(suggestions.len() <= 3 && suggestions.contains(&"A10G".to_string()), "{suggestions:?}");
        let none = resolve_gpu("MI300X").err().map(|e| e.suggestions).unwrap_or_default();
        assert!(none.iter().all(|s| s != "A100-80GB"), "{none:?}");
        for odd in ["", " ", "-", "nvidia", "\u{0}"] {
            assert!(resolve_gpu(odd).is_err(), "{odd:?}");
        }
    }

    #[test]
    fn capacities_are_what_the_driver_reports() {
        // Exact cudaDeviceProp.totalGlobalMem values from public deviceQuery logs.
        assert_eq!(gpu("T4").memory_bytes, 15_828_320_256);
        assert_eq!(gpu("A100-SXM4-40GB").memory_bytes, 42_505_273_344);
        assert_eq!(gpu("A10").memory_bytes, 23_609_475_072);
        // Unsloth banners print total_memory / 2^30 to three decimals (ground-truth rows).
        let gib = |name: &str| (gpu(name).memory_bytes as f64 / (1u64 << 30) as f64 * 1000.0).round() / 1000.0;
        assert_eq!(gib("A10G"), 22.184);
        assert_eq!(gib("L4"), 22.161);
        assert_eq!(gib("A100-80GB"), 79.318);
        assert_eq!(gib("Tesla T4"), 14.741);
    }

    #[test]
    fn entries_are_consistent() {
        let gpus = &index().gpus;
        assert!(gpus.len() >= 25, "{} GPUs", gpus.len());
        let mut owner: HashMap<String, &str> = HashMap::default();
        for g in gpus {
            let cc: f64 = g.compute_capability.parse().unwrap_or(0.0);
            assert!(cc >= 6.0, "{}: compute capability", g.name);
            assert_eq!(g.bf16, cc >= 8.0, "{}: bf16 follows compute capability 8.0", g.name);
            assert!(g.memory_bytes > 7 << 30 && g.memory_bytes < 200 << 30, "{}: capacity", g.name);
            assert!(!g.source.is_empty(), "{}: source", g.name);
            for key in gpu_keys(g) {
                let previous = owner.insert(normalize(key), &g.name);
                assert!(previous.is_none_or(|p| p == g.name), "`{key}` names {previous:?} and {}", g.name);
            }
        }
        for (key, candidates) in &index().ambiguous {
            assert!(!index().by_key.contains_key(key), "ambiguous `{key}` is also a name");
            assert!(candidates.iter().all(|c| resolve_gpu(c).is_ok()), "{candidates:?}");
        }
    }

    #[test]
    fn nvml_names_keep_the_reported_capacity() {
        let a10g = gpu_from_nvml_name("NVIDIA A10G", 23_000_000_000);
        assert_eq!((a10g.name.as_str(), a10g.memory_bytes, a10g.bf16), ("A10G", 23_000_000_000, true));
        let a100 = gpu_from_nvml_name("NVIDIA A100", 85_000_000_000);
        assert_eq!(a100.name, "A100-80GB");
        let small = gpu_from_nvml_name("NVIDIA A100", 42_000_000_000);
        assert_eq!(small.name, "A100-40GB");
        let odd = gpu_from_nvml_name(" NVIDIA Future GPU 9000 ", 1 << 40);
        assert_eq!(
            (odd.name.as_str(), odd.memory_bytes, odd.bf16, odd.compute_capability.as_str()),
            ("NVIDIA Future GPU 9000", 1 << 40, false, "unknown")
        );
    }
}
