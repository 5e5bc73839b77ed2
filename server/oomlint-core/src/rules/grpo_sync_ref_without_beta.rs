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

use super::support::{self, set_value};
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let Some(sync) = r.entry("sync_ref_model").filter(|_| support::flag(&r, "sync_ref_model")) else { return };
    let default_beta = if support::trl_at_least(ctx, "0.19") { 0.0 } else { 0.04 };
    let beta = r.f64("beta").map_or(default_beta, |b| b.value);
    if beta != 0.0 {
        return;
    }
    let diagnostic = out.report(sync.key_span.cover(sync.value.span), "`sync_ref_model: true` while beta is 0.0: TRL raises \"You passed `sync_ref_model=True` while `beta=0.0`, which means the reference model is not used during training. …\"");
    if let Some(key) = support::key_of(&r, "beta") {
        diagnostic.with_related(key, "beta set here");
    }
    diagnostic.with_fix(set_value(ctx, sync, Literal::Bool(false), "Set `sync_ref_model: false`", Applicability::Safe));
}
