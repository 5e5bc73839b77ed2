//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch whose advantage estimator takes a per-prompt
//! group baseline (`rloo`, `reinforce_baseline`, `group_norm`, and from the dotted releases
//! `dr_grpo`) with one sample per prompt (`--rollout.n_samples_per_prompt`, default 1).
//!
//! ## Why
//! With one sample the group baseline is the sample itself and every advantage is 0; OpenRLHF
//! refuses to start: `AssertionError: reinforce_baseline requires n_samples_per_prompt > 1`.
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --algo.advantage.estimator group_norm   # error
//! ```
//!
//! ## Fix
//! Set `--rollout.n_samples_per_prompt` above 1 (GRPO-style runs use 4 to 16), or choose
//! `gae` or `reinforce`. No automatic fix: the sample count sizes the rollout.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`): `if
//! args.algo.advantage.estimator in ["rloo", "reinforce_baseline", "group_norm", "dr_grpo"]:
//! assert args.rollout.n_samples_per_prompt > 1, f"{args.algo.advantage.estimator} requires
//! n_samples_per_prompt > 1"`; v0.8.0 the same for `["rloo", "reinforce_baseline", "group_norm"]`.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    let Some(estimator) = s.estimator.value.value.as_deref() else { return };
    let grouped: &[&str] = if s.dotted {
        &["rloo", "reinforce_baseline", "group_norm", "dr_grpo"]
    } else {
        &["rloo", "reinforce_baseline", "group_norm"]
    };
    if !grouped.contains(&estimator) || s.n_samples.value.value.is_none_or(|n| n > 1) {
        return;
    }
    out.report(s.span(&s.n_samples), format!("OpenRLHF asserts \"{estimator} requires n_samples_per_prompt > 1\""))
        .with_related(s.span(&s.estimator), format!("--{} {estimator}", s.estimator.flag));
}
