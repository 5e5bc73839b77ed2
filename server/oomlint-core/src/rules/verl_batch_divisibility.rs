//! ## What it does
//! Reports a verl PPO launch whose responses per step, `data.train_batch_size ×
//! actor_rollout_ref.rollout.n`, do not divide evenly over the data-parallel ranks: the GPU
//! count `trainer.n_gpus_per_node × trainer.nnodes` under FSDP, and under Megatron the
//! data-parallel size times `ppo_micro_batch_size_per_gpu` (without `use_dynamic_bsz`). Under
//! Megatron the GPU count must also divide by `TP × PP × CP`.
//!
//! ## Why
//! verl refuses to start: `AssertionError: real_train_batch_size (1000) must be divisible by
//! minimal possible batch size (16)`, or "n_gpus (12) must be divisible by model_parallel_size
//! (8) times context_parallel_size (1)".
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo data.train_batch_size=100 actor_rollout_ref.rollout.n=5 \
//!     trainer.n_gpus_per_node=8 trainer.nnodes=1   # error: 500 responses over 8 GPUs
//! ```
//!
//! ## Fix
//! Make `train_batch_size × n` a multiple of the minimal batch (or change the GPU count). No
//! automatic fix: the batch is the user's choice.
//!
//! ## Source
//! verl 0.8.0.dev `verl/utils/config.py` (`validate_config`): "real_train_batch_size
//! ({real_train_batch_size}) must be divisible by minimal possible batch size ({minimal_bsz})";
//! releases up to 0.5 asserted it in `verl/trainer/ppo/ray_trainer.py`
//! (`RayPPOTrainer._validate_config`).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    if v.dynamic_bsz.value != Some(false) {
        return;
    }
    let (Some(n_gpus), Some(train), Some(n)) = (v.n_gpus.value, v.train_batch_size.value, v.rollout_n.value) else {
        return;
    };
    let minimal = if v.strategy.value.as_deref() == Some("megatron") {
        let [Some(tp), Some(pp), Some(cp), _] = &v.megatron_sizes else { return };
        let model_parallel = tp.value * pp.value;
        let divisor = model_parallel * cp.value;
        if divisor == 0 {
            return;
        }
        if n_gpus % divisor != 0 {
            out.report(
                v.span(&v.n_gpus),
                format!(
                    "verl asserts \"n_gpus ({n_gpus}) must be divisible by model_parallel_size ({model_parallel}) times \
                     context_parallel_size ({})\"",
                    cp.value
                ),
            );
            return;
        }
        let Some(micro) = v.micro_per_gpu.value else { return };
        n_gpus / divisor * micro
    } else {
        n_gpus
    };
    let real = train * n;
    if minimal == 0 || real % minimal == 0 {
        return;
    }
    out.report(
        v.span(&v.train_batch_size),
        format!(
            "verl asserts \"real_train_batch_size ({real}) must be divisible by minimal possible batch size ({minimal})\" \
             (train_batch_size {train} × rollout.n {n})"
        ),
    )
    .with_related(v.span(&v.n_gpus), "the GPU count (n_gpus_per_node × nnodes)");
}
