//! GPU models: capacity, bf16 and fp8 support.
//!
//! The facts live in `server/oomlint-core/data/gpus.json`, one row per device as PyTorch
//! sees it: an MI250X module is two 64 GB devices, a GB200 superchip two GPUs, and a GB10's
//! capacity is the unified memory it shares with the CPU (the row's `note` says so).
//! [`resolve_gpu`] accepts the spellings people and drivers use: a query and every catalog
//! name and alias are compared after lowercasing, removing everything but letters and
//! digits, and dropping the words `nvidia`, `geforce`, `tesla`, `amd` and `instinct`, so
//! `A100 80GB`, `a100-80gb`, `NVIDIA A100-SXM4-80GB` and `a100_80gb` are one key, and so are
//! `MI300X` and `AMD Instinct MI300X`.
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
    /// Capacity of one device as the driver reports it (what
    /// `torch.cuda.get_device_properties().total_memory` sees; on ROCm the same call).
    pub memory_bytes: u64,
    pub bf16: bool,
    /// Native FP8 matmuls (`torch._scaled_mm`): NVIDIA compute capability 8.9 and later,
    /// AMD CDNA 3 (`gfx942`) and later.
    #[serde(default)]
    pub fp8: bool,
    /// CUDA compute capability, e.g. `8.0`; for an AMD GPU its `gfx` target, e.g. `gfx942`.
    pub compute_capability: String,
    #[serde(default)]
    pub vendor: Vendor,
    #[serde(default)]
    pub aliases: Vec<String>,
    /// What the capacity is measured against, where a device is not a whole card or its
    /// memory is not its own (one die of an MI250X, unified memory on a GB10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub source: String,
}

/// Who makes the GPU. PyTorch on ROCm presents an AMD GPU as a `cuda` device and reads
/// `PYTORCH_HIP_ALLOC_CONF`, so the estimate is the same; the vendor decides which driver
/// `--gpu auto` could ask and how the compute capability reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    #[default]
    Nvidia,
    Amd,
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
    ["nvidia", "geforce", "tesla", "amd", "instinct"].iter().fold(kept, |acc, word| acc.replace(word, ""))
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
/// `total_bytes` should be the capacity CUDA (or HIP) reports (NVML v2 `total - reserved`,
/// ROCm SMI's VRAM total); it also picks between the sizes of an ambiguous name. `vendor` is
/// the driver's: it stays on a GPU the catalog lacks.
pub fn gpu_from_driver_name(name: &str, total_bytes: u64, vendor: Vendor) -> Gpu {
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
            fp8: false,
            compute_capability: "unknown".to_string(),
            vendor,
            aliases: Vec::new(),
            note: None,
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
            ("mi300x", "MI300X"),
            ("AMD Instinct MI300X", "MI300X"),
            ("Instinct MI325X", "MI325X"),
            ("AMD Instinct MI355X", "MI355X"),
            ("mi250x", "MI250X"),
            ("AMD Instinct MI250X/MI250", "MI250X"),
            ("MI250", "MI250"),
            ("NVIDIA B300 SXM6 AC", "B300"),
            ("NVIDIA GB200", "GB200"),
            ("gb300", "GB300"),
            ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000"),
            ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"),
            ("rtx pro 6000", "RTX-PRO-6000"),
            ("NVIDIA GB10", "GB10"),
            ("DGX Spark", "GB10"),
            ("NVIDIA GeForce RTX 5080", "RTX-5080"),
            ("rtx 5070 ti", "RTX-5070-Ti"),
            ("NVIDIA GeForce RTX 4080 SUPER", "RTX-4080"),
            ("RTX 4070 Ti SUPER", "RTX-4070-Ti-SUPER"),
            ("RTX 4070 Ti", "RTX-4070"),
            ("NVIDIA GeForce RTX 3090 Ti", "RTX-3090-Ti"),
            ("rtx3080-10gb", "RTX-3080-10GB"),
            ("NVIDIA RTX A5000", "RTX-A5000"),
            ("NVIDIA RTX 4000 Ada Generation", "RTX-4000-Ada"),
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
            ("rtx 4060 ti", ["RTX-4060-Ti-8GB", "RTX-4060-Ti-16GB"]),
            ("NVIDIA GeForce RTX 5060 Ti", ["RTX-5060-Ti-8GB", "RTX-5060-Ti-16GB"]),
            ("NVIDIA GeForce RTX 3080", ["RTX-3080-10GB", "RTX-3080-12GB"]),
            ("RTX 6000", ["RTX-6000-Ada", "RTX-PRO-6000"]),
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
        let none = resolve_gpu("MI400X").err().map(|e| e.suggestions).unwrap_or_default();
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
        // ROCm: torch total_memory and rocm-smi's VRAM total agree to the byte.
        assert_eq!(gpu("MI300X").memory_bytes, 206_141_652_992);
        assert_eq!(gpu("MI355X").memory_bytes, 309_220_868_096);
        assert_eq!(gpu("MI250X").memory_bytes, 65_520 << 20);
        // OOM messages print two decimals: "GPU 0 has a total capacity of 191.98 GiB".
        let oom = |name: &str| (gpu(name).memory_bytes as f64 / (1u64 << 30) as f64 * 100.0).round() / 100.0;
        for (name, printed) in [
            ("MI300X", 191.98),
            ("MI325X", 255.98),
            ("MI355X", 287.98),
            ("MI250X", 63.98),
            ("GB200", 184.31),
            ("B300", 267.69),
            ("GB300", 276.5),
            ("GB10", 121.63),
            ("RTX PRO 6000", 94.97),
            ("RTX 5090", 31.36),
        ] {
            assert_eq!(oom(name), printed, "{name}");
        }
    }

    #[test]
    fn devices_are_what_pytorch_sees() {
        // An MI250X module is two 64 GB devices; a GB200 superchip two GPUs: one row is one.
        let mi250x = gpu("mi250x");
        assert!(mi250x.memory_bytes < 64 << 30, "one GCD, not the 128 GB module");
        assert!(mi250x.note.as_deref().is_some_and(|n| n.contains("two")), "{:?}", mi250x.note);
        assert_eq!((mi250x.vendor, mi250x.compute_capability.as_str()), (Vendor::Amd, "gfx90a"));
        assert!(gpu("GB200").note.as_deref().is_some_and(|n| n.contains("two")));
        // Unified memory: say what the verdict is measured against.
        let gb10 = gpu("GB10").note.as_deref().unwrap_or_default();
        assert!(gb10.contains("unified memory") && gb10.contains("CPU"), "{gb10}");
        // Whole cards carry no note.
        assert_eq!(gpu("MI300X").note, None);
        assert_eq!(gpu("H100").note, None);
    }

    #[test]
    fn fp8_support() {
        for name in ["H100", "H200", "B200", "B300", "GB10", "L4", "RTX 4090", "RTX 5090", "MI300X", "MI355X"] {
            assert!(gpu(name).fp8, "{name}");
        }
        for name in ["A100-80GB", "A10G", "RTX 3090", "T4", "V100-32GB", "MI250X"] {
            assert!(!gpu(name).fp8, "{name}");
        }
    }

    #[test]
    fn entries_are_consistent() {
        let gpus = &index().gpus;
        assert!(gpus.len() >= 50, "{} GPUs", gpus.len());
        let mut owner: HashMap<String, &str> = HashMap::default();
        for g in gpus {
            match g.vendor {
                Vendor::Nvidia => {
                    let cc: f64 = g.compute_capability.parse().unwrap_or(0.0);
                    assert!(cc >= 6.0, "{}: compute capability", g.name);
                    assert_eq!(g.bf16, cc >= 8.0, "{}: bf16 follows compute capability 8.0", g.name);
                    assert_eq!(g.fp8, cc >= 8.9, "{}: fp8 follows compute capability 8.9", g.name);
                }
                Vendor::Amd => {
                    let arch = g.compute_capability.strip_prefix("gfx").unwrap_or_default();
                    assert!(["90a", "942", "950"].contains(&arch), "{}: gfx target", g.name);
                    assert!(g.bf16, "{}: CDNA 2 and later have bf16", g.name);
                    assert_eq!(g.fp8, arch != "90a", "{}: fp8 from CDNA 3", g.name);
                }
            }
            assert!(g.memory_bytes > 7 << 30 && g.memory_bytes < 320 << 30, "{}: capacity", g.name);
            assert!(!g.source.is_empty(), "{}: source", g.name);
            assert!(g.note.as_ref().is_none_or(|n| !n.is_empty()), "{}: note", g.name);
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
        let a10g = gpu_from_driver_name("NVIDIA A10G", 23_000_000_000, Vendor::Nvidia);
        assert_eq!((a10g.name.as_str(), a10g.memory_bytes, a10g.bf16), ("A10G", 23_000_000_000, true));
        let a100 = gpu_from_driver_name("NVIDIA A100", 85_000_000_000, Vendor::Nvidia);
        assert_eq!(a100.name, "A100-80GB");
        let small = gpu_from_driver_name("NVIDIA A100", 42_000_000_000, Vendor::Nvidia);
        assert_eq!(small.name, "A100-40GB");
        let odd = gpu_from_driver_name(" NVIDIA Future GPU 9000 ", 1 << 40, Vendor::Nvidia);
        assert_eq!(
            (odd.name.as_str(), odd.memory_bytes, odd.bf16, odd.compute_capability.as_str()),
            ("NVIDIA Future GPU 9000", 1 << 40, false, "unknown")
        );
    }
}
