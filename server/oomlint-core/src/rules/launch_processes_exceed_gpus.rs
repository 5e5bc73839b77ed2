//! ## What it does
//! Reports a launch that starts more processes on a machine than the GPUs the same launch
//! makes visible there: `--nproc_per_node` (torchrun), `--num_processes` / `--num_machines`
//! (accelerate launch) or `--num_gpus` (deepspeed) against a `CUDA_VISIBLE_DEVICES`
//! prefix or export, accelerate's `--gpu_ids`, or SLURM's `--gres=gpu:N` /
//! `--gpus-per-node` (`#SBATCH` or `srun`). Only what the script itself says is compared,
//! never the GPUs of the machine oomlint runs on.
//!
//! ## Why
//! torchrun's elastic agent (and accelerate's `multi_gpu_launcher`, which runs it) starts
//! every rank with `LOCAL_RANK` up to `nproc_per_node - 1`; the training process then
//! binds to `cuda:LOCAL_RANK` (accelerate's `PartialState.__init__` →
//! `torch.cuda.set_device`), and a rank whose index is not below the visible device count
//! fails with `RuntimeError: CUDA error: invalid device ordinal`. With
//! `CUDA_VISIBLE_DEVICES` that is certain: an error. A SLURM request hides the other GPUs
//! only where the cluster constrains devices (`ConstrainDevices=yes`): a warning. The
//! deepspeed launcher replaces `CUDA_VISIBLE_DEVICES` with the ids it picks
//! (`runner.py`: "Detected CUDA_VISIBLE_DEVICES=… but ignoring it because one or several
//! of --include/--exclude/--num_gpus/--num_nodes cl args were used"), so only SLURM's
//! request is compared for it.
//!
//! ## Example
//! ```bash
//! CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 train.py --per_device_train_batch_size 4
//! ```
//!
//! ## Fix
//! Start as many processes as GPUs are visible, or make more visible. No automatic fix:
//! which of the two was meant is unknown.
//!
//! ## Source
//! PyTorch `torch/distributed/run.py` (`get_args_parser`, `--nproc-per-node`) and
//! `torch/distributed/elastic/agent/server/local_elastic_agent.py` (`LOCAL_RANK` per
//! worker); accelerate `src/accelerate/commands/launch.py` (`multi_gpu_launcher`,
//! `--gpu_ids` → `CUDA_VISIBLE_DEVICES` in `utils/launch.py` `prepare_multi_gpu_env`) and
//! `src/accelerate/state.py` (`PartialState.__init__`, `torch.cuda.set_device(self.device)`);
//! DeepSpeed `deepspeed/launcher/runner.py` (`main`).

use super::{Context, Reporter};
use crate::diagnostic::Severity;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(launch) = ctx.plan.and_then(|p| p.launch.as_ref()) else { return };
    let (Some(processes), Some(visible)) = (&launch.processes_per_node, &launch.visible_gpus) else { return };
    let launcher = launch.launcher.unwrap_or("the launcher");
    if launcher == "deepspeed" && visible.by_cuda_visible_devices {
        return;
    }
    let (n, gpus) = (processes.value, visible.count.value);
    if n <= gpus {
        return;
    }
    let Some(span) = ctx.plan.and_then(|p| p.place(processes)).map(|(span, _)| span) else { return };
    let by = if visible.by_cuda_visible_devices { "CUDA_VISIBLE_DEVICES" } else { "the SLURM GPU request" };
    let consequence = if visible.by_cuda_visible_devices {
        format!("ranks with LOCAL_RANK {gpus}..{} fail to bind a GPU (`torch.cuda.set_device`: \"CUDA error: invalid device ordinal\")", n - 1)
    } else {
        format!("where the cluster hides the GPUs it did not allocate, ranks with LOCAL_RANK {gpus}..{} fail with \"CUDA error: invalid device ordinal\"", n - 1)
    };
    let diagnostic = out.report(
        span,
        format!("{launcher} starts {n} processes per machine but {by} makes {gpus} GPU(s) visible: {consequence}"),
    );
    if !visible.by_cuda_visible_devices {
        diagnostic.severity = Severity::Warning;
    }
    if let Some(at) = visible.count.value_span() {
        diagnostic.with_related(at, format!("{gpus} GPU(s) visible"));
    }
}
