//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch with dynamic filtering
//! (`--algo.dynamic_filtering_enable`) and a reward range that is not increasing
//! (`--algo.dynamic_filtering_range LOW HIGH`), no remote reward or agent function, or one
//! sample per prompt (`--rollout.n_samples_per_prompt`, default 1).
//!
//! ## Why
//! Dynamic filtering drops prompts whose samples all score alike, so it needs several samples
//! per prompt and rewards computed outside the trainer. OpenRLHF checks both after parsing its
//! flags and stops with `AssertionError: remote_rm_url or agent_func_path must be specified when
//! using dynamic filtering` or `AssertionError: n_samples_per_prompt must be greater than 1 when
//! using dynamic filtering`.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --reward.remote_url http://rm:5000/get_reward \
//!     --algo.dynamic_filtering_enable   # error: one sample per prompt
//! ```
//!
//! ## Fix
//! Give a remote reward or an agent and more than one sample per prompt, or drop
//! `--algo.dynamic_filtering_enable`. No automatic fix.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`): `if
//! args.algo.dynamic_filtering_enable:` asserts `args.algo.dynamic_filtering_range[0] <
//! args.algo.dynamic_filtering_range[1]` ("reward_clip_range[0] must be less than
//! reward_clip_range[1]", its message names another flag), then `args.reward.remote_url or
//! args.train.agent_func_path`, then `args.rollout.n_samples_per_prompt > 1`. v0.8.0 has no
//! dynamic filtering.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    if s.dynamic_filtering.value.value != Some(true) {
        return;
    }
    if let Some((low, high)) = s.dynamic_filtering_range.value.value.filter(|(low, high)| low >= high) {
        let (span, label) = s.related(&s.dynamic_filtering);
        let message = format!(
            "OpenRLHF asserts \"reward_clip_range[0] must be less than reward_clip_range[1]\" of \
             --{} ({low} is not below {high})",
            s.dynamic_filtering_range.flag
        );
        out.report(s.span(&s.dynamic_filtering_range), message).with_related(span, label);
    }
    if s.remote_rm.falsy() && s.agent.falsy() {
        let (span, label) = s.related(&s.dynamic_filtering);
        let message =
            "OpenRLHF asserts \"remote_rm_url or agent_func_path must be specified when using dynamic filtering\"";
        out.report(s.span(&s.dynamic_filtering), message).with_related(span, label);
    }
    if s.n_samples.value.value.is_some_and(|n| n <= 1) {
        let (span, label) = s.related(&s.dynamic_filtering);
        let message = format!(
            "OpenRLHF asserts \"n_samples_per_prompt must be greater than 1 when using dynamic filtering\"{}",
            s.n_samples.default_note()
        );
        out.report(s.span(&s.n_samples), message).with_related(span, label);
    }
}
