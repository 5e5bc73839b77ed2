//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch that uses a feature only asynchronous training
//! has, without `--train.async_enable`: partial rollouts (`--train.partial_rollout_enable`), or
//! a vLLM generation batch larger than the rollout batch (`--rollout.vllm_generate_batch_size`
//! above `--rollout.batch_size`, over-sampling).
//!
//! ## Why
//! Both need the asynchronous queue that buffers samples between generation and training.
//! OpenRLHF checks them after parsing its flags and stops with `AssertionError:
//! --train.partial_rollout_enable requires --train.async_enable.` or `AssertionError:
//! --rollout.vllm_generate_batch_size > --rollout.batch_size requires --train.async_enable
//! (over-sampling needs async queue to buffer extra batches).`
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --train.partial_rollout_enable   # error
//! ```
//!
//! ## Fix
//! Add `--train.async_enable`, or drop the feature. No automatic fix: asynchronous training
//! changes the run (the policy generating lags the one training).
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`): `if
//! args.train.partial_rollout_enable: assert args.train.async_enable, …` and `if
//! args.rollout.vllm_generate_batch_size > args.rollout.batch_size: assert
//! args.train.async_enable, …` (the generation batch defaults to the rollout batch). v0.8.0 has
//! neither flag.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    if s.async_train.value.value != Some(false) {
        return;
    }
    if s.partial_rollout.value.value == Some(true) {
        let message = format!("OpenRLHF asserts \"--{} requires --{}.\"", s.partial_rollout.flag, s.async_train.flag);
        let (span, label) = s.related(&s.async_train);
        out.report(s.span(&s.partial_rollout), message).with_related(span, label);
    }
    if let (Some(generate), Some(rollout)) = (s.generate_batch.value.value, s.rollout_batch.value.value) {
        if generate > rollout {
            let message = format!(
                "OpenRLHF asserts \"--{} > --{} requires --{} (over-sampling needs async queue to buffer extra \
                 batches).\" ({generate} > {rollout})",
                s.generate_batch.flag, s.rollout_batch.flag, s.async_train.flag
            );
            let (span, label) = s.related(&s.async_train);
            out.report(s.span(&s.generate_batch), message).with_related(span, label);
        }
    }
}
