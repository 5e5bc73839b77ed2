//! ## What it does
//! Reports a verl FSDP actor with Ulysses sequence parallelism
//! (`actor_rollout_ref.actor.ulysses_sequence_parallel_size > 1`) that does not remove padding
//! (`actor_rollout_ref.model.use_remove_padding`), or whose model's attention heads do not
//! divide by the sequence-parallel size; and the same padding check for an FSDP critic
//! (`critic.ulysses_sequence_parallel_size > 1` without `critic.model.use_remove_padding`) when
//! the run has one (`critic.enable`, or the GAE estimator).
//!
//! ## Why
//! verl refuses to start: `ValueError: When using sequence parallelism for actor/ref policy, you
//! must enable `use_remove_padding`.`; the patched attention asserts "num_attention_heads 28
//! must be divisible by ulysses_sp_size 8" when the model is built. For the critic,
//! `FSDPCriticConfig.__post_init__` raises "When using sequence parallelism for critic, you must
//! enable `use_remove_padding`.".
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ulysses_sequence_parallel_size=2 \
//!     actor_rollout_ref.model.use_remove_padding=False   # error
//! ```
//!
//! ## Fix
//! Turn on `use_remove_padding`, and pick a sequence-parallel size that divides the head count.
//! No automatic fix.
//!
//! ## Source
//! verl 0.8.0.dev `verl/workers/config/actor.py` (`FSDPActorConfig.validate`),
//! `verl/workers/config/critic.py` (`FSDPCriticConfig.__post_init__`, built by `validate_config`
//! when `need_critic` holds) and
//! `verl/models/transformers/monkey_patch.py` (`validate_ulysses_config`): "num_attention_heads
//! {num_attention_heads} must be divisible by ulysses_sp_size {ulysses_sp_size}".

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    critic(v, out);
    if !matches!(v.strategy.value.as_deref(), Some("fsdp" | "fsdp2")) {
        return;
    }
    let Some(sp) = v.ulysses.value.filter(|sp| *sp > 1) else { return };
    let at = v.span(&v.ulysses);
    if v.remove_padding.value == Some(false) {
        out.report(
            at,
            "verl raises \"When using sequence parallelism for actor/ref policy, you must enable \
             `use_remove_padding`.\"",
        )
        .with_related(v.span(&v.remove_padding), "use_remove_padding");
    }
    let Some(arch) = ctx.model.and_then(|m| m.architecture()) else { return };
    if arch.n_head > 0 && arch.n_head % sp != 0 {
        out.report(
            at,
            format!("verl asserts \"num_attention_heads {} must be divisible by ulysses_sp_size {sp}\"", arch.n_head),
        );
    }
}

fn critic(v: &crate::plan::VerlSettings, out: &mut Reporter) {
    let fsdp = matches!(v.critic_strategy.value.as_deref(), Some("fsdp" | "fsdp2"));
    if !fsdp || v.need_critic.value != Some(true) || v.critic_ulysses.value.is_none_or(|sp| sp <= 1) {
        return;
    }
    if v.critic_remove_padding.value == Some(false) {
        out.report(
            v.span(&v.critic_ulysses),
            "verl raises \"When using sequence parallelism for critic, you must enable `use_remove_padding`.\"",
        )
        .with_related(v.span(&v.critic_remove_padding), "critic.model.use_remove_padding");
    }
}
