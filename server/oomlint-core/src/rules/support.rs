//! Shared helpers for the framework rules: reading the document, placing findings,
//! building minimal value edits, and the framework version each rule assumes.

use super::Context;
use crate::diagnostic::{Applicability, Edit, Fix};
use crate::format::facts::{self, Framework as Defaults};
use crate::format::{Format, Reader};
use crate::span::Span;
use crate::syntax::{Entry, Language, Literal, ScalarKind};

/// The root mapping as a [`Reader`], when the document has one.
pub(super) fn reader<'a>(ctx: &Context<'a>) -> Option<Reader<'a>> {
    ctx.document.root_mapping().map(Reader::new)
}

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

/// The span to report a finding on: the key of the first present path, else the key of
/// the nearest present ancestor of the first path, else the document start.
pub(super) fn anchor(r: &Reader, paths: &[&str]) -> Span {
    if let Some(entry) = paths.iter().find_map(|p| r.entry(p)) {
        return entry.key_span;
    }
    let mut path = paths.first().copied().unwrap_or_default();
    while let Some((parent, _)) = path.rsplit_once('.') {
        if let Some(entry) = r.entry(parent) {
            return entry.key_span;
        }
        path = parent;
    }
    Span::empty(0)
}

/// The key span of an entry that is present.
pub(super) fn key_of(r: &Reader, path: &str) -> Option<Span> {
    r.entry(path).map(|e| e.key_span)
}

/// Whether the scalar at `path` is present and not null.
pub(super) fn is_set(r: &Reader, path: &str) -> bool {
    r.entry(path).is_some_and(|e| e.value.as_scalar().is_none_or(|s| !s.is_null()))
}

/// The scalar text at `path` (not null).
pub(super) fn text<'a>(r: &Reader<'a>, path: &str) -> Option<&'a str> {
    let scalar = r.entry(path)?.value.as_scalar()?;
    (!scalar.is_null()).then_some(scalar.text.as_str())
}

/// A truthy value as Python sees it: a true boolean, a non-zero number, a non-empty
/// string other than the boolean words `false`/`no`/`off`/`0` (which CLI-style parsers
/// turn into False), or any list or mapping.
pub(super) fn truthy(entry: &Entry) -> bool {
    match entry.value.as_scalar() {
        Some(s) => match s.kind {
            ScalarKind::Bool(b) => b,
            ScalarKind::Int(i) => i != 0,
            ScalarKind::Float(f) => f != 0.0,
            ScalarKind::BigInt => true,
            ScalarKind::Null => false,
            ScalarKind::Str => {
                !s.text.is_empty() && !matches!(s.text.to_ascii_lowercase().as_str(), "false" | "no" | "off" | "0")
            }
        },
        None => true,
    }
}

/// Whether the entry at `path` is present and truthy.
pub(super) fn flag(r: &Reader, path: &str) -> bool {
    r.entry(path).is_some_and(truthy)
}

/// A fix that sets the value of `entry` to `value` as the file's language writes it (only
/// the value's bytes, so comments and layout survive; in a script, the literal that
/// defines it). An empty value (`key:`) gets a leading space so `key: value` stays a
/// mapping entry. None where the language cannot write the value.
pub(super) fn set_value(
    ctx: &Context,
    entry: &Entry,
    value: Literal,
    title: impl Into<String>,
    applicability: Applicability,
) -> Option<Fix> {
    let mut edit = Edit::set(entry.value.span, &value, ctx.document.language)?;
    if entry.value.span.is_empty() {
        edit.content.insert(0, ' ');
    }
    Some(Fix { title: title.into(), applicability, edits: vec![edit] })
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
    if ctx.document.language != Language::Yaml {
        return None;
    }
    let line_start = ctx.text.get(..key.start)?.rfind('\n').map_or(0, |n| n + 1);
    (line_start == key.start).then_some(line_start)
}

/// LitGPT batch settings with the script's defaults (`litgpt/finetune/*.py`,
/// `litgpt/pretrain.py` `setup`), and the world size when the file fixes it.
pub(super) struct LitgptBatch {
    pub global: u64,
    pub micro: u64,
    /// `devices * num_nodes`; None with `devices: auto`/-1 (every visible GPU).
    pub world: Option<u64>,
}

pub(super) fn litgpt_batch(format: Format, r: &Reader) -> LitgptBatch {
    let pretrain = format == Format::LitgptPretrain;
    let (global_default, micro_default) = if pretrain { (512, 4) } else { (16, 1) };
    let global = r.u64("train.global_batch_size").map_or(global_default, |g| g.value);
    let micro = r.u64("train.micro_batch_size").map_or(micro_default, |m| m.value);
    let devices = match r.i64("devices") {
        Some(d) if d.value > 0 => u64::try_from(d.value).ok(),
        Some(_) => None,
        None if r.has("devices") || pretrain => None,
        None => Some(1),
    };
    let nodes = r.u64("num_nodes").map_or(1, |n| n.value.max(1));
    LitgptBatch { global, micro, world: devices.map(|d| d.saturating_mul(nodes)) }
}

/// The GRPO batch settings of a TRL `grpo` config or an Axolotl `rl: grpo` config.
pub(super) struct GrpoBatch {
    pub axolotl: bool,
    pub per_device: u64,
    pub accumulation: u64,
    /// `num_processes` (TRL forwards it to `accelerate launch`); 1 when absent.
    pub processes: u64,
    pub num_generations: u64,
    pub generation_batch_size: Option<u64>,
    pub steps_per_generation: Option<u64>,
    /// Path of `num_generations` in the file (`num_generations` or `trl.num_generations`).
    pub num_generations_path: &'static str,
    pub generation_batch_path: &'static str,
}

/// Reads the GRPO batch settings with the frameworks' defaults; None for other configs
/// (and for Axolotl configs that leave `trl.num_generations` unset, which Axolotl does
/// not validate).
pub(super) fn grpo_batch(ctx: &Context, r: &Reader) -> Option<GrpoBatch> {
    let axolotl = ctx.format == Format::Axolotl;
    if axolotl {
        if text(r, "rl") != Some("grpo") {
            return None;
        }
        let num_generations = r.i64("trl.num_generations")?;
        return Some(GrpoBatch {
            axolotl,
            per_device: r
                .u64("micro_batch_size")
                .map_or(facts::count(Defaults::Axolotl, "micro_batch_size"), |v| v.value.max(1)),
            accumulation: r
                .u64("gradient_accumulation_steps")
                .map_or(facts::count(Defaults::Axolotl, "gradient_accumulation_steps"), |v| v.value.max(1)),
            processes: 1,
            num_generations: u64::try_from(num_generations.value).unwrap_or(0),
            generation_batch_size: r.u64("trl.generation_batch_size").map(|v| v.value),
            steps_per_generation: None,
            num_generations_path: "trl.num_generations",
            generation_batch_path: "trl.generation_batch_size",
        });
    }
    if ctx.format != Format::TrlGrpo {
        return None;
    }
    let set = |path: &str| r.u64(path).filter(|_| is_set(r, path)).map(|v| v.value);
    Some(GrpoBatch {
        axolotl,
        per_device: set("per_device_train_batch_size")
            .unwrap_or_else(|| facts::count(Defaults::Transformers, "per_device_train_batch_size")),
        accumulation: set("gradient_accumulation_steps")
            .unwrap_or_else(|| facts::count(Defaults::Transformers, "gradient_accumulation_steps")),
        processes: set("num_processes").unwrap_or(1).max(1),
        num_generations: r
            .i64("num_generations")
            .map_or(facts::count(Defaults::TrlGrpo, "num_generations"), |v| u64::try_from(v.value).unwrap_or(0)),
        generation_batch_size: set("generation_batch_size"),
        steps_per_generation: set("steps_per_generation"),
        num_generations_path: "num_generations",
        generation_batch_path: "generation_batch_size",
    })
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

/// For a TRL config file (YAML or JSON, not a script, which names its class): what an
/// unknown key leads to under the TRL release it runs with.
pub(crate) fn trl_unknown_key_outcome(ctx: &Context) -> Option<super::trl_unknown_keys::Outcome> {
    let trl = matches!(ctx.format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo);
    let config_file = matches!(ctx.document.language, crate::syntax::Language::Yaml | crate::syntax::Language::Json);
    (trl && config_file).then(|| super::trl_unknown_keys::outcome(ctx.format, ctx.versions))
}
