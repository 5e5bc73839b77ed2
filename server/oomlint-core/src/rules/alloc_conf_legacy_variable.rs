//! ## What it does
//! Notes `PYTORCH_CUDA_ALLOC_CONF` (or `PYTORCH_HIP_ALLOC_CONF`) used on its own: since
//! torch 2.9 the variable is `PYTORCH_ALLOC_CONF`, and torch 2.10 prints a deprecation
//! warning for the old name.
//!
//! ## Why
//! The old name still works (it is a lower-priority alias), so this is advice. Keep it
//! if the job may run on torch older than 2.9, which does not know the new name, or
//! with vLLM sleep mode, whose check reads only the old name (configs that use vLLM are
//! not reported).
//!
//! ## Example
//! ```sh
//! export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # info
//! ```
//!
//! ## Fix
//! Rename the variable to `PYTORCH_ALLOC_CONF`, offered only when the torch version
//! (pinned, or the newest known) is 2.11 or later: torch 2.9.1 reads the new name but
//! ignores `expandable_segments:True` set through it (pytorch#183387, fixed in 2.11).
//!
//! Fix safety: **unsafe**: an environment running an older torch than pinned ignores
//! the new name.
//!
//! ## Source
//! PyTorch `c10/core/AllocatorConfig.cpp` ("PYTORCH_CUDA_ALLOC_CONF is deprecated, use
//! PYTORCH_ALLOC_CONF instead").

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(plan) = ctx.plan else { return };
    if !support::torch_at_least(ctx, "2.10") || plan.allocator.iter().any(|s| s.variable == "PYTORCH_ALLOC_CONF") {
        return;
    }
    // vLLM's sleep-mode check reads only the old name: keep it in vLLM configs.
    let trl_vllm = plan.trainer.as_ref().and_then(|t| t.grpo.as_ref()).is_some_and(|g| g.use_vllm.value);
    let axolotl_vllm = plan.axolotl.as_ref().is_some_and(|a| a.trl_use_vllm.value);
    if trl_vllm || axolotl_vllm {
        return;
    }
    for legacy in &plan.allocator {
        // The variable's literal spelling decides whether a rename edit is exact.
        let exact = ctx.text.get(legacy.key_span.start..legacy.key_span.end) == Some(legacy.variable.as_str());
        let diagnostic = out.report(legacy.key_span, format!("{} is deprecated since torch 2.10 (\"{} is deprecated, use PYTORCH_ALLOC_CONF instead\"); torch reads PYTORCH_ALLOC_CONF from 2.9, but honours its expandable_segments only from 2.11 (pytorch#183387)", legacy.variable, legacy.variable));
        // Before 2.11 the new name silently drops expandable_segments: renaming would
        // turn it off, so the fix is offered only where the new name fully works.
        if exact && support::torch_at_least(ctx, "2.11") {
            diagnostic.with_fix(Fix {
                title: "Rename to PYTORCH_ALLOC_CONF".into(),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace(legacy.key_span, "PYTORCH_ALLOC_CONF")],
            });
        }
    }
}
