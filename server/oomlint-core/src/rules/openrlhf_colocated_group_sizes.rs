//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch that colocates two models on one placement group
//! whose GPU counts differ: the actor and the reference model (`--train.colocate_actor_ref` or
//! `--train.colocate_all`, with a KL term, `--algo.kl.init_coef` above 0), or the critic and the
//! reward model (`--train.colocate_critic_reward`, with the critic `gae` builds).
//!
//! ## Why
//! Colocated models share one bundle per GPU, so OpenRLHF asserts that their `num_nodes` and
//! `num_gpus_per_node` match before it creates the group, and stops with `AssertionError:
//! num_nodes and num_gpus_per_node must be the same when colocate actor and ref model.` (or
//! `… critic and reward model.`). Every group defaults to 8 GPUs on 1 node, so the error comes
//! from changing one side only.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --train.colocate_actor_ref \
//!     --actor.num_gpus_per_node 4   # error: the reference keeps 8
//! ```
//!
//! ## Fix
//! Give both models the same nodes and GPUs per node (`--ref.num_gpus_per_node 4`). No
//! automatic fix: which count is meant is the user's choice.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` `train`: `if args.train.colocate_actor_ref
//! or args.train.colocate_all: if args.algo.kl.init_coef > 0: assert args.actor.num_nodes ==
//! args.ref.num_nodes and args.actor.num_gpus_per_node == args.ref.num_gpus_per_node, …`, and
//! `if args.critic.model_name_or_path and args.train.colocate_critic_reward: assert …` (the
//! critic is set by `__main__` exactly when the estimator is `gae`); v0.8.0 the same with the
//! underscore flags. Both run before any model loads, but after `ray.init`, so they are not
//! compared on CPU.

use super::support;
use super::{Context, Reporter};
use crate::plan::OpenrlhfFlag;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    let on = |f: &OpenrlhfFlag<bool>| f.value.value == Some(true);
    let colocated = on(&s.colocate_actor_ref) || on(&s.colocate_all);
    if colocated && s.init_kl.value.value.is_some_and(|k| k > 0.0) {
        pair(s, out, "actor and ref model", (&s.actor_nodes, &s.actor_gpus), (&s.ref_nodes, &s.ref_gpus));
    }
    if on(&s.colocate_critic_reward) && s.estimator.value.value.as_deref() == Some("gae") {
        let critic = (&s.critic_nodes, &s.critic_gpus);
        pair(s, out, "critic and reward model", critic, (&s.reward_nodes, &s.reward_gpus));
    }
}

type Group<'s> = (&'s OpenrlhfFlag<u64>, &'s OpenrlhfFlag<u64>);

/// Reports the second group's differing count, with the first group's beside it.
fn pair(s: &crate::plan::OpenrlhfSettings, out: &mut Reporter, what: &str, first: Group, second: Group) {
    let known = |f: &OpenrlhfFlag<u64>| f.value.value;
    let (Some(n1), Some(g1), Some(n2), Some(g2)) = (known(first.0), known(first.1), known(second.0), known(second.1))
    else {
        return;
    };
    if (n1, g1) == (n2, g2) {
        return;
    }
    // The flag the script wrote goes first; a default on the other side is named in the message.
    let (mut at, mut other) = if n1 != n2 { (second.0, first.0) } else { (second.1, first.1) };
    if at.value.entry_span().is_none() && other.value.entry_span().is_some() {
        std::mem::swap(&mut at, &mut other);
    }
    let group = |f: &OpenrlhfFlag<u64>| f.flag.split(['.', '_']).next().unwrap_or_default().to_string();
    let message = format!(
        "OpenRLHF asserts \"num_nodes and num_gpus_per_node must be the same when colocate {what}.\" ({}: {n1} × \
         {g1} GPUs, {}: {n2} × {g2}){}{}",
        group(first.0),
        group(second.0),
        at.default_note(),
        other.default_note()
    );
    let value = other.value.value.map_or(String::new(), |v| format!(" {v}"));
    out.report(s.span(at), message).with_related(s.span(other), format!("--{}{value}", other.flag));
}
