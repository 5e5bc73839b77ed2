//! `--gpu NAME|auto`, shared by `check`, `estimate` and `explain`.

use crate::catalog::gpus::resolve_gpu;
use crate::catalog::Gpu;
use crate::gpu_detect::{resolve_auto, LocalProbe};

/// Resolves the option: a catalog name, or `auto` through NVML (warnings go to
/// stderr; without a driver it falls back to `fallback`). An unknown name is a usage error.
pub fn resolve(arg: Option<&str>, fallback: Option<&Gpu>) -> Result<Option<Gpu>, String> {
    match arg {
        None => Ok(fallback.cloned()),
        Some(name) if name.eq_ignore_ascii_case("auto") => {
            let auto = resolve_auto(&LocalProbe, fallback);
            for warning in &auto.warnings {
                eprintln!("oomlint: warning: {warning}");
            }
            Ok(auto.gpu)
        }
        Some(name) => resolve_gpu(name).cloned().map(Some).map_err(|e| e.to_string()),
    }
}
