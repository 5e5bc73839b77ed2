//! AMD GPUs through the ROCm SMI library (`librocm_smi64.so`), loaded at run time with
//! `libloading` so the binary runs where ROCm is absent. PyTorch on ROCm presents these devices
//! as `cuda` devices with the VRAM capacity ROCm reports.
//!
//! The calls and their C signatures (`rocm_smi/rocm_smi.h`, ROCm SMI library): `rsmi_init(u64)`,
//! `rsmi_num_monitor_devices(u32*)`, `rsmi_dev_name_get(u32, char*, size_t)`,
//! `rsmi_dev_memory_total_get(u32, RSMI_MEM_TYPE_VRAM = 0, u64*)`,
//! `rsmi_dev_memory_usage_get(u32, RSMI_MEM_TYPE_VRAM, u64*)`, `rsmi_shut_down()`; each returns
//! `rsmi_status_t`, 0 on success.

use super::{DetectedGpu, ProbeError};
use crate::catalog::Vendor;
use libloading::{Library, Symbol};
use std::ffi::{c_char, CStr};

/// Where ROCm installs the library; the plain name lets the loader search `LD_LIBRARY_PATH`.
const LIBRARIES: [&str; 3] = ["librocm_smi64.so.1", "librocm_smi64.so", "/opt/rocm/lib/librocm_smi64.so.1"];

const SUCCESS: i32 = 0;
const MEM_TYPE_VRAM: u32 = 0;

type Init = unsafe extern "C" fn(u64) -> i32;
type ShutDown = unsafe extern "C" fn() -> i32;
type Count = unsafe extern "C" fn(*mut u32) -> i32;
type Name = unsafe extern "C" fn(u32, *mut c_char, usize) -> i32;
type Memory = unsafe extern "C" fn(u32, u32, *mut u64) -> i32;

/// The AMD GPUs ROCm SMI lists, or why they cannot be read.
pub(super) fn devices() -> Result<Vec<DetectedGpu>, ProbeError> {
    let library = open()?;
    // SAFETY: the symbols are looked up by the names and C signatures of `rocm_smi.h`; each
    // pointer argument points at a live local of the type the header declares, and the name
    // buffer's length is passed with it.
    unsafe {
        let init: Symbol<Init> = symbol(&library, b"rsmi_init\0")?;
        let shut_down: Symbol<ShutDown> = symbol(&library, b"rsmi_shut_down\0")?;
        let count: Symbol<Count> = symbol(&library, b"rsmi_num_monitor_devices\0")?;
        let name: Symbol<Name> = symbol(&library, b"rsmi_dev_name_get\0")?;
        let total: Symbol<Memory> = symbol(&library, b"rsmi_dev_memory_total_get\0")?;
        let usage: Symbol<Memory> = symbol(&library, b"rsmi_dev_memory_usage_get\0")?;
        status(init(0), "rsmi_init")?;
        let listed = (|| {
            let mut n = 0u32;
            status(count(&mut n), "rsmi_num_monitor_devices")?;
            let mut gpus = Vec::new();
            for index in 0..n {
                let mut buffer = [0 as c_char; 256];
                status(name(index, buffer.as_mut_ptr(), buffer.len()), "rsmi_dev_name_get")?;
                let (mut total_bytes, mut used_bytes) = (0u64, 0u64);
                status(total(index, MEM_TYPE_VRAM, &mut total_bytes), "rsmi_dev_memory_total_get")?;
                status(usage(index, MEM_TYPE_VRAM, &mut used_bytes), "rsmi_dev_memory_usage_get")?;
                gpus.push(DetectedGpu {
                    index,
                    name: CStr::from_ptr(buffer.as_ptr()).to_string_lossy().trim().to_string(),
                    uuid: String::new(),
                    vendor: Vendor::Amd,
                    total_bytes,
                    reserved_bytes: 0,
                    free_bytes: total_bytes.saturating_sub(used_bytes),
                    used_bytes,
                    processes: Vec::new(),
                });
            }
            Ok(gpus)
        })();
        shut_down();
        listed
    }
}

fn open() -> Result<Library, ProbeError> {
    let mut last = String::new();
    for path in LIBRARIES {
        // SAFETY: loading the ROCm SMI library runs only its own initialisers.
        match unsafe { Library::new(path) } {
            Ok(library) => return Ok(library),
            Err(e) => last = e.to_string(),
        }
    }
    Err(ProbeError::NoDriver(last))
}

/// # Safety
/// `T` must be the C signature the library declares for `name`.
unsafe fn symbol<'l, T>(library: &'l Library, name: &[u8]) -> Result<Symbol<'l, T>, ProbeError> {
    // SAFETY: the caller names the declared signature.
    unsafe { library.get(name) }.map_err(|e| ProbeError::Driver(e.to_string()))
}

fn status(code: i32, call: &str) -> Result<(), ProbeError> {
    if code == SUCCESS {
        Ok(())
    } else {
        Err(ProbeError::Driver(format!("{call} returned ROCm SMI status {code}")))
    }
}
