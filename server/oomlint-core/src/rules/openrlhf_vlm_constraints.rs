//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch that trains a vision-language model
//! (`--data.max_images_per_prompt` above 0) with a critic (the `gae` advantage estimator, the
//! default, always builds one) or with packed samples (`--ds.packing_samples`).
//!
//! ## Why
//! OpenRLHF's VLM path has no critic, and packing collapses the batch dimension that aligns image
//! tokens with `pixel_values` (and M-RoPE position ids). It checks both after parsing its flags
//! and stops with `AssertionError: VLM training does not support critic model. …` or
//! `AssertionError: VLM training does not support --packing_samples. …`.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --data.max_images_per_prompt 4 \
//!     --reward.remote_url http://rm:5000/get_reward   # error: gae builds a critic
//! ```
//!
//! ## Fix
//! Use an estimator without a critic (`--algo.advantage.estimator reinforce_baseline`, `rloo`,
//! `group_norm`), and drop `--ds.packing_samples`. No automatic fix: the estimator changes the
//! algorithm.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`): with an estimator other than
//! `gae` the critic is set to None, with `gae` it defaults to the reward or actor model; then `if
//! args.data.max_images_per_prompt > 0: assert args.critic.model_name_or_path is None, …; assert
//! not args.ds.packing_samples, …`. This runs before `--ds.ring_attn_size` or dynamic batches turn
//! packing on, so only the flag as written counts. v0.8.0 has no VLM training.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    if s.max_images.value.value.is_none_or(|n| n == 0) {
        return;
    }
    if s.estimator.value.value.as_deref() == Some("gae") {
        let (span, label) = s.related(&s.max_images);
        let message = format!(
            "OpenRLHF asserts \"VLM training does not support critic model. Use --advantage_estimator other than \
             'gae' (e.g., reinforce_baseline, rloo, group_norm).\"{}",
            s.estimator.default_note()
        );
        out.report(s.span(&s.estimator), message).with_related(span, label);
    }
    if s.packing.value.value == Some(true) {
        let (span, label) = s.related(&s.max_images);
        let message = "OpenRLHF asserts \"VLM training does not support --packing_samples.\" (packing collapses the \
                       batch dimension that aligns image tokens with pixel_values)";
        out.report(s.span(&s.packing), message).with_related(span, label);
    }
}
