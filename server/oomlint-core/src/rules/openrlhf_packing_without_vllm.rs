//! ## What it does
//! Reports an OpenRLHF `train_ppo_ray` launch with `--ds.packing_samples` (v0.8.0:
//! `--packing_samples`) and no vLLM engines (`--vllm.num_engines` unset or 0).
//!
//! ## Why
//! OpenRLHF packs only the samples vLLM generates; it checks the engine count after parsing its
//! flags and stops with `AssertionError: Only support `--packing_samples` with vLLM.` (or, with
//! `num_engines` left at its default `None`, a `TypeError` from `None > 0` on the same line).
//!
//! ## Example
//! ```sh
//! python3 -m openrlhf.cli.train_ppo_ray --ds.packing_samples   # error
//! ```
//!
//! ## Fix
//! Give the engines (`--vllm.num_engines 4`), or drop `--ds.packing_samples`. No automatic fix.
//!
//! ## Source
//! OpenRLHF 3c3be62 and v0.8.0 `openrlhf/cli/train_ppo_ray.py` (`__main__`): `if
//! args.ds.packing_samples: … assert args.vllm.num_engines > 0, "Only support `--packing_samples`
//! with vLLM."`. The flag as written only: `--ring_attn_size > 1` and
//! `--train.dynamic_batch_enable` turn packing on too, which this rule leaves to run time.

use super::support;
use super::{Context, Reporter};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(s) = support::openrlhf(ctx) else { return };
    if s.packing.value.value != Some(true) {
        return;
    }
    // None from argparse's default fails too; None the script computes is not known.
    let fails = match s.vllm_engines.value.value {
        Some(n) => n == 0,
        None => s.vllm_engines.unset(),
    };
    if !fails {
        return;
    }
    let (span, label) = s.related(&s.vllm_engines);
    out.report(s.span(&s.packing), "OpenRLHF asserts \"Only support `--packing_samples` with vLLM.\"")
        .with_related(span, label);
}
