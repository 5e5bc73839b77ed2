//! ## What it does
//! Reports a verl PPO launch whose actor mini batch, normalised per rank as verl's FSDP worker
//! does, is empty or not a multiple of `ppo_micro_batch_size_per_gpu`: `ppo_mini_batch_size ×
//! rollout.n // (n_gpus // ulysses_sequence_parallel_size)` (without `use_dynamic_bsz`).
//!
//! ## Why
//! The FSDP worker asserts when it builds the actor: "ppo_mini_batch_size 0 should be larger than
//! 0 after normalization", "normalized ppo_mini_batch_size 24 should be divisible by
//! ppo_micro_batch_size_per_gpu 16" or "normalized ppo_mini_batch_size 8 should be larger than
//! ppo_micro_batch_size_per_gpu 16". The run dies after the models are loaded, minutes in.
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_mini_batch_size=24 \
//!     actor_rollout_ref.rollout.n=1 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
//!     trainer.n_gpus_per_node=8   # error: 24 // 8 = 3 per rank, not a multiple of 2
//! ```
//!
//! ## Fix
//! Pick `ppo_micro_batch_size_per_gpu` dividing the per-rank mini batch, or a mini batch that
//! gives a multiple of it. No automatic fix.
//!
//! ## Source
//! verl 0.8.0.dev `verl/workers/fsdp_workers.py` (`ActorRolloutRefWorker.__init__`, "normalize
//! config"), run for `fsdp`/`fsdp2` actors when `trainer.use_legacy_worker_impl` is `auto` or
//! `enable` (`verl/trainer/main_ppo.py`); the engine workers (`disable`) normalise elsewhere, so
//! the rule says nothing there.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    let legacy = matches!(v.legacy_workers.value.as_deref(), Some("auto" | "enable"));
    let fsdp = matches!(v.strategy.value.as_deref(), Some("fsdp" | "fsdp2"));
    if !legacy || !fsdp || v.dynamic_bsz.value != Some(false) {
        return;
    }
    let (Some(n_gpus), Some(mini), Some(n), Some(sp)) =
        (v.n_gpus.value, v.mini_batch.value, v.rollout_n.value, v.ulysses.value)
    else {
        return;
    };
    let dp = n_gpus / sp.max(1);
    if dp == 0 {
        return;
    }
    let normalized = mini * n / dp;
    let at = v.span(&v.mini_batch);
    if normalized == 0 {
        out.report(
            at,
            format!(
                "verl asserts \"ppo_mini_batch_size 0 should be larger than 0 after normalization\" \
                 ({mini} × rollout.n {n} // {dp} data-parallel ranks)"
            ),
        );
        return;
    }
    let micro = match (v.micro_batch.value, v.micro_per_gpu.value) {
        (Some(global), _) => global / dp,
        (None, Some(per_gpu)) => per_gpu,
        (None, None) => return,
    };
    if micro == 0 {
        return;
    }
    let message = if normalized % micro != 0 {
        format!("should be divisible by ppo_micro_batch_size_per_gpu {micro}")
    } else if normalized / micro == 0 {
        format!("should be larger than ppo_micro_batch_size_per_gpu {micro}")
    } else {
        return;
    };
    out.report(
        at,
        format!(
            "verl asserts \"normalized ppo_mini_batch_size {normalized} {message}\" \
             ({mini} × rollout.n {n} // {dp} data-parallel ranks)"
        ),
    )
    .with_related(v.span(&v.micro_per_gpu), "the micro batch per GPU");
}
