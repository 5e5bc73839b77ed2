//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch with `--train.colocate_all` (v0.8.0:
//! `--colocate_all_models`), vLLM engines and no async training, whose actor GPUs
//! (`num_nodes × num_gpus_per_node`) differ from the engines' GPUs (`num_engines ×
//! tensor_parallel_size`).
//!
//! ## Why
//! Colocated, every engine lives in the actor's placement group, one GPU bundle per actor rank;
//! OpenRLHF asserts the two counts are equal before it creates the engines and stops with
//! `AssertionError: actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines
//! * vllm_tensor_parallel_size, got 8 and 4`. The actor's default is 8 GPUs on 1 node.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --train.colocate_all \
//!     --actor.num_gpus_per_node 8 --vllm.num_engines 2 --vllm.tensor_parallel_size 2   # error
//! ```
//!
//! ## Fix
//! Make `num_engines × tensor_parallel_size` equal the actor's GPUs (`--vllm.num_engines 4`
//! here). No automatic fix: which of the counts is meant is the user's choice.
//!
//! ## Source
//! OpenRLHF 3c3be62 and v0.8.0 `openrlhf/cli/train_ppo_ray.py` `train`: `if
//! args.train.colocate_all and not args.train.async_enable: assert args.actor.num_nodes *
//! args.actor.num_gpus_per_node == args.vllm.num_engines * args.vllm.tensor_parallel_size`,
//! "actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines *
//! vllm_tensor_parallel_size, got {…} and {…}" (only when `num_engines` is set and above 0).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    if s.colocate_all.value.value != Some(true) || s.async_train.value.value != Some(false) {
        return;
    }
    let (Some(nodes), Some(gpus), Some(engines), Some(tp)) =
        (s.actor_nodes.value.value, s.actor_gpus.value.value, s.vllm_engines.value.value, s.vllm_tp.value.value)
    else {
        return;
    };
    if engines == 0 || nodes * gpus == engines * tp {
        return;
    }
    out.report(
        s.span(&s.vllm_engines),
        format!(
            "OpenRLHF asserts \"actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines * \
             vllm_tensor_parallel_size, got {} and {}\" with --{}",
            nodes * gpus,
            engines * tp,
            s.colocate_all.flag
        ),
    )
    .with_related(s.span(&s.actor_gpus), format!("--{} {gpus}", s.actor_gpus.flag))
    .with_related(s.span(&s.vllm_tp), format!("--{} {tp}", s.vllm_tp.flag));
}
