//! ## What it does
//! Reports a verl PPO launch whose `data.train_batch_size` is smaller than the actor's
//! `ppo_mini_batch_size` (without `use_dynamic_bsz`), or, when the run has a critic
//! (`critic.enable`, or the GAE estimator) without `critic.use_dynamic_bsz`, than the critic's
//! `ppo_mini_batch_size`.
//!
//! ## Why
//! A mini batch is a slice of the prompts of one step; verl refuses to start:
//! `ValueError: train_batch_size (64) must be >= actor.ppo_mini_batch_size (256)`. The actor's
//! default `ppo_mini_batch_size` is 256, so a small `train_batch_size` alone triggers it. The
//! critic's mini batch defaults to the actor's; set apart, `CriticConfig.validate` raises
//! `ValueError: train_batch_size (64) must be >= critic.ppo_mini_batch_size (128)`. Reported
//! for the critic only when the actor's check passes: verl stops at the actor's.
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo data.train_batch_size=64 \
//!     actor_rollout_ref.actor.ppo_mini_batch_size=128   # error
//! ```
//!
//! ## Fix
//! Lower `ppo_mini_batch_size` to at most `train_batch_size`, or raise `train_batch_size`.
//! No automatic fix: both change the optimisation.
//!
//! ## Source
//! verl 0.8.0.dev `verl/workers/config/actor.py` (`ActorConfig.validate`, called from
//! `verl/utils/config.py` `validate_config`): "train_batch_size ({train_batch_size}) must be >=
//! actor.ppo_mini_batch_size ({self.ppo_mini_batch_size})"; `verl/workers/config/critic.py`
//! (`CriticConfig.validate`, called from `validate_config` when `need_critic` holds):
//! "train_batch_size ({train_batch_size}) must be >= critic.ppo_mini_batch_size
//! ({self.ppo_mini_batch_size})".

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    let Some(train) = v.train_batch_size.value else { return };
    if v.dynamic_bsz.value == Some(false) {
        if let Some(mini) = v.mini_batch.value.filter(|&mini| train < mini) {
            out.report(
                v.span(&v.train_batch_size),
                format!("verl raises \"train_batch_size ({train}) must be >= actor.ppo_mini_batch_size ({mini})\""),
            )
            .with_related(v.span(&v.mini_batch), "ppo_mini_batch_size");
            return;
        }
    }
    if v.need_critic.value != Some(true) || v.critic_dynamic_bsz.value != Some(false) {
        return;
    }
    if v.critic_mini_batch.is_unknown() {
        return;
    }
    let Some(mini) = v.critic_mini_batch.value.filter(|&mini| train < mini) else { return };
    out.report(
        v.span(&v.train_batch_size),
        format!("verl raises \"train_batch_size ({train}) must be >= critic.ppo_mini_batch_size ({mini})\""),
    )
    .with_related(v.span(&v.critic_mini_batch), "the critic's ppo_mini_batch_size");
}
