//! ## What it does
//! Reports a verl PPO launch whose actor mini batch, normalised per rank as verl's FSDP worker
//! does, is empty or not a multiple of `ppo_micro_batch_size_per_gpu`: `ppo_mini_batch_size ×
//! rollout.n // (n_gpus // ulysses_sequence_parallel_size)` (without `use_dynamic_bsz`); and the
//! same for the critic when the run has one (`critic.enable`, or the GAE estimator) trained by
//! the FSDP `CriticWorker`: `critic.ppo_mini_batch_size × critic.rollout_n // (n_gpus //
//! critic.ulysses_sequence_parallel_size)` against the critic's micro batch per GPU (its global
//! `ppo_micro_batch_size` divided the same way when set).
//!
//! ## Why
//! The FSDP worker asserts when it builds the actor: "ppo_mini_batch_size 0 should be larger than
//! 0 after normalization", "normalized ppo_mini_batch_size 24 should be divisible by
//! ppo_micro_batch_size_per_gpu 16" or "normalized ppo_mini_batch_size 8 should be larger than
//! ppo_micro_batch_size_per_gpu 16". The run dies after the models are loaded, minutes in.
//! `CriticWorker.__init__` asserts the last two for the critic (whatever `use_dynamic_bsz`,
//! whenever a micro batch per GPU is set); its findings name the critic.
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
//! verl 0.8.0.dev `verl/workers/fsdp_workers.py` (`ActorRolloutRefWorker.__init__` and
//! `CriticWorker.__init__`, "normalize config"), run for `fsdp`/`fsdp2` actors and critics when `trainer.use_legacy_worker_impl` is `auto` or
//! `enable` (`verl/trainer/main_ppo.py`); the engine workers (`disable`) normalise elsewhere, so
//! the rule says nothing there.

use super::support;
use super::{Context, Reporter};
use crate::plan::{Sourced, VerlSettings};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    actor(v, out);
    critic(v, out);
}

/// `CriticWorker.__init__`'s normalisation and its two asserts.
fn critic(v: &VerlSettings, out: &mut Reporter) {
    if !fsdp_workers(v, &v.critic_strategy) || v.need_critic.value != Some(true) {
        return;
    }
    let (global, per_gpu) = &v.critic_micro_keys;
    let read = [&v.n_gpus, &v.critic_mini_batch, &v.critic_rollout_n, &v.critic_ulysses, global, per_gpu];
    if read.iter().any(|s| s.is_unknown()) {
        return;
    }
    let (Some(n_gpus), Some(mini), Some(n), Some(sp)) =
        (v.n_gpus.value, v.critic_mini_batch.value, v.critic_rollout_n.value, v.critic_ulysses.value)
    else {
        return;
    };
    let Some((dp, normalized)) = normalize(n_gpus, mini, n, sp) else { return };
    let (micro, at) = match (global.value, per_gpu.value) {
        // Without `use_dynamic_bsz`, `CriticConfig.__post_init__` stops earlier where the global
        // micro batch does not divide the mini batch as written (`verl-micro-batch-keys` reports it).
        (Some(g), _) if g == 0 || (mini % g != 0 && v.critic_dynamic_bsz.value != Some(true)) => return,
        (Some(g), _) => (g / dp, global),
        (None, Some(p)) => (p, per_gpu),
        (None, None) => return,
    };
    // A zero micro batch divides by zero; `verl-micro-batch-below-gpus` reports its cause.
    let Some(message) = micro_mismatch(normalized, micro) else { return };
    out.report(
        v.span(&v.critic_mini_batch),
        format!(
            "verl asserts \"normalized ppo_mini_batch_size {normalized} {message}\" for the critic \
             ({mini} × critic.rollout_n {n} // {dp} data-parallel ranks)"
        ),
    )
    .with_related(v.span(at), "the critic's micro batch");
}

fn actor(v: &VerlSettings, out: &mut Reporter) {
    if !fsdp_workers(v, &v.strategy) || v.dynamic_bsz.value != Some(false) {
        return;
    }
    let (Some(n_gpus), Some(mini), Some(n), Some(sp)) =
        (v.n_gpus.value, v.mini_batch.value, v.rollout_n.value, v.ulysses.value)
    else {
        return;
    };
    let Some((dp, normalized)) = normalize(n_gpus, mini, n, sp) else { return };
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
        // `ActorConfig.validate` stops earlier where the global micro batch does not divide the
        // mini batch as written (`verl-micro-batch-keys` reports it).
        (Some(global), _) if global == 0 || !mini.is_multiple_of(global) => return,
        (Some(global), _) => global / dp,
        (None, Some(per_gpu)) => per_gpu,
        (None, None) => return,
    };
    let Some(message) = micro_mismatch(normalized, micro) else { return };
    out.report(
        at,
        format!(
            "verl asserts \"normalized ppo_mini_batch_size {normalized} {message}\" \
             ({mini} × rollout.n {n} // {dp} data-parallel ranks)"
        ),
    )
    .with_related(v.span(&v.micro_per_gpu), "the micro batch per GPU");
}

/// Whether `fsdp_workers.py` builds this role (its `strategy`): `fsdp`/`fsdp2` under the legacy
/// worker implementation (`use_legacy_worker_impl` `auto` or `enable`).
fn fsdp_workers(v: &VerlSettings, strategy: &Sourced<Option<String>>) -> bool {
    matches!(v.legacy_workers.value.as_deref(), Some("auto" | "enable"))
        && matches!(strategy.value.as_deref(), Some("fsdp" | "fsdp2"))
}

/// The worker's data-parallel ranks (`n_gpus // ulysses_sequence_parallel_size`) and the mini
/// batch it normalises to (`mini × n // ranks`); None without a rank.
fn normalize(n_gpus: u64, mini: u64, n: u64, sp: u64) -> Option<(u64, u64)> {
    let dp = n_gpus / sp.max(1);
    (dp > 0).then(|| (dp, mini * n / dp))
}

/// What verl's worker asserts of a normalized mini batch against the micro batch per GPU
/// (`fsdp_workers.py`: divisible by it, and at least one micro batch); None when it holds or the
/// micro batch is 0 (another rule reports that).
fn micro_mismatch(normalized: u64, micro: u64) -> Option<String> {
    if micro == 0 {
        None
    } else if !normalized.is_multiple_of(micro) {
        Some(format!("should be divisible by ppo_micro_batch_size_per_gpu {micro}"))
    } else if normalized / micro == 0 {
        Some(format!("should be larger than ppo_micro_batch_size_per_gpu {micro}"))
    } else {
        None
    }
}
