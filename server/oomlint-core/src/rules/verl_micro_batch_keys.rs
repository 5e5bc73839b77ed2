//! ## What it does
//! Reports a verl PPO launch that sets both the deprecated global micro batch and its
//! per-GPU replacement, or neither, for the actor (`ppo_micro_batch_size` /
//! `ppo_micro_batch_size_per_gpu`), the reference and the rollout
//! (`log_prob_micro_batch_size` / `log_prob_micro_batch_size_per_gpu`), when
//! `actor.use_dynamic_bsz` is off; and the same for the critic (`critic.ppo_micro_batch_size` /
//! `critic.ppo_micro_batch_size_per_gpu`) when the run has one (`critic.enable`, or the GAE
//! estimator, verl's default) and `critic.use_dynamic_bsz` is off; and a global micro batch
//! (actor's or critic's) that does not divide its `ppo_mini_batch_size`; and the reward model's
//! (`reward_model.micro_batch_size` / `micro_batch_size_per_gpu`) when it is enabled without
//! `use_dynamic_bsz` and without the reward loop (`use_reward_loop`, on by default).
//!
//! ## Why
//! verl refuses to start: `ActorConfig.__post_init__` raises `ValueError: [actor] You have
//! set both 'actor.ppo_micro_batch_size' AND 'actor.ppo_micro_batch_size_per_gpu'. Please
//! remove 'actor.ppo_micro_batch_size' because only '*_ppo_micro_batch_size_per_gpu' is
//! supported (the former is deprecated).` or asserts "[actor] Please set at least one of
//! 'actor.ppo_micro_batch_size' or 'actor.ppo_micro_batch_size_per_gpu' if use_dynamic_bsz is
//! not enabled."; `validate_config`'s `check_mutually_exclusive` raises the same for
//! `actor_rollout_ref.ref` (when a reference policy is needed: `use_kl_loss` or
//! `use_kl_in_reward`) and `actor_rollout_ref.rollout` ("[actor_rollout_ref.rollout] Please set
//! at least one of …") and `reward_model` ("[reward_model] Please set at least one of
//! 'reward_model.micro_batch_size' or 'reward_model.micro_batch_size_per_gpu'."). With only the actor's global key set, `ActorConfig.validate` raises
//! "ppo_mini_batch_size (64) must be divisible by ppo_micro_batch_size (48)" when it does not
//! divide the mini batch as written (no section prefix in the message).
//!
//! For the critic, `CriticConfig.__post_init__` raises "[critic] Please set at least one of
//! 'critic.micro_batch_size' or 'critic.micro_batch_size_per_gpu'." (verl's message names the
//! keys without their `ppo_` prefix), "[critic] You have set both 'critic.micro_batch_size' AND
//! 'critic.micro_batch_size_per_gpu'. …" or "[critic] ppo_mini_batch_size (64) must be divisible
//! by ppo_micro_batch_size (48)". The critic's per-GPU key defaults to
//! `${oc.select:.ppo_micro_batch_size,null}`, so setting the deprecated global key alone sets
//! both: only the per-GPU key (or the global one with the per-GPU key set to `null`) passes. A
//! PPO launch that keeps the GAE default and sets no critic micro batch fails the first.
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo \
//!     actor_rollout_ref.actor.ppo_micro_batch_size=64 \
//!     actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8   # error: both set
//! python3 -m verl.trainer.main_ppo algorithm.adv_estimator=gae \
//!     actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8   # error: no critic micro batch
//! ```
//!
//! ## Fix
//! Keep only the `*_per_gpu` key (or turn on `use_dynamic_bsz`). No automatic fix: which
//! value was meant is the user's choice.
//!
//! ## Source
//! verl 0.8.0.dev `verl/workers/config/actor.py` (`ActorConfig.__post_init__`, `validate`),
//! `verl/workers/config/critic.py` (`CriticConfig.__post_init__`, `_check_mutually_exclusive`;
//! the config is built by `validate_config` when `need_critic` in `verl/trainer/ppo/utils.py`
//! holds) and `verl/utils/config.py` (`validate_config`, `check_mutually_exclusive`). Older
//! releases ran the same checks in `verl/trainer/ppo/ray_trainer.py`
//! (`RayPPOTrainer._validate_config`).

use super::support;
use super::{Context, Reporter};
use crate::plan::{Sourced, VerlSettings};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    if v.need_critic.value == Some(true) && v.critic_dynamic_bsz.value == Some(false) {
        critic(v, out);
    }
    if v.reward_micro_checked.value == Some(true) {
        let (global, per_gpu) = &v.reward_micro_keys;
        report(v, out, "reward_model", "micro_batch_size", global, per_gpu);
    }
    if v.dynamic_bsz.value != Some(false) {
        return;
    }
    let (param, section) = ("ppo_micro_batch_size", "actor");
    report(v, out, section, param, &v.micro_batch, &v.micro_per_gpu);
    actor_divisibility(v, out);
    let [reference, rollout] = &v.log_prob_keys;
    if v.need_reference.value == Some(true) {
        report(v, out, "actor_rollout_ref.ref", "log_prob_micro_batch_size", &reference.0, &reference.1);
    }
    report(v, out, "actor_rollout_ref.rollout", "log_prob_micro_batch_size", &rollout.0, &rollout.1);
}

fn report(
    v: &VerlSettings,
    out: &mut Reporter,
    section: &str,
    param: &str,
    global: &Sourced<Option<u64>>,
    per_gpu: &Sourced<Option<u64>>,
) {
    if global.is_unknown() || per_gpu.is_unknown() {
        return;
    }
    match (global.value, per_gpu.value) {
        (Some(_), Some(_)) => {
            out.report(
                v.span(global),
                format!(
                    "verl raises \"[{section}] You have set both '{section}.{param}' AND '{section}.{param}_per_gpu'\": \
                     remove the deprecated '{section}.{param}'"
                ),
            )
            .with_related(v.span(per_gpu), format!("{param}_per_gpu is set here"));
        }
        (None, None) => {
            out.report(
                v.command,
                format!(
                    "verl raises \"[{section}] Please set at least one of '{section}.{param}' or \
                     '{section}.{param}_per_gpu'\" when use_dynamic_bsz is off"
                ),
            );
        }
        _ => {}
    }
}

/// `ActorConfig.validate`: a global micro batch (the per-GPU key unset) must divide the actor's
/// `ppo_mini_batch_size` as written (before the workers normalise either).
fn actor_divisibility(v: &VerlSettings, out: &mut Reporter) {
    if v.micro_batch.is_unknown() || v.micro_per_gpu.is_unknown() || v.mini_batch.is_unknown() {
        return;
    }
    let (Some(micro), None, Some(mini)) = (v.micro_batch.value, v.micro_per_gpu.value, v.mini_batch.value) else {
        return;
    };
    if micro == 0 || mini % micro == 0 {
        return;
    }
    out.report(
        v.span(&v.micro_batch),
        format!("verl raises \"ppo_mini_batch_size ({mini}) must be divisible by ppo_micro_batch_size ({micro})\""),
    )
    .with_related(v.span(&v.mini_batch), "the actor's ppo_mini_batch_size");
}

/// The critic's checks, in `CriticConfig.__post_init__`'s order; its messages name the keys
/// `critic.micro_batch_size` and `critic.micro_batch_size_per_gpu`.
fn critic(v: &VerlSettings, out: &mut Reporter) {
    let (global, per_gpu) = &v.critic_micro_keys;
    if global.is_unknown() || per_gpu.is_unknown() {
        return;
    }
    match (global.value, per_gpu.value) {
        (Some(_), Some(_)) if v.span(per_gpu) == v.span(global) => {
            out.report(
                v.span(global),
                "verl raises \"[critic] You have set both 'critic.micro_batch_size' AND \
                 'critic.micro_batch_size_per_gpu'\": critic.ppo_micro_batch_size_per_gpu defaults to \
                 ${oc.select:.ppo_micro_batch_size,null}, so the deprecated critic.ppo_micro_batch_size sets both; \
                 set critic.ppo_micro_batch_size_per_gpu instead",
            );
        }
        (Some(_), Some(_)) => {
            out.report(
                v.span(global),
                "verl raises \"[critic] You have set both 'critic.micro_batch_size' AND \
                 'critic.micro_batch_size_per_gpu'\": remove the deprecated critic.ppo_micro_batch_size",
            )
            .with_related(v.span(per_gpu), "ppo_micro_batch_size_per_gpu is set here");
        }
        (None, None) => {
            out.report(
                v.command,
                "verl raises \"[critic] Please set at least one of 'critic.micro_batch_size' or \
                 'critic.micro_batch_size_per_gpu'\": the run has a critic (GAE, verl's default estimator, or \
                 critic.enable) and critic.use_dynamic_bsz is off; set critic.ppo_micro_batch_size_per_gpu",
            );
        }
        (Some(micro), None) => {
            let Some(mini) = v.critic_mini_batch.known_value() else { return };
            if micro == 0 || mini % micro == 0 {
                return;
            }
            out.report(
                v.span(global),
                format!(
                    "verl raises \"[critic] ppo_mini_batch_size ({mini}) must be divisible by ppo_micro_batch_size \
                     ({micro})\""
                ),
            )
            .with_related(v.span(&v.critic_mini_batch), "the critic's ppo_mini_batch_size (the actor's unless set)");
        }
        (None, Some(_)) => {}
    }
}
