//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch that turns on asynchronous training
//! (`--train.async_enable`; v0.8.0: `--async_train`) together with vLLM sleep mode
//! (`--vllm.enable_sleep`) while all models are colocated (`--train.colocate_all`).
//!
//! ## Why
//! Asynchronous RLHF keeps the vLLM engines generating while the actor trains, so they cannot be
//! put to sleep between phases. OpenRLHF checks this after parsing its flags and stops with
//! `AssertionError: Async RLHF is not supported with --vllm.enable_sleep.` Without
//! `--train.colocate_all` it first turns sleep mode off itself (with a notice), so only the
//! colocated launch fails.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --train.colocate_all --vllm.enable_sleep \
//!     --train.async_enable   # error
//! ```
//!
//! ## Fix
//! Drop `--vllm.enable_sleep`, or train synchronously. No automatic fix: either changes how the
//! GPUs are shared between generation and training.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`): `if args.vllm.enable_sleep and
//! not args.train.colocate_all: … args.vllm.enable_sleep = False`, then `if
//! args.train.async_enable: assert not args.vllm.enable_sleep, "Async RLHF is not supported with
//! --vllm.enable_sleep."`; v0.8.0 the same with `--vllm_enable_sleep`, `--colocate_all_models`
//! and `--async_train`.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    let on = |v: Option<bool>| v == Some(true);
    if !(on(s.async_train.value.value) && on(s.vllm_sleep.value.value) && on(s.colocate_all.value.value)) {
        return;
    }
    let message = format!("OpenRLHF asserts \"Async RLHF is not supported with --{}.\"", s.vllm_sleep.flag);
    let (span, label) = s.related(&s.async_train);
    out.report(s.span(&s.vllm_sleep), message).with_related(span, label);
}
