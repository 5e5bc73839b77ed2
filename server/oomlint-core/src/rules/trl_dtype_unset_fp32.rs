//! ## What it does
//! Warns when a TRL config does not set `dtype`: since TRL 0.27 `ModelConfig.dtype`
//! defaults to `float32`, so the model is loaded with 4 bytes per parameter.
//!
//! ## Why
//! Before 0.27 the default was null (the checkpoint's dtype, usually bf16). A config
//! written for an older TRL now needs twice the weight memory, and with `bf16: true`
//! trains fp32 master weights under autocast. With `load_in_4bit` the 4-bit compute
//! dtype also becomes fp32 (`bnb_4bit_compute_dtype = dtype`). Nothing fails at
//! start-up, which is why it is a warning.
//!
//! ## Example
//! ```yaml
//! model_name_or_path: Qwen/Qwen2.5-7B   # warning: loaded in float32
//! bf16: true
//! ```
//!
//! ## Fix
//! Write the dtype you mean: `dtype: bfloat16` (or `auto`). The fix inserts
//! `dtype: bfloat16` after `model_name_or_path`.
//!
//! Fix safety: **unsafe**: bf16 weights change numerics (no fp32 master copy).
//!
//! ## Source
//! TRL `trl/trainer/model_config.py` (`dtype` field, default `"float32"` since v0.27;
//! `torch_dtype` alias removed in v0.27); `trl/scripts/sft.py`, `dpo.py`, `grpo.py` pass
//! it as `model_init_kwargs["dtype"]`.

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::{Applicability, Edit, Fix};

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    if !support::is_trl(ctx.format) || !support::trl_at_least(ctx, "0.27") {
        return;
    }
    // `ModelConfig.dtype` belongs to the `trl` CLI; a script loads its model itself.
    let Some(trainer) = support::trainer(ctx).filter(|t| t.model_config) else { return };
    // A written `torch_dtype` is the removed alias (a `removed-key` finding), not this.
    if trainer.dtype.is_from_file() {
        return;
    }
    let model = trainer.model_name_or_path.as_ref();
    let span = support::first_key(&[model.and_then(|m| m.key_span())]);
    let diagnostic = out.report(span, "`dtype` is not set: TRL (since 0.27) loads the model in float32, 4 bytes per parameter; write `dtype: bfloat16` or `dtype: auto` to load 16-bit weights");
    let Some((key, value)) = model.and_then(|m| Some((m.key_span()?, m.value_span()?))) else { return };
    if support::top_level_line_start(ctx, key).is_some() {
        let line_end = ctx.text.get(value.end..).and_then(|rest| rest.find('\n')).map(|n| value.end + n + 1);
        if let Some(at) = line_end {
            diagnostic.with_fix(Fix {
                title: "Load in bfloat16 (`dtype: bfloat16`)".into(),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::insert(at, "dtype: bfloat16\n")],
            });
        }
    }
}
