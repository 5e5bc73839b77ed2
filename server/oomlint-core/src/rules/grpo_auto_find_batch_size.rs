//! ## What it does
//! Reports `auto_find_batch_size: true` in a TRL GRPO config.
//!
//! ## Why
//! `auto_find_batch_size` halves the batch after an out-of-memory error, which would
//! split prompt groups of `num_generations` completions. `GRPOConfig.__post_init__`
//! raises `ValueError: auto_find_batch_size is not supported by GRPO, because the
//! generation batch must contain full prompt groups of num_generations completions, …`.
//!
//! ## Example
//! ```yaml
//! auto_find_batch_size: true   # error
//! ```
//!
//! ## Fix
//! Set it to false and choose `per_device_train_batch_size` yourself (oomlint's memory
//! estimate helps).
//!
//! Fix safety: **safe**: GRPO never runs with it on, so turning it off changes nothing
//! that ever worked.
//!
//! ## Source
//! TRL `trl/trainer/grpo_config.py` (`GRPOConfig.__post_init__`): "auto_find_batch_size is
//! not supported by GRPO, …".

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::format::Format;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::TrlGrpo {
        return;
    }
    let Some(setting) = support::trainer(ctx).map(|t| &t.auto_find_batch_size) else { return };
    let (true, Some(span)) = (setting.value, setting.entry_span()) else { return };
    out.report(span, "`auto_find_batch_size` with GRPO: TRL raises \"auto_find_batch_size is not supported by GRPO, because the generation batch must contain full prompt groups of num_generations completions …\"")
        .with_fix(support::set(ctx,setting, Literal::Bool(false), "Set `auto_find_batch_size: false`", Applicability::Safe));
}
