//! ## What it does
//! Reports a TRL GRPO config with `sync_ref_model: true` and `beta` 0, which has been
//! the default since TRL 0.19.
//!
//! ## Why
//! With `beta == 0` GRPO creates no reference model, so there is nothing to
//! synchronize: `GRPOTrainer.__init__` raises `ValueError: You passed sync_ref_model=True
//! while beta=0.0, which means the reference model is not used during training. …`
//! after the model is loaded.
//!
//! ## Example
//! ```yaml
//! sync_ref_model: true    # error: beta defaults to 0.0
//! ```
//!
//! ## Fix
//! Set a KL coefficient (`beta: 0.04`, the pre-0.19 default) or drop `sync_ref_model`.
//! The fix sets `sync_ref_model: false`.
//!
//! Fix safety: **safe**: without a reference model the option never had an effect.
//!
//! ## Source
//! TRL `trl/trainer/grpo_trainer.py` (`GRPOTrainer.__init__`): "You passed
//! `sync_ref_model=True` while `beta=0.0`, which means the reference model is not used
//! during training. …"; `beta` default in `trl/trainer/grpo_config.py`.

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(plan) = ctx.plan else { return };
    let (Some(rl), Some(grpo)) = (plan.rl.as_ref(), plan.trainer.as_ref().and_then(|t| t.grpo.as_ref())) else {
        return;
    };
    let sync = &grpo.sync_ref_model;
    let (true, Some(span)) = (sync.value, sync.entry_span()) else { return };
    // The plan's default beta holds since TRL 0.19; before, an unset beta was 0.04.
    let beta = &rl.beta;
    if beta.value != 0.0 || !(beta.is_from_file() || support::trl_at_least(ctx, "0.19")) {
        return;
    }
    let diagnostic = out.report(span, "`sync_ref_model: true` while beta is 0.0: TRL raises \"You passed `sync_ref_model=True` while `beta=0.0`, which means the reference model is not used during training. …\"");
    if let Some(key) = beta.key_span() {
        diagnostic.with_related(key, "beta set here");
    }
    diagnostic.with_fix(support::set(
        ctx,
        sync,
        Literal::Bool(false),
        "Set `sync_ref_model: false`",
        Applicability::Safe,
    ));
}
