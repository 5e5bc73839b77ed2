//! ## What it does
//! Reports a verl PPO launch that sets both the deprecated global micro batch and its
//! per-GPU replacement, or neither, for the actor (`ppo_micro_batch_size` /
//! `ppo_micro_batch_size_per_gpu`), the reference and the rollout
//! (`log_prob_micro_batch_size` / `log_prob_micro_batch_size_per_gpu`), when
//! `actor.use_dynamic_bsz` is off.
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
//! at least one of …").
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo \
//!     actor_rollout_ref.actor.ppo_micro_batch_size=64 \
//!     actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8   # error: both set
//! ```
//!
//! ## Fix
//! Keep only the `*_per_gpu` key (or turn on `use_dynamic_bsz`). No automatic fix: which
//! value was meant is the user's choice.
//!
//! ## Source
//! verl 0.8.0.dev `verl/workers/config/actor.py` (`ActorConfig.__post_init__`) and
//! `verl/utils/config.py` (`validate_config`, `check_mutually_exclusive`). Older releases ran
//! the same checks in `verl/trainer/ppo/ray_trainer.py` (`RayPPOTrainer._validate_config`).

use super::support;
use super::{Context, Reporter};
use crate::plan::{Sourced, VerlSettings};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    if v.dynamic_bsz.value != Some(false) {
        return;
    }
    let (param, section) = ("ppo_micro_batch_size", "actor");
    report(v, out, section, param, &v.micro_batch, &v.micro_per_gpu);
    let [reference, rollout] = &v.log_prob_keys;
    if v.need_reference.value == Some(true) {
        report(v, out, "actor_rollout_ref.ref", "log_prob_micro_batch_size", &reference.0, &reference.1);
    }
    report(v, out, "actor_rollout_ref.rollout", "log_prob_micro_batch_size", &rollout.0, &rollout.1);
}

fn unknown<T>(s: &Sourced<Option<T>>) -> bool {
    matches!(s.origin, crate::plan::Origin::Unknown { .. })
}

fn report(
    v: &VerlSettings,
    out: &mut Reporter,
    section: &str,
    param: &str,
    global: &Sourced<Option<u64>>,
    per_gpu: &Sourced<Option<u64>>,
) {
    if unknown(global) || unknown(per_gpu) {
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
