//! `accelerate launch`'s flags that stand for keys of its config file.

use super::{insert, merge};
use crate::syntax::shell::Word;
use crate::syntax::Mapping;

/// The flags of `accelerate launch` that set what its config file would, as the keys of that
/// file (`commands/launch.py` `_validate_launch_command` copies a config key into the flag of
/// the same name only when the flag is not given, so the flags win).
#[derive(Default, Clone)]
pub(super) struct AccelerateFlags {
    /// `distributed_type`, `fsdp_config.*`, `deepspeed_config.*` and
    /// `parallelism_config.*`, at the flags' words.
    keys: Mapping,
    /// `--multi_gpu`, `--use_fsdp` or `--use_deepspeed`: the config's `distributed_type` and
    /// its `parallelism_config` are then not read.
    mode: bool,
    /// `--use_parallelism_config`.
    parallelism: bool,
}

impl AccelerateFlags {
    pub(super) fn read(&mut self, flag: &str, value: Option<&Word>, option: &Word) {
        let switch = |text: &str| Word { text: Some(text.to_string()), span: option.span };
        let (key, value) = match flag {
            "multi_gpu" => ("distributed_type".to_string(), switch("MULTI_GPU")),
            "use_fsdp" => ("distributed_type".to_string(), switch("FSDP")),
            "use_deepspeed" => ("distributed_type".to_string(), switch("DEEPSPEED")),
            "use_parallelism_config" => {
                self.parallelism = true;
                return;
            }
            f if f.starts_with("fsdp_") => (format!("fsdp_config.{f}"), value.cloned().unwrap_or(switch("true"))),
            f if f.starts_with("parallelism_config_") => {
                (format!("parallelism_config.{f}"), value.cloned().unwrap_or(switch("true")))
            }
            "num_processes" => (flag.to_string(), value.cloned().unwrap_or(switch("true"))),
            "zero_stage" | "offload_optimizer_device" | "offload_param_device" | "deepspeed_config_file" => {
                (format!("deepspeed_config.{flag}"), value.cloned().unwrap_or(switch("true")))
            }
            _ => return,
        };
        self.mode |= key == "distributed_type";
        insert(&mut self.keys, &key, option.span, value);
    }

    /// The accelerate config the launch runs with: these flags over `file`'s keys. The
    /// `parallelism_config` reaches the processes when `--use_parallelism_config` is given,
    /// or from a config file's non-empty block when no mode flag is (`_validate_launch_command`
    /// then sets `use_parallelism_config` from it).
    pub(super) fn over(&self, file: Option<Mapping>) -> Option<Mapping> {
        if file.is_none() && self.keys.entries.is_empty() {
            return None;
        }
        let from_file = file.is_some() && !self.mode;
        let mut config = file.unwrap_or_default();
        merge(&mut config, self.keys.clone());
        if !self.parallelism && !from_file {
            config.entries.retain(|e| e.key != "parallelism_config");
        }
        Some(config)
    }
}
