//! The local GPUs, behind [`GpuProbe`] so the logic is tested without a GPU: NVIDIA cards
//! through NVML (`nvml-wrapper`, which loads `libnvidia-ml` at run time), and, where no NVIDIA
//! driver is found, AMD cards through the ROCm SMI library ([`rocm`], loaded at run time too),
//! which PyTorch on ROCm presents as `cuda` devices. Without either, `--gpu auto` says so and
//! asks for the card's name.

mod rocm;

use crate::catalog::{gpu_from_driver_name, Gpu, Vendor};
use std::fmt;

/// A process using a GPU.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GpuProcess {
    pub pid: u32,
    /// `None` where the driver does not report it (e.g. Windows WDDM, some containers).
    pub used_bytes: Option<u64>,
}

/// One GPU as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DetectedGpu {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub vendor: Vendor,
    /// Installed memory, as `nvidia-smi --query-gpu=memory.total` shows it.
    pub total_bytes: u64,
    /// Memory the driver sets aside (NVML v2); CUDA sees `total − reserved`.
    pub reserved_bytes: u64,
    pub free_bytes: u64,
    pub used_bytes: u64,
    pub processes: Vec<GpuProcess>,
}

impl DetectedGpu {
    /// The capacity CUDA (and so PyTorch) reports for this device.
    pub fn cuda_total_bytes(&self) -> u64 {
        self.total_bytes.saturating_sub(self.reserved_bytes)
    }
}

/// Why the GPUs could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeError {
    /// No NVIDIA driver (library missing, or no device node).
    NoDriver(String),
    /// The driver answered with an error.
    Driver(String),
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::NoDriver(why) => write!(
                f,
                "no GPU driver found ({why}); oomlint reads NVIDIA GPUs through NVML and AMD GPUs through the ROCm SMI library, so elsewhere name the card instead, e.g. `--gpu MI300X`"
            ),
            ProbeError::Driver(why) => write!(f, "the NVIDIA driver reported an error: {why}"),
        }
    }
}

impl std::error::Error for ProbeError {}

/// A source of GPU facts.
pub trait GpuProbe {
    fn devices(&self) -> Result<Vec<DetectedGpu>, ProbeError>;
}

/// The local GPUs: NVIDIA's through NVML, else AMD's through ROCm SMI.
pub struct LocalProbe;

impl GpuProbe for LocalProbe {
    fn devices(&self) -> Result<Vec<DetectedGpu>, ProbeError> {
        match NvmlProbe.devices() {
            Err(ProbeError::NoDriver(nvidia)) => rocm::devices().map_err(|e| match e {
                ProbeError::NoDriver(amd) => {
                    let amd = with_rocm_hint(amd, std::path::Path::new(ROCM_DEVICE).exists());
                    ProbeError::NoDriver(format!("NVML: {nvidia}; ROCm SMI: {amd}"))
                }
                driver => driver,
            }),
            answer => answer,
        }
    }
}

/// The NVIDIA GPUs, through NVML.
struct NvmlProbe;

impl GpuProbe for NvmlProbe {
    fn devices(&self) -> Result<Vec<DetectedGpu>, ProbeError> {
        use nvml_wrapper::enums::device::UsedGpuMemory;
        use nvml_wrapper::error::NvmlError;
        let nvml = nvml_wrapper::Nvml::init().map_err(|e| match e {
            NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound | NvmlError::DriverNotLoaded => {
                ProbeError::NoDriver(one_line(&e))
            }
            other => ProbeError::Driver(one_line(&other)),
        })?;
        let driver = |e: NvmlError| ProbeError::Driver(one_line(&e));
        let count = nvml.device_count().map_err(driver)?;
        let mut gpus = Vec::new();
        for index in 0..count {
            let device = nvml.device_by_index(index).map_err(driver)?;
            let memory = device.memory_info().map_err(driver)?;
            let mut processes: Vec<GpuProcess> = Vec::new();
            let compute = device.running_compute_processes().unwrap_or_default();
            let graphics = device.running_graphics_processes().unwrap_or_default();
            for p in compute.into_iter().chain(graphics) {
                if processes.iter().any(|q| q.pid == p.pid) {
                    continue;
                }
                let used_bytes = match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => Some(bytes),
                    UsedGpuMemory::Unavailable => None,
                };
                processes.push(GpuProcess { pid: p.pid, used_bytes });
            }
            gpus.push(DetectedGpu {
                index,
                name: device.name().map_err(driver)?,
                uuid: device.uuid().unwrap_or_default(),
                vendor: Vendor::Nvidia,
                total_bytes: memory.total,
                reserved_bytes: memory.reserved,
                free_bytes: memory.free,
                used_bytes: memory.used,
                processes,
            });
        }
        Ok(gpus)
    }
}

/// The device node of ROCm's kernel driver (amdkfd), present where PyTorch on ROCm can run.
const ROCM_DEVICE: &str = "/dev/kfd";

/// Why ROCm SMI could not load, with a word on an AMD GPU when ROCm's device node is present.
fn with_rocm_hint(why: String, rocm: bool) -> String {
    if rocm {
        format!("{why}; {ROCM_DEVICE} is present, so this looks like an AMD GPU under ROCm")
    } else {
        why
    }
}

fn one_line(e: &dyn fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or("").trim().to_owned()
}

/// The GPU `--gpu auto` resolves to, with what to tell the user.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoGpu {
    /// The detected device (capacity as CUDA reports it), or the fallback; `None` when neither.
    pub gpu: Option<Gpu>,
    /// Free memory of the detected device; `None` when falling back.
    pub free_bytes: Option<u64>,
    pub warnings: Vec<String>,
}

/// Memory in use on an idle device beyond which other processes are worth a warning.
const BUSY_FRACTION: f64 = 0.05;

/// Resolves `auto` to the current device (the first of `CUDA_VISIBLE_DEVICES`, by index or
/// UUID, else device 0), falling back to `fallback` with a warning when no GPU can be read.
/// Indices are NVML's (PCI bus order); CUDA numbers devices the same way when
/// `CUDA_DEVICE_ORDER=PCI_BUS_ID` or when the GPUs are alike.
pub fn resolve_auto(probe: &dyn GpuProbe, fallback: Option<&Gpu>) -> AutoGpu {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    resolve_auto_in(probe, fallback, visible.as_deref())
}

/// [`resolve_auto`] with the value of `CUDA_VISIBLE_DEVICES` given.
pub fn resolve_auto_in(probe: &dyn GpuProbe, fallback: Option<&Gpu>, visible: Option<&str>) -> AutoGpu {
    let fall_back = |why: String| {
        let warning = match fallback {
            Some(gpu) => format!("--gpu auto: {why}; using {} instead", gpu.name),
            None => format!("--gpu auto: {why}; no GPU given to fall back to"),
        };
        AutoGpu { gpu: fallback.cloned(), free_bytes: None, warnings: vec![warning] }
    };
    let devices = match probe.devices() {
        Ok(devices) => devices,
        Err(e) => return fall_back(e.to_string()),
    };
    let wanted = visible.and_then(|v| v.split(',').next()).map(str::trim);
    if wanted.is_some_and(|id| id.is_empty() || id.starts_with('-')) {
        return fall_back("CUDA_VISIBLE_DEVICES hides every GPU".to_owned());
    }
    let device = match wanted {
        None => devices.first(),
        Some(id) => match id.parse::<u32>() {
            Ok(index) => devices.iter().find(|d| d.index == index),
            Err(_) => {
                devices.iter().find(|d| !d.uuid.is_empty() && (d.uuid.starts_with(id) || id.starts_with(&d.uuid)))
            }
        },
    };
    let Some(device) = device else {
        return match wanted {
            Some(id) if !devices.is_empty() => {
                fall_back(format!("CUDA_VISIBLE_DEVICES names `{id}`, which the driver does not list"))
            }
            _ => fall_back("the driver lists no GPU".to_owned()),
        };
    };
    let mut warnings = Vec::new();
    let busy = device.used_bytes as f64 > device.total_bytes as f64 * BUSY_FRACTION;
    if busy {
        let pids: Vec<String> = device
            .processes
            .iter()
            .map(|p| match p.used_bytes {
                Some(bytes) => format!("pid {} ({})", p.pid, crate::explain::units::format_size(bytes)),
                None => format!("pid {}", p.pid),
            })
            .collect();
        let who = if pids.is_empty() { String::new() } else { format!(" by {}", pids.join(", ")) };
        warnings.push(format!(
            "GPU {} ({}) has {} in use{who}: only {} of {} is free for training",
            device.index,
            device.name,
            crate::explain::units::format_size(device.used_bytes),
            crate::explain::units::format_size(device.free_bytes),
            crate::explain::units::format_size(device.total_bytes)
        ));
    }
    AutoGpu {
        gpu: Some(gpu_from_driver_name(&device.name, device.cuda_total_bytes(), device.vendor)),
        free_bytes: Some(device.free_bytes),
        warnings,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// A probe answering from a fixed list (or a fixed error).
    pub(crate) struct FakeProbe(pub Result<Vec<DetectedGpu>, ProbeError>);

    impl GpuProbe for FakeProbe {
        fn devices(&self) -> Result<Vec<DetectedGpu>, ProbeError> {
            self.0.clone()
        }
    }

    pub(crate) fn h100(index: u32, used: u64, processes: Vec<GpuProcess>) -> DetectedGpu {
        DetectedGpu {
            index,
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: format!("GPU-0000000{index}-aaaa"),
            vendor: Vendor::Nvidia,
            total_bytes: 81_559_000_000,
            reserved_bytes: 536_870_912,
            free_bytes: 81_559_000_000 - 536_870_912 - used,
            used_bytes: used,
            processes,
        }
    }

    fn fallback() -> Gpu {
        Gpu {
            name: "A10G".into(),
            memory_bytes: 23_836_098_560,
            bf16: true,
            fp8: false,
            compute_capability: "8.6".into(),
            vendor: Default::default(),
            aliases: vec![],
            note: None,
            source: "test".into(),
        }
    }

    #[test]
    fn no_driver_falls_back_with_a_warning() {
        let probe = FakeProbe(Err(ProbeError::NoDriver("libnvidia-ml.so.1: cannot open shared object file".into())));
        let auto = resolve_auto_in(&probe, Some(&fallback()), None);
        assert_eq!(auto.gpu.as_ref().map(|g| g.name.as_str()), Some("A10G"));
        assert_eq!(auto.free_bytes, None);
        assert_eq!(
            auto.warnings,
            ["--gpu auto: no GPU driver found (libnvidia-ml.so.1: cannot open shared object file); oomlint reads NVIDIA GPUs through NVML and AMD GPUs through the ROCm SMI library, so elsewhere name the card instead, e.g. `--gpu MI300X`; using A10G instead"]
        );
        let none = resolve_auto_in(&probe, None, None);
        assert_eq!(none.gpu, None);
        assert!(none.warnings[0].ends_with("no GPU given to fall back to"));
    }

    #[test]
    fn an_amd_device_resolves_to_its_catalog_entry_or_stays_amd() {
        let mi300x = DetectedGpu {
            index: 0,
            name: "AMD Instinct MI300X".into(),
            uuid: String::new(),
            vendor: Vendor::Amd,
            total_bytes: 206_141_652_992,
            reserved_bytes: 0,
            free_bytes: 205_000_000_000,
            used_bytes: 1_141_652_992,
            processes: vec![],
        };
        let unknown = DetectedGpu { name: "AMD Radeon Future 9999".into(), ..mi300x.clone() };
        let auto = resolve_auto_in(&FakeProbe(Ok(vec![mi300x])), None, None);
        let gpu = auto.gpu.unwrap();
        assert_eq!((gpu.name.as_str(), gpu.vendor, gpu.bf16), ("MI300X", Vendor::Amd, true));
        let auto = resolve_auto_in(&FakeProbe(Ok(vec![unknown])), None, None);
        let gpu = auto.gpu.unwrap();
        assert_eq!((gpu.vendor, gpu.bf16, gpu.memory_bytes), (Vendor::Amd, false, 206_141_652_992));
    }

    #[test]
    fn without_either_library_the_local_probe_names_both() {
        // Neither NVML nor ROCm SMI is installed where the tests run (the GPU machine runs
        // `oomlint gpus` itself).
        if std::path::Path::new("/dev/nvidia0").exists() || std::path::Path::new(ROCM_DEVICE).exists() {
            eprintln!("notice: a GPU driver is present; skipping");
            return;
        }
        match LocalProbe.devices() {
            Err(ProbeError::NoDriver(why)) => assert!(why.contains("NVML: ") && why.contains("; ROCm SMI: "), "{why}"),
            other => panic!("expected no driver, got {other:?}"),
        }
    }

    #[test]
    fn idle_device_resolves_without_warnings() {
        let probe = FakeProbe(Ok(vec![h100(0, GIB / 2, vec![])]));
        let auto = resolve_auto_in(&probe, Some(&fallback()), None);
        let gpu = auto.gpu.unwrap();
        assert_eq!(gpu.name, "H100-80GB");
        assert_eq!(gpu.memory_bytes, 81_559_000_000 - 536_870_912);
        assert!(auto.warnings.is_empty());
        assert_eq!(auto.free_bytes, Some(81_559_000_000 - 536_870_912 - GIB / 2));
    }

    #[test]
    fn busy_device_names_the_processes() {
        let procs = vec![GpuProcess { pid: 4242, used_bytes: Some(30 * GIB) }, GpuProcess { pid: 7, used_bytes: None }];
        let probe = FakeProbe(Ok(vec![h100(0, 0, vec![]), h100(1, 30 * GIB, procs)]));
        let auto = resolve_auto_in(&probe, None, Some("1,0"));
        assert_eq!(auto.warnings.len(), 1);
        assert!(
            auto.warnings[0]
                .starts_with("GPU 1 (NVIDIA H100 80GB HBM3) has 30.00 GiB in use by pid 4242 (30.00 GiB), pid 7"),
            "{}",
            auto.warnings[0]
        );
        let by_uuid = resolve_auto_in(&probe, None, Some("GPU-00000001"));
        assert_eq!(by_uuid.warnings.len(), 1);
    }

    #[test]
    fn unknown_visible_device_falls_back() {
        let probe = FakeProbe(Ok(vec![h100(0, 0, vec![])]));
        let auto = resolve_auto_in(&probe, Some(&fallback()), Some("3"));
        assert!(auto.warnings[0].contains("CUDA_VISIBLE_DEVICES names `3`"));
        for hidden in ["", " ", "-1", "-1,0"] {
            assert!(resolve_auto_in(&probe, None, Some(hidden)).warnings[0].contains("hides every GPU"), "{hidden:?}");
        }
        let empty = resolve_auto_in(&FakeProbe(Ok(vec![])), Some(&fallback()), None);
        assert!(empty.warnings[0].contains("the driver lists no GPU"));
    }

    #[test]
    fn an_amd_gpu_is_named_in_the_message() {
        let why = with_rocm_hint("libnvidia-ml.so.1: cannot open shared object file".into(), true);
        let probe = FakeProbe(Err(ProbeError::NoDriver(why)));
        let auto = resolve_auto_in(&probe, None, None);
        assert_eq!(auto.gpu, None);
        let warning = &auto.warnings[0];
        assert!(warning.contains("/dev/kfd is present, so this looks like an AMD GPU under ROCm"), "{warning}");
        assert!(
            warning.contains("AMD GPUs through the ROCm SMI library") && warning.contains("`--gpu MI300X`"),
            "{warning}"
        );
        assert_eq!(with_rocm_hint("no library".into(), false), "no library");
    }

    #[test]
    fn errors_are_one_line() {
        assert_eq!(
            ProbeError::Driver("GPU is lost".into()).to_string(),
            "the NVIDIA driver reported an error: GPU is lost"
        );
        assert_eq!(one_line(&"first\nsecond"), "first");
    }
}
