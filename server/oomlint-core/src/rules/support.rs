//! Shared helpers for the framework rules: the plan's settings of each framework, placing
//! findings, building minimal value edits, and the framework version each rule assumes.
//! The rules read the plan, never the document (see `rules::tests`).

use super::Context;
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::format::Format;
use crate::plan::{
    AccelerateSettings, AxolotlSettings, DeepspeedSettings, LitgptSettings, RlAlgorithm, Sourced, TrainerSettings,
};
use crate::span::Span;
use crate::syntax::Language;
use crate::syntax::Literal;

/// TRL CLI configs (flat YAML over TrainingArguments + the TRL config + ModelConfig).
pub(super) fn is_trl(format: Format) -> bool {
    matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo)
}

/// Formats whose keys are `TrainingArguments` fields at the top level.
pub(super) fn has_training_arguments(format: Format) -> bool {
    is_trl(format) || matches!(format, Format::Transformers | Format::Llamafactory)
}

pub(super) fn is_litgpt(format: Format) -> bool {
    matches!(
        format,
        Format::LitgptLora
            | Format::LitgptAdapter
            | Format::LitgptAdapterV2
            | Format::LitgptFull
            | Format::LitgptPretrain
    )
}

/// LitGPT scripts that accept `quantize` (`finetune/lora.py`, `adapter.py`, `adapter_v2.py`).
pub(super) fn litgpt_quantizes(format: Format) -> bool {
    matches!(format, Format::LitgptLora | Format::LitgptAdapter | Format::LitgptAdapterV2)
}

/// A fix that sets the value the file writes for `setting` to `value` as the file's
/// language writes it (`Edit::set`: only the value's bytes, so comments and layout survive;
/// in a script, the literal that defines it). A value set in a file the analysed one is
/// read with is edited there. An empty value (`key:`) gets a leading space so the entry
/// stays a mapping entry. None when the value does not come from a file or the language
/// cannot write it.
pub(super) fn set<T>(
    ctx: &Context,
    setting: &Sourced<T>,
    value: Literal,
    title: impl Into<String>,
    applicability: Applicability,
) -> Option<Fix> {
    let span = setting.value_span()?;
    let mut edit = Edit::set(span, &value, ctx.plan?.language_at(span))?;
    if span.is_empty() {
        edit.content.insert(0, ' ');
    }
    Some(Fix { title: title.into(), applicability, edits: vec![edit] })
}

/// The key of the first setting the file writes, else the document start.
pub(super) fn first_key(keys: &[Option<Span>]) -> Span {
    keys.iter().flatten().next().copied().unwrap_or(Span::empty(0))
}

/// Whether the framework version pinned near the config (or set in `oomlint.toml`) is
/// at least `version`; true without a pin, since rules assume the newest release.
pub(super) fn at_least(ctx: &Context, framework: &str, version: &str) -> bool {
    crate::versions::Version::parse(version).is_none_or(|v| ctx.versions.at_least(framework, &v))
}

/// TRL at least `version` (the TRL-dependent defaults: `dtype`, GRPO `beta`).
pub(super) fn trl_at_least(ctx: &Context, version: &str) -> bool {
    at_least(ctx, "trl", version)
}

/// PyTorch at least `version` (allocator variable names).
pub(super) fn torch_at_least(ctx: &Context, version: &str) -> bool {
    at_least(ctx, "torch", version)
}

/// The start of the line holding `key` when the key begins that line of a YAML file (a
/// top-level block key), so a sibling `key: value` line can be inserted there.
pub(super) fn top_level_line_start(ctx: &Context, key: Span) -> Option<usize> {
    if ctx.plan?.language != Language::Yaml {
        return None;
    }
    let line_start = ctx.text.get(..key.start)?.rfind('\n').map_or(0, |n| n + 1);
    (line_start == key.start).then_some(line_start)
}

/// LitGPT batch settings, and the world size when the file fixes it.
pub(super) struct LitgptBatch<'p> {
    pub(crate) global: &'p Sourced<u64>,
    pub(crate) micro: &'p Sourced<u64>,
    /// `devices * num_nodes` when the file gives `devices` as a number; None when the launch
    /// decides (`devices` unset: 1 unless `--devices` says otherwise; `auto`/-1: every visible GPU).
    pub(crate) world: Option<u64>,
    pub(crate) train_key: Option<Span>,
    pub(crate) devices_key: Option<Span>,
    pub(crate) nodes_key: Option<Span>,
}

pub(super) fn litgpt_batch<'p>(ctx: &Context<'p>) -> Option<LitgptBatch<'p>> {
    let plan = ctx.plan.filter(|_| is_litgpt(ctx.format))?;
    let devices = plan.devices.as_ref()?;
    let nodes = plan.num_nodes.as_ref();
    let known = plan.stated_world_size().is_some();
    Some(LitgptBatch {
        global: plan.global_batch_size.as_ref()?,
        micro: plan.micro_batch_size.as_ref()?,
        world: known.then(|| devices.value.saturating_mul(nodes.map_or(1, |n| n.value.max(1)))),
        train_key: plan.litgpt.as_ref().and_then(|l| l.train_key),
        devices_key: devices.key_span(),
        nodes_key: nodes.and_then(|n| n.key_span()),
    })
}

/// The settings of a LitGPT plan.
pub(super) fn litgpt<'p>(ctx: &Context<'p>) -> Option<&'p LitgptSettings> {
    ctx.plan?.litgpt.as_ref().filter(|_| is_litgpt(ctx.format))
}

/// The GRPO batch settings of a TRL `grpo` config or an Axolotl `rl: grpo` config.
pub(super) struct GrpoBatch<'p> {
    pub(crate) axolotl: bool,
    /// `per_device_train_batch_size` (Axolotl: `micro_batch_size`).
    pub(crate) per_device: &'p Sourced<u64>,
    pub(crate) accumulation: &'p Sourced<u64>,
    /// The world size (TRL forwards `num_processes` to `accelerate launch`); Axolotl checks one rank.
    pub(crate) processes: u64,
    pub(crate) num_generations: &'p Sourced<u64>,
    pub(crate) generation_batch_size: Option<&'p Sourced<u64>>,
    /// TRL only: Axolotl's check does not read it.
    pub(crate) steps_per_generation: Option<&'p Sourced<u64>>,
}

impl GrpoBatch<'_> {
    /// Axolotl validates batch sizes of at least 1.
    fn floor(&self, value: u64) -> u64 {
        if self.axolotl {
            value.max(1)
        } else {
            value
        }
    }

    pub(super) fn per_device_value(&self) -> u64 {
        self.floor(self.per_device.value)
    }

    pub(super) fn accumulation_value(&self) -> u64 {
        self.floor(self.accumulation.value)
    }

    /// The key names, for messages: (per device, generation batch).
    pub(super) fn keys(&self) -> (&'static str, &'static str) {
        if self.axolotl {
            ("micro_batch_size", "trl.generation_batch_size")
        } else {
            ("per_device_train_batch_size", "generation_batch_size")
        }
    }
}

/// The GRPO batch settings of the plan; None for other configs (and for Axolotl configs
/// that leave `trl.num_generations` unset, which Axolotl does not validate).
pub(super) fn grpo_batch<'p>(ctx: &Context<'p>) -> Option<GrpoBatch<'p>> {
    let plan = ctx.plan?;
    let rl = plan.rl.as_ref()?;
    let axolotl = match ctx.format {
        Format::TrlGrpo => false,
        Format::Axolotl
            if plan.algorithm.as_ref().is_some_and(|a| a.value == RlAlgorithm::Grpo)
                && rl.num_generations.is_from_file() =>
        {
            true
        }
        _ => return None,
    };
    Some(GrpoBatch {
        axolotl,
        per_device: plan.micro_batch_size.as_ref()?,
        accumulation: plan.gradient_accumulation.as_ref()?,
        processes: if axolotl { 1 } else { plan.world_size() },
        num_generations: &rl.num_generations,
        generation_batch_size: rl.generation_batch_size.as_ref(),
        steps_per_generation: rl.steps_per_generation.as_ref().filter(|_| !axolotl),
    })
}

/// The settings of an Axolotl plan.
pub(super) fn axolotl<'p>(ctx: &Context<'p>) -> Option<&'p AxolotlSettings> {
    ctx.plan?.axolotl.as_ref().filter(|_| ctx.format == Format::Axolotl)
}

/// The settings of an accelerate config's plan.
pub(super) fn verl<'p>(ctx: &Context<'p>) -> Option<&'p crate::plan::VerlSettings> {
    ctx.plan?.verl.as_ref()
}

pub(super) fn openrlhf<'p>(ctx: &Context<'p>) -> Option<&'p crate::plan::OpenrlhfSettings> {
    ctx.plan?.openrlhf.as_ref()
}

pub(super) fn accelerate<'p>(ctx: &Context<'p>) -> Option<&'p AccelerateSettings> {
    ctx.plan?.accelerate.as_ref().filter(|_| ctx.format == Format::Accelerate)
}

/// The settings of a DeepSpeed config's plan.
pub(super) fn deepspeed<'p>(ctx: &Context<'p>) -> Option<&'p DeepspeedSettings> {
    ctx.plan?.deepspeed.as_ref().filter(|_| ctx.format == Format::Deepspeed)
}

/// The trainer settings of a TRL, transformers or LLaMA-Factory plan.
pub(super) fn trainer<'p>(ctx: &Context<'p>) -> Option<&'p TrainerSettings> {
    ctx.plan?.trainer.as_ref()
}

/// The span inside the file of a span relative to an allocator setting's value, when
/// the value maps byte for byte onto the file (else the whole value).
pub(super) fn allocator_span(setting: &crate::plan::AllocatorSetting, relative: Span) -> Span {
    if setting.verbatim && relative.end <= setting.value_span.len() {
        Span::new(setting.value_span.start + relative.start, setting.value_span.start + relative.end)
    } else {
        setting.value_span
    }
}
