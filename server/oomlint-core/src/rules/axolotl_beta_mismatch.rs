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
use crate::format::Format;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if ctx.format != Format::Axolotl {
        return;
    }
    let Some(r) = support::reader(ctx) else { return };
    let (Some(top), Some(nested)) = (r.f64("beta"), r.f64("trl.beta")) else { return };
    if top.value == 0.0 || nested.value == 0.0 || top.value == nested.value {
        return;
    }
    let (Some(top_entry), Some(nested_entry)) = (r.entry("beta"), r.entry("trl.beta")) else { return };
    out.report(nested_entry.value.span, format!("`trl.beta` {} differs from `beta` {}: Axolotl raises \"beta and trl.beta must match or one must be removed\"", nested.value, top.value))
        .with_related(top_entry.value.span, "top-level beta set here");
}
