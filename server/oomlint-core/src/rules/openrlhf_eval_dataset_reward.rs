//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch with an evaluation dataset (`--eval.dataset`;
//! v0.8.0: `--eval_dataset`) and neither a remote reward (`--reward.remote_url`) nor an agent
//! function (`--train.agent_func_path`).
//!
//! ## Why
//! OpenRLHF scores evaluation samples only through a remote reward function or an agent, not a
//! reward model. It checks this after parsing its flags and stops with `AssertionError:
//! `--eval_dataset` requires either `--remote_rm_url` (for remote reward models) or
//! `--agent_func_path` (for MultiTurnAgentExecutor workflows).` (v0.8.0: "`--eval_dataset` is
//! only supported with `--remote_rm_url`.").
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --reward.model_name_or_path OpenRLHF/Llama-3-8b-rm-mixture \
//!     --eval.dataset OpenRLHF/prompt-collection-v0.1   # error
//! ```
//!
//! ## Fix
//! Give a remote reward (`--reward.remote_url`) or an agent, or drop the evaluation dataset. No
//! automatic fix.
//!
//! ## Source
//! OpenRLHF 3c3be62 `openrlhf/cli/train_ppo_ray.py` (`__main__`): `if args.train.agent_func_path:
//! args.reward.remote_url = "agent"`, then `if args.eval.dataset: assert args.reward.remote_url
//! or args.train.agent_func_path, …`; v0.8.0 `assert args.remote_rm_url, "`--eval_dataset` is
//! only supported with `--remote_rm_url`."` after the same agent substitution.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    let given = s.eval_dataset.value.value.as_deref().is_some_and(|d| !d.is_empty());
    if !given || !s.remote_rm.falsy() || !s.agent.falsy() {
        return;
    }
    let message = if s.dotted {
        "OpenRLHF asserts \"`--eval_dataset` requires either `--remote_rm_url` (for remote reward models) or \
         `--agent_func_path` (for MultiTurnAgentExecutor workflows).\""
    } else {
        "OpenRLHF asserts \"`--eval_dataset` is only supported with `--remote_rm_url`.\""
    };
    out.report(s.span(&s.eval_dataset), message);
}
