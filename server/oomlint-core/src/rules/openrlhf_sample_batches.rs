//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch whose rollout makes fewer sample batches
//! (`n_samples_per_prompt × rollout batch ÷ rollout micro batch`, rounded down) than the actor
//! has effective processes (`num_nodes × num_gpus_per_node ÷ ring_attn_size ÷
//! ds.tensor_parallel_size`).
//!
//! ## Why
//! Each actor process takes whole sample batches; OpenRLHF checks this after parsing its flags
//! and stops with `AssertionError: The number of sample batches must be greater than or equal to
//! the effective number of actor processes.` The defaults (rollout micro batch 1, 8 actor GPUs)
//! pass; a large `--rollout.micro_batch_size` with a small rollout batch does not.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --actor.num_gpus_per_node 8 \
//!     --rollout.batch_size 16 --rollout.micro_batch_size 4   # 4 batches for 8 processes: error
//! ```
//!
//! ## Fix
//! Raise `--rollout.batch_size` or `--rollout.n_samples_per_prompt`, or lower
//! `--rollout.micro_batch_size`. No automatic fix: each changes the run.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`):
//! `assert args.rollout.n_samples_per_prompt * args.rollout.batch_size //
//! args.rollout.micro_batch_size >= args.actor.num_nodes * args.actor.num_gpus_per_node //
//! args.ds.ring_attn_size // args.ds.tensor_parallel_size`, "The number of sample batches must be
//! greater than or equal to the effective number of actor processes."; v0.8.0 writes the same
//! without the tensor parallel size (`--micro_rollout_batch_size`, `--ring_attn_size`).

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    let value = |f: &crate::plan::OpenrlhfFlag<u64>| f.value.value;
    let (Some(n), Some(batch), Some(micro), Some(nodes), Some(gpus), Some(ring)) = (
        value(&s.n_samples),
        value(&s.rollout_batch),
        value(&s.rollout_micro),
        value(&s.actor_nodes),
        value(&s.actor_gpus),
        value(&s.ring_attn_size),
    ) else {
        return;
    };
    let tp = match &s.ds_tp {
        Some(t) => match t.value.value {
            Some(tp) => tp,
            None => return,
        },
        None => 1,
    };
    // A zero divisor fails with ZeroDivisionError instead, a different message.
    if micro == 0 || ring == 0 || tp == 0 {
        return;
    }
    let batches = n * batch / micro;
    let processes = nodes * gpus / ring / tp;
    if batches >= processes {
        return;
    }
    out.report(
        s.span(&s.rollout_micro),
        format!(
            "OpenRLHF asserts \"The number of sample batches must be greater than or equal to the effective number of \
             actor processes.\": {n} × {batch} ÷ {micro} = {batches} sample batches for {processes} actor processes"
        ),
    )
    .with_related(s.span(&s.rollout_batch), format!("--{} {batch}", s.rollout_batch.flag))
    .with_related(s.span(&s.actor_gpus), format!("--{} {gpus}", s.actor_gpus.flag));
}
