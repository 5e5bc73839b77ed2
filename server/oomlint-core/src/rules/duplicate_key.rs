//! ## What it does
//! Reports a mapping key that appears twice in the same mapping.
//!
//! ## Why
//! PyYAML and `json.load` keep the last value silently, so the first one is dead
//! text that readers (and reviewers) take for the setting. DeepSpeed's own loader
//! refuses duplicate keys outright.
//!
//! ## Example
//! ```yaml
//! debug: false
//! num_processes: 8
//! debug: true      # this one wins
//! ```
//!
//! ## Fix
//! None: delete the copy you do not mean.
//!
//! ## Source
//! PyYAML `yaml/constructor.py` (`construct_mapping` overwrites); DeepSpeed
//! `deepspeed/runtime/config_utils.py` (`dict_raise_error_on_duplicate_keys`).

use super::{Context, Reporter};
use crate::syntax::ProblemKind;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    for problem in &ctx.document.problems {
        if let ProblemKind::DuplicateKey { first } = problem.kind {
            out.report(problem.span, problem.message.clone()).with_related(first, "first defined here");
        }
    }
}
