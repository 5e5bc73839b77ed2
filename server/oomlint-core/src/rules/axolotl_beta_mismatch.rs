//! ## What it does
//! Reports an Axolotl config whose top-level `beta` and `trl.beta` are both set and
//! differ.
//!
//! ## Why
//! Both name the DPO/GRPO KL coefficient; Axolotl cannot tell which is meant and raises
//! `ValueError: beta and trl.beta must match or one must be removed`.
//!
//! ## Example
//! ```yaml
//! rl: dpo
//! beta: 0.1
//! trl:
//!   beta: 0.05     # error
//! ```
//!
//! ## Fix
//! Keep one (`trl.beta` is the current place). No automatic fix.
//!
//! ## Source
//! Axolotl `src/axolotl/utils/schemas/config.py` (`check_beta_and_trl_beta_match`): "beta
//! and trl.beta must match or one must be removed".

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(axolotl) = support::axolotl(ctx) else { return };
    let (Some(top), Some(nested)) = (axolotl.beta.as_ref(), axolotl.trl_beta.as_ref()) else { return };
    if top.value == 0.0 || nested.value == 0.0 || top.value == nested.value {
        return;
    }
    let (Some(top_span), Some(nested_span)) = (top.value_span(), nested.value_span()) else { return };
    out.report(nested_span, format!("`trl.beta` {} differs from `beta` {}: Axolotl raises \"beta and trl.beta must match or one must be removed\"", nested.value, top.value))
        .with_related(top_span, "top-level beta set here");
}
