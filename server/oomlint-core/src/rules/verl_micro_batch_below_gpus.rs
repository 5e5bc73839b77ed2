//! ## What it does
//! Reports a verl PPO launch whose deprecated global micro batch, times the Ulysses
//! sequence-parallel size, is smaller than the GPU count `trainer.n_gpus_per_node ×
//! trainer.nnodes`: the actor's `ppo_micro_batch_size` (its per-GPU key unset, without
//! `use_dynamic_bsz`), and, when the run has a critic (`critic.enable`, or the GAE estimator)
//! trained with FSDP without `critic.use_dynamic_bsz`, the critic's `ppo_micro_batch_size`.
//!
//! ## Why
//! The global micro batch is split over the data-parallel ranks (`n_gpus ÷ ulysses size`); fewer
//! samples than ranks would leave a rank with no micro batch. verl refuses to start:
//! `ValueError: ppo_micro_batch_size (4) * ulysses_sequence_parallel_size (1) must be >= n_gpus
//! (8)`, or for the critic "critic.ppo_micro_batch_size (4) * ulysses_sequence_parallel_size (1)
//! must be >= n_gpus (8)". The actor's check runs for every strategy (a Megatron actor has no
//! Ulysses size: 1); the critic's only for `fsdp`/`fsdp2`, with the critic's own top-level
//! `ulysses_sequence_parallel_size`. The critic's per-GPU key defaults to its global one, so the
//! critic's check is reached only with `critic.ppo_micro_batch_size_per_gpu=null` (otherwise
//! `verl-micro-batch-keys` reports both set).
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8 trainer.nnodes=1 \
//!     actor_rollout_ref.actor.ppo_micro_batch_size=4   # error: 4 samples for 8 GPUs
//! ```
//!
//! ## Fix
//! Set `ppo_micro_batch_size_per_gpu` instead of the deprecated global key, or a global micro
//! batch of at least the GPU count ÷ the Ulysses size. No automatic fix: the micro batch sets
//! the activation memory of each step.
//!
//! ## Source
//! verl 0.8.0.dev `verl/workers/config/actor.py` (`ActorConfig.validate`) and
//! `verl/workers/config/critic.py` (`FSDPCriticConfig.validate`), both called from
//! `verl/utils/config.py` `validate_config`:
//! "ppo_micro_batch_size ({self.ppo_micro_batch_size}) * ulysses_sequence_parallel_size
//! ({sp_size}) must be >= n_gpus ({n_gpus})" and "critic.ppo_micro_batch_size
//! ({self.ppo_micro_batch_size}) * ulysses_sequence_parallel_size ({sp_size}) must be >= n_gpus
//! ({n_gpus})".

use super::support;
use super::{Context, Reporter};
use crate::plan::{Sourced, VerlSettings};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    let Some(n_gpus) = v.n_gpus.known_value() else { return };
    if v.dynamic_bsz.value == Some(false) {
        // `ActorConfig.validate` reads `getattr(self, "ulysses_sequence_parallel_size", 1)`: only
        // the FSDP actor's config has the field.
        let sp = match v.strategy.value.as_deref() {
            Some("fsdp" | "fsdp2") => v.ulysses.known_value(),
            Some(_) if !v.strategy.is_unknown() => Some(1),
            _ => None,
        };
        report(v, out, "", (&v.micro_batch, &v.micro_per_gpu), sp, &v.ulysses, n_gpus);
    }
    let fsdp_critic = matches!(v.critic_strategy.value.as_deref(), Some("fsdp" | "fsdp2"));
    if v.need_critic.value == Some(true) && v.critic_dynamic_bsz.value == Some(false) && fsdp_critic {
        let (global, per_gpu) = &v.critic_micro_keys;
        let sp = v.critic_ulysses.known_value();
        report(v, out, "critic.", (global, per_gpu), sp, &v.critic_ulysses, n_gpus);
    }
}

fn report(
    v: &VerlSettings,
    out: &mut Reporter,
    prefix: &str,
    (global, per_gpu): (&Sourced<Option<u64>>, &Sourced<Option<u64>>),
    sp: Option<u64>,
    sp_key: &Sourced<Option<u64>>,
    n_gpus: u64,
) {
    if global.is_unknown() || per_gpu.is_unknown() {
        return;
    }
    // With both keys set verl stops earlier, at the mutual-exclusion check.
    let (Some(micro), None, Some(sp)) = (global.value, per_gpu.value, sp) else { return };
    if micro.saturating_mul(sp) >= n_gpus {
        return;
    }
    let finding = out.report(
        v.span(global),
        format!(
            "verl raises \"{prefix}ppo_micro_batch_size ({micro}) * ulysses_sequence_parallel_size ({sp}) must be >= \
             n_gpus ({n_gpus})\""
        ),
    );
    finding.with_related(v.span(&v.n_gpus), "the GPU count (n_gpus_per_node × nnodes)");
    if sp > 1 {
        finding.with_related(v.span(sp_key), "the Ulysses sequence-parallel size");
    }
}
