//! `oomlint gpus [--format text|json]`: the local GPUs as the NVIDIA driver (NVML) or ROCm SMI
//! reports them.
//!
//! Exit 0 with the list, 2 with one line on stderr when no driver can be read.

use super::usage_error;
use crate::explain::units::format_size;
use crate::gpu_detect::{DetectedGpu, GpuProbe, LocalProbe};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::process::ExitCode;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpusFormat {
    Text,
    Json,
}

#[derive(Args)]
pub struct GpusArgs {
    #[arg(long, value_enum, default_value = "text")]
    pub format: GpusFormat,
}

pub fn run(args: &GpusArgs) -> ExitCode {
    run_with(args, &LocalProbe)
}

/// `run` with the GPUs read from `probe`.
pub fn run_with(args: &GpusArgs, probe: &dyn GpuProbe) -> ExitCode {
    match listing(args, probe) {
        Ok(out) => {
            super::print(&out);
            ExitCode::SUCCESS
        }
        Err(message) => usage_error(message),
    }
}

fn listing(args: &GpusArgs, probe: &dyn GpuProbe) -> Result<String, String> {
    let gpus = probe.devices().map_err(|e| e.to_string())?;
    Ok(match args.format {
        GpusFormat::Json => {
            let list: Vec<serde_json::Value> = gpus
                .iter()
                .map(|g| {
                    let mut value = serde_json::to_value(g).unwrap_or_default();
                    value["cuda_total_bytes"] = json!(g.cuda_total_bytes());
                    value
                })
                .collect();
            let mut out = serde_json::to_string_pretty(&json!({"version": 1, "gpus": list})).unwrap_or_default();
            out.push('\n');
            out
        }
        GpusFormat::Text => text(&gpus),
    })
}

fn text(gpus: &[DetectedGpu]) -> String {
    if gpus.is_empty() {
        return "No GPU found.\n".to_owned();
    }
    let mut out = String::new();
    for g in gpus {
        out.push_str(&format!(
            "GPU {}: {}  total {}  free {}  used {}  (CUDA sees {})\n",
            g.index,
            g.name,
            format_size(g.total_bytes),
            format_size(g.free_bytes),
            format_size(g.used_bytes),
            format_size(g.cuda_total_bytes())
        ));
        for p in &g.processes {
            let used = p.used_bytes.map_or("memory not reported".to_owned(), format_size);
            out.push_str(&format!("  pid {:<8} {used}\n", p.pid));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_detect::tests::{h100, FakeProbe};
    use crate::gpu_detect::{GpuProcess, ProbeError};

    #[test]
    fn lists_devices_and_processes() {
        let probe = FakeProbe(Ok(vec![h100(0, 1 << 30, vec![GpuProcess { pid: 31, used_bytes: Some(1 << 30) }])]));
        let out = listing(&GpusArgs { format: GpusFormat::Text }, &probe).unwrap();
        assert!(out.starts_with("GPU 0: NVIDIA H100 80GB HBM3  total 75.96 GiB"), "{out}");
        assert!(out.contains("  pid 31       1024.00 MiB\n"), "{out}");
        let json: serde_json::Value =
            serde_json::from_str(&listing(&GpusArgs { format: GpusFormat::Json }, &probe).unwrap()).unwrap();
        assert_eq!(json["gpus"][0]["processes"][0]["pid"], 31);
        assert_eq!(json["gpus"][0]["cuda_total_bytes"], 81_559_000_000u64 - 536_870_912);
    }

    #[test]
    fn no_driver_is_one_line() {
        let probe = FakeProbe(Err(ProbeError::NoDriver("libnvidia-ml.so.1: cannot open shared object file".into())));
        let err = listing(&GpusArgs { format: GpusFormat::Text }, &probe).unwrap_err();
        assert!(err.starts_with("no GPU driver found (libnvidia-ml.so.1: cannot open shared object file); oomlint reads NVIDIA GPUs through NVML and AMD GPUs"), "{err}");
        assert_eq!(text(&[]), "No GPU found.\n");
    }
}
