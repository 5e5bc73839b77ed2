//! ## What it does
//! Reports an accelerate config (or an `accelerate launch` command: its config file under its
//! `--parallelism_config_*` and `--num_processes` flags) whose `parallelism_config` sizes (`parallelism_config_dp_replicate_size`
//! × `…_dp_shard_size` × `…_tp_size` × `…_cp_size`, × `…_sp_size` from accelerate 1.12) multiply
//! to something other than `num_processes`. A size the block leaves out is 1.
//!
//! ## Why
//! `accelerate launch` passes the block to every process as `PARALLELISM_CONFIG_*` variables, and
//! `Accelerator` checks the product against the world size before anything loads: `ValueError:
//! ParallelismConfig total_size (2) does not match num_processes (8). Please adjust
//! dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size.` A product of 1 is taken for plain
//! data parallelism (`dp_replicate_size` becomes the process count), and DeepSpeed's sequence
//! parallelism (`sp_size > 1` with the `deepspeed` backend) skips the check. The common case is
//! a tensor-parallel size alone: the remaining processes are not given to `dp_shard_size`.
//!
//! ## Example
//! ```yaml
//! distributed_type: FSDP
//! fsdp_config:
//!   fsdp_version: 2
//! num_processes: 8
//! parallelism_config:            # error: 2 ≠ 8 processes
//!   parallelism_config_tp_size: 2
//! ```
//!
//! ## Fix
//! Make the sizes multiply to `num_processes`, usually by setting `parallelism_config_dp_shard_size`
//! to `num_processes / (tp × cp)` (here 4). No automatic fix: which dimension grows is the user's
//! choice.
//!
//! ## Source
//! accelerate `src/accelerate/parallelism_config.py` (`ParallelismConfig._validate_accelerator`,
//! called from `Accelerator.__init__`): "ParallelismConfig total_size ({total_size}) does not match
//! num_processes ({num_processes}). Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size."
//! (1.10 and 1.11 end with `cp_size.` and have no `sp_size`); `src/accelerate/utils/launch.py`
//! (`prepare_multi_gpu_env`, and from 1.12 `prepare_deepspeed_cmd_env`: the block reaches MULTI_GPU
//! and FSDP launches, and DeepSpeed ones from 1.12).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let launched = || ctx.plan?.launch.as_ref()?.accelerate.as_ref();
    let Some(a) = support::accelerate(ctx).or_else(launched) else { return };
    let Some(sizes) = a.parallelism.as_ref() else { return };
    // `parallelism_config` is read from accelerate 1.10 on; `sp_size` and DeepSpeed launches from 1.12.
    if !support::at_least(ctx, "accelerate", "1.10") {
        return;
    }
    let with_sp = support::at_least(ctx, "accelerate", "1.12");
    let kind = a.distributed_type.as_ref().and_then(|d| d.value.as_deref()).map(str::to_ascii_uppercase);
    let launched = match kind.as_deref() {
        Some("FSDP") => true,
        Some("DEEPSPEED") => with_sp,
        Some(k) => k.starts_with("MULTI_"),
        None => false,
    };
    if !launched {
        return;
    }
    let mut counted = vec![&sizes.dp_replicate, &sizes.dp_shard, &sizes.tp, &sizes.cp];
    if with_sp {
        counted.push(&sizes.sp);
    }
    // A size below 1 raises its own error in `ParallelismConfig.__post_init__`.
    if counted.iter().any(|s| s.value < 1) {
        return;
    }
    if with_sp && sizes.sp.value > 1 && sizes.sp_backend.value == "deepspeed" {
        return;
    }
    let total = counted.iter().fold(1i64, |acc, s| acc.saturating_mul(s.value));
    let Some(processes) = a.num_processes.value.filter(|n| *n > 0) else { return };
    if total == 1 || total == processes {
        return;
    }
    let names = if with_sp { "cp_size/sp_size" } else { "cp_size" };
    let written: Vec<String> = [
        ("dp_replicate_size", &sizes.dp_replicate),
        ("dp_shard_size", &sizes.dp_shard),
        ("tp_size", &sizes.tp),
        ("cp_size", &sizes.cp),
        ("sp_size", &sizes.sp),
    ]
    .iter()
    .filter(|(_, s)| s.is_from_file())
    .map(|(name, s)| format!("{name} {}", s.value))
    .collect();
    let mut message = format!(
        "the parallelism sizes ({}) multiply to {total}, not the {processes} processes: accelerate raises \
         \"ParallelismConfig total_size ({total}) does not match num_processes ({processes}). Please adjust \
         dp_replicate_size/ dp_shard_size/tp_size/{names}.\"",
        written.join(", ")
    );
    let rest = sizes.tp.value.saturating_mul(sizes.cp.value).saturating_mul(sizes.dp_replicate.value);
    if !sizes.dp_shard.is_from_file() && rest > 0 && processes % rest == 0 {
        message.push_str(&format!(
            "; parallelism_config_dp_shard_size: {} would give FSDP the other processes",
            processes / rest
        ));
    }
    // In a launch script the block may sit in the config file the launch names.
    let Some(at) = ctx.plan.map_or(Some(sizes.key), |p| p.place_span(sizes.key)) else { return };
    if let Some(file) = sizes.key.as_linked().and_then(|(i, _)| ctx.plan?.linked_files.get(i)) {
        message.push_str(&format!(" (the parallelism_config block of `{}`)", file.path));
    }
    let diagnostic = out.report(at, message);
    if let Some((span, set_in)) = ctx.plan.and_then(|p| p.place(&a.num_processes)).filter(|(s, _)| *s != at) {
        diagnostic.with_related(span, format!("num_processes set here{set_in}"));
    }
}
