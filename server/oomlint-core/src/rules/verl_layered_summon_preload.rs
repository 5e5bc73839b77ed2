//! ## What it does
//! Reports a verl launch that trains LoRA adapters under FSDP with
//! `actor_rollout_ref.rollout.layered_summon=True` while `rollout.load_format` is a `dummy`
//! format (verl's default).
//!
//! ## Why
//! The first hand-over of the actor's weights to the rollout engine (`rollout_mode`, before the
//! first generation) collects the LoRA weights layer by layer only once the engine holds the
//! base model; with a dummy load format it does not, and `collect_lora_params` raises
//! `ValueError: To use layered_summon, you must make sure base-model is preloaded in vllm,
//! e.g. let rollout.load_format=safetensors`. The run dies after the workers, the models and
//! the engine are built, before its first step.
//!
//! ## Example
//! ```sh
//! python3 -m verl.trainer.main_ppo \
//!     actor_rollout_ref.model.lora_rank=32 \
//!     actor_rollout_ref.rollout.layered_summon=True   # error: load_format is `dummy`
//! ```
//!
//! ## Fix
//! Load the base weights into the engine (`actor_rollout_ref.rollout.load_format=safetensors`),
//! as verl's GRPO-LoRA examples do, or drop `layered_summon` (the hand-over then unshards the
//! whole model at once: see the estimate's `weight-sync` phase). An unsafe fix sets a
//! `load_format` the launch writes to `safetensors`.
//!
//! ## Source
//! verl `verl/utils/fsdp_utils.py` `collect_lora_params` (at b178a3cd: `if layered_summon: if
//! not base_sync_done: raise ValueError("To use layered_summon, you must make sure base-model is
//! preloaded in vllm, e.g. let rollout.load_format=safetensors")`), called from
//! `verl/workers/fsdp_workers.py` `ActorRolloutRefWorker.rollout_mode` for a PEFT model with
//! `base_sync_done = "dummy" not in rollout.load_format` (set in `__init__`).

use super::support;
use super::{Context, Reporter};
use crate::diagnostic::Applicability;
use crate::syntax::Literal;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    let Some(v) = support::verl(ctx) else { return };
    let fsdp = matches!(v.strategy.value.as_deref(), None | Some("fsdp" | "fsdp2"));
    let lora = v.lora_rank.value.is_some_and(|r| r > 0);
    if !fsdp || !lora || v.layered_summon.value != Some(true) || v.load_format.is_unknown() {
        return;
    }
    let Some(format) = v.load_format.value.as_deref().filter(|f| f.contains("dummy")) else { return };
    let default = if v.load_format.is_from_file() { String::new() } else { " (verl's default)".to_string() };
    out.report(
        v.span(&v.layered_summon),
        format!(
            "verl raises \"To use layered_summon, you must make sure base-model is preloaded in vllm, e.g. let \
             rollout.load_format=safetensors\" at the first weight hand-over: rollout.load_format is `{format}`{default}, \
             so the engine holds no base model to apply the LoRA layers to"
        ),
    )
    .with_related(v.span(&v.lora_rank), "actor_rollout_ref.model.lora_rank")
    .with_fix(support::set(
        ctx,
        &v.load_format,
        Literal::Str("safetensors".into()),
        "Load the base weights into the engine (`rollout.load_format=safetensors`)",
        Applicability::Unsafe,
    ));
}
