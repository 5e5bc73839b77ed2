//! ## What it does
//! Reports a verl PPO launch that samples its validation generations
//! (`actor_rollout_ref.rollout.val_kwargs.do_sample=True`) while the rollout's `temperature` is
//! 0 or below.
//!
//! ## Why
//! `validate_config` asserts it before any worker starts: `AssertionError: validation gen
//! temperature should be greater than 0 when enabling do_sample`. It reads the rollout's
//! training `temperature`, not `val_kwargs.temperature`: a greedy training rollout
//! (`temperature=0`) with sampled validation is refused.
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo \
//!     actor_rollout_ref.rollout.temperature=0 \
//!     actor_rollout_ref.rollout.val_kwargs.do_sample=True   # error
//! ```
//!
//! ## Fix
//! Raise `actor_rollout_ref.rollout.temperature` above 0, or validate greedily
//! (`val_kwargs.do_sample=False`). No automatic fix: which one was meant is the user's choice.
//!
//! ## Source
//! verl `verl/utils/config.py` `validate_config` ("check eval config"), at b178a3cd:
//! `assert config.actor_rollout_ref.rollout.temperature > 0, "validation gen temperature should
//! be greater than 0 when enabling do_sample"`.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    if v.val_do_sample.is_unknown() || v.rollout_temperature.is_unknown() || v.val_do_sample.value != Some(true) {
        return;
    }
    let Some(temperature) = v.rollout_temperature.value.filter(|t| *t <= 0.0) else { return };
    out.report(
        v.span(&v.rollout_temperature),
        format!(
            "verl asserts \"validation gen temperature should be greater than 0 when enabling do_sample\": \
             actor_rollout_ref.rollout.temperature is {temperature} and val_kwargs.do_sample is True"
        ),
    )
    .with_related(v.span(&v.val_do_sample), "val_kwargs.do_sample");
}
