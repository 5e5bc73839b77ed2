//! Step 4 of model resolution: an architecture sized from the model's name, when neither a
//! local directory, the local Hugging Face cache nor the catalog knows it.
//!
//! # Reading the name
//! Only the last path component counts (`unsloth/Qwen3.5-2B` → `Qwen3.5-2B`), lowercased and
//! split on `-` and `_`. The first token that is a size ends the family part:
//! - `14b`, `0.8b`, `1.2b`, `270m`: the total parameter count;
//! - `e2b`, `e4b`: Gemma's "effective" sizes, read as that count (see below);
//! - a size followed by `a3b`, `a4b`, …: a mixture of experts, total and active counts; after
//!   a `moe` token, a second size alone (`tiny_qwen3_moe_2.8B_0.7B`).
//!
//! The tokens before the size, joined without separators (`gemma-3n` → `gemma3n`,
//! `Meta-Llama-3.1` → `metallama3.1`), name the family: the longest prefix in [`FAMILIES`]
//! wins. When none matches, the tokens from the second on are tried, then from the third, …:
//! a fine-tune is often named after its base, just before the size
//! (`OpenHermes-2.5-Mistral-7B` → `mistral`, `Sparse-Llama-3.1-8B-2of4` → `llama3.1`).
//! Everything after the size is ignored, so packaging and variant suffixes (`-Instruct`,
//! `-it`, `-bnb-4bit`, `-unsloth-bnb-4bit`, `-GGUF`, dates such as `-2512`) never matter; a
//! date before the size (`OLMo-2-1124-7B`) is part of the family tokens and matched by
//! prefix. A name without a size (`bert-base-uncased`, `Magistral-Small-2509`) or whose
//! family is not listed (`my-model-7b`) stays unknown. A stored 4-bit checkpoint
//! (`-bnb-4bit`) is recognized from the name by the Unsloth plan builder
//! (`format/python.rs`), not here.
//!
//! # Sizing
//! The family row lists the catalog families to draw from (its own, or the closest related
//! one, which the provenance states). Of their members (dense ones for a dense name,
//! mixtures of experts for an `…-A3B` name; a Mamba or linear-attention hybrid only of the
//! named family itself, such as Qwen3.5's Gated DeltaNet stacks), the one whose parameter
//! count is nearest the named one on a log scale is scaled by one factor `s`:
//! - kept: head size, vocabulary and its tying, norm, MLP kind, biases, query heads per
//!   key/value head, the sliding-window pattern (repeated over the new layer count), the
//!   context length, the ratios of MLP width and of layer count to model width, a hybrid's
//!   share of mixer layers and their head shapes, and a vision tower;
//! - scaled by `s`: layers, model width (a multiple of 64), key/value heads (query heads
//!   follow), MLP and expert widths (multiples of 64);
//! - `s` is solved by bisection so that the computed parameter count meets the named total
//!   (dense) or the named active count (mixture of experts, the member's experts per token
//!   kept); for a mixture of experts the number of experts is then set so that the total
//!   meets the named total.
//!
//! Gemma's `E2B`/`E4B` count the transformer without its per-layer embedding tables; the
//! decoder is sized to that count and the tables are not modeled. The estimate of a
//! name-sized model carries a wider band ([`NAME_SIZED_ERROR`]).

use super::models::{Architecture, MlpKind};

/// Relative error added (in quadrature) to the band of an estimate whose architecture was
/// sized from its name: the family's real shape at that size may differ from the scaled
/// catalog member (width against depth, MLP ratio, vocabulary, per-layer embeddings).
pub(crate) const NAME_SIZED_ERROR: f64 = 0.35;

/// The prefix every such architecture's `source` starts with.
pub(crate) const SOURCE_PREFIX: &str = "sized from its name";

/// One family recognized from names.
struct Family {
    label: &'static str,
    /// Prefixes of the family tokens joined without separators.
    prefixes: &'static [&'static str],
    /// Catalog families whose dense members the shape is taken from.
    dense: &'static [&'static str],
    /// Catalog families whose mixture-of-experts members the shape is taken from.
    moe: &'static [&'static str],
}

const QWEN3_MOE: &[&str] = &["qwen3-moe"];

const FAMILIES: &[Family] = &[
    Family { label: "Qwen3.5", prefixes: &["qwen3.5", "qwen3.6"], dense: &["qwen3.5"], moe: QWEN3_MOE },
    Family { label: "Qwen3", prefixes: &["qwen3"], dense: &["qwen3"], moe: QWEN3_MOE },
    Family { label: "Qwen2.5", prefixes: &["qwen2.5"], dense: &["qwen2.5"], moe: QWEN3_MOE },
    Family { label: "Qwen2", prefixes: &["qwen2"], dense: &["qwen2", "qwen2.5"], moe: QWEN3_MOE },
    Family {
        label: "Llama-3",
        prefixes: &["llama3", "metallama3"],
        dense: &["llama-3.2", "llama-3.1", "llama-3"],
        moe: QWEN3_MOE,
    },
    Family { label: "Llama-2", prefixes: &["llama2", "metallama2"], dense: &["llama-2"], moe: QWEN3_MOE },
    Family { label: "Gemma-3n", prefixes: &["gemma3n"], dense: &["gemma-3"], moe: QWEN3_MOE },
    Family { label: "Gemma-4", prefixes: &["gemma4"], dense: &["gemma-3"], moe: QWEN3_MOE },
    Family { label: "Gemma-3", prefixes: &["gemma3"], dense: &["gemma-3"], moe: QWEN3_MOE },
    Family { label: "Gemma-2", prefixes: &["gemma2"], dense: &["gemma-2"], moe: QWEN3_MOE },
    Family { label: "Gemma", prefixes: &["gemma"], dense: &["gemma"], moe: QWEN3_MOE },
    Family {
        label: "Mistral-Small",
        prefixes: &["mistralsmall", "magistral", "devstral"],
        dense: &["mistral-small"],
        moe: &["mixtral"],
    },
    Family {
        label: "Ministral",
        prefixes: &["ministral"],
        dense: &["mistral", "mistral-nemo", "mistral-small"],
        moe: &["mixtral"],
    },
    Family {
        label: "Mistral",
        prefixes: &["mistral"],
        dense: &["mistral", "mistral-nemo", "mistral-small"],
        moe: &["mixtral"],
    },
    Family { label: "Phi-4", prefixes: &["phi4"], dense: &["phi-4"], moe: QWEN3_MOE },
    Family { label: "Phi-3", prefixes: &["phi3"], dense: &["phi-3", "phi-3.5"], moe: QWEN3_MOE },
    Family { label: "OLMo", prefixes: &["olmo"], dense: &["llama-2"], moe: QWEN3_MOE },
    Family { label: "Granite", prefixes: &["granite"], dense: &["llama-3.2", "llama-3.1"], moe: QWEN3_MOE },
    Family { label: "SmolLM3", prefixes: &["smollm3"], dense: &["smollm3"], moe: QWEN3_MOE },
    Family { label: "SmolLM", prefixes: &["smollm"], dense: &["smollm2"], moe: QWEN3_MOE },
    Family { label: "LFM2", prefixes: &["lfm2"], dense: &["llama-3.2"], moe: QWEN3_MOE },
    Family { label: "ERNIE-4.5", prefixes: &["ernie"], dense: &["qwen3"], moe: QWEN3_MOE },
    Family { label: "GLM", prefixes: &["glm", "chatglm"], dense: &["qwen3"], moe: QWEN3_MOE },
    Family {
        label: "Nemotron",
        prefixes: &["nemotron", "nvidianemotron", "llama3.1nemotron", "llama3.3nemotron"],
        dense: &["llama-3.1"],
        moe: QWEN3_MOE,
    },
];

/// The parameter counts a name gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NamedSize {
    pub(crate) total: u64,
    /// Active parameters per token of a mixture of experts (`…-30B-A3B`).
    pub(crate) active: Option<u64>,
    /// A Gemma "effective" size (`E4B`).
    pub(crate) effective: bool,
}

/// Why a name gives no architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NameMiss {
    /// No size token.
    NoSize,
    /// A size, but family tokens oomlint does not know.
    UnknownFamily,
}

impl NameMiss {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            NameMiss::NoSize => "its name gives no size",
            NameMiss::UnknownFamily => "its name names no family oomlint knows",
        }
    }
}

/// A hub id's last component, lowercased (`unsloth/Qwen3.5-2B` → `qwen3.5-2b`).
fn bare_lowercase(name: &str) -> String {
    let lower = name.trim().trim_end_matches('/').to_lowercase();
    lower.rsplit('/').next().unwrap_or_default().to_string()
}

/// The `-`/`_`-separated parts of a lowercased name.
fn tokens(bare: &str) -> Vec<&str> {
    bare.split(['-', '_']).filter(|t| !t.is_empty()).collect()
}

/// The family and size a model name gives.
fn parse(name: &str) -> Result<(&'static Family, NamedSize), NameMiss> {
    let lower = bare_lowercase(name);
    let tokens = tokens(&lower);
    let (at, size) =
        tokens.iter().enumerate().find_map(|(i, t)| size_token(t).map(|s| (i, s))).ok_or(NameMiss::NoSize)?;
    let (total, effective) = size;
    // `30B-A3B`; after a `moe` token the second size needs no `A` (`tiny_qwen3_moe_2.8B_0.7B`).
    let moe_named = tokens[..at].contains(&"moe");
    let active = tokens.get(at + 1).and_then(|t| t.strip_prefix('a').or(moe_named.then_some(*t))).and_then(count);
    // The whole family part first; then from each later token on, for a fine-tune named after
    // its base (`OpenHermes-2.5-Mistral-7B`, `Skywork-Reward-V2-Qwen3-8B`).
    let family = (0..at)
        .find_map(|start| {
            let stem: String = tokens[start..at].concat();
            FAMILIES
                .iter()
                .flat_map(|f| f.prefixes.iter().map(move |p| (f, *p)))
                .filter(|(_, p)| stem.starts_with(p))
                .max_by_key(|(_, p)| p.len())
                .map(|(f, _)| f)
        })
        .ok_or(NameMiss::UnknownFamily)?;
    let active = active.filter(|a| *a < total);
    Ok((family, NamedSize { total, active, effective }))
}

/// `14b`, `0.8b`, `270m` → the count; `e4b` → the count, effective.
fn size_token(token: &str) -> Option<(u64, bool)> {
    match token.strip_prefix('e') {
        Some(rest) => count(rest).map(|n| (n, true)),
        None => count(token).map(|n| (n, false)),
    }
}

/// `14b` → 14·10⁹, `0.8b` → 8·10⁸, `270m` → 2.7·10⁸; anything else None.
fn count(token: &str) -> Option<u64> {
    let (number, unit) = match token.as_bytes().last()? {
        b'b' => (&token[..token.len() - 1], 1e9),
        b'm' => (&token[..token.len() - 1], 1e6),
        _ => return None,
    };
    let digits_ok = !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && number.as_bytes()[0].is_ascii_digit()
        && number.bytes().filter(|b| *b == b'.').count() <= 1;
    if !digits_ok {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let n = value * unit;
    // Below 10 M or above 10 T is no language model size.
    (1e7..=1e13).contains(&n).then_some(n.round() as u64)
}

/// The architecture `name` gives (step 4 of the resolution ladder), or why there is none.
pub(crate) fn size_from_name(name: &str) -> Result<Architecture, NameMiss> {
    let (family, size) = parse(name)?;
    let (sources, moe) = match size.active {
        Some(_) => (family.moe, true),
        None => (family.dense, false),
    };
    let target = size.total as f64;
    let own_family = |m: &Architecture| m.family.eq_ignore_ascii_case(family.label);
    let member = super::models::catalog_models()
        .iter()
        .filter(|m| sources.contains(&m.family.as_str()))
        .filter(|m| (m.mlp == MlpKind::Moe) == moe && (m.n_mamba_layers == 0 || own_family(m)))
        .min_by(|a, b| log_distance(a, target).total_cmp(&log_distance(b, target)))
        .ok_or(NameMiss::UnknownFamily)?;
    let mut arch = match size.active {
        Some(active) => scale_moe(member, size.total, active),
        None => scale_to(member, target, |a| a.parameter_count()),
    };
    let related = if sources.iter().any(|s| s.eq_ignore_ascii_case(family.label)) {
        String::new()
    } else {
        format!(", of the closest related family {}", member.family)
    };
    let effective = if size.effective { "; an effective size, per-layer embeddings not modeled" } else { "" };
    arch.source = format!(
        "{SOURCE_PREFIX} (family {}, nearest catalog member {}{related}; scaled to {} parameters{effective})",
        family.label,
        member.name,
        billions(arch.parameters)
    );
    arch.name = name.trim().to_string();
    arch.hf_id = None;
    arch.aliases = Vec::new();
    arch.sized_from_name = true;
    Ok(arch)
}

/// Step 4 for a name without a size: a dated release (`Magistral-Small-2509`) whose name,
/// the date aside, is a catalog model's (`Magistral-Small-2506`), with at most packaging
/// after the date (`-unsloth-bnb-4bit`, `-GGUF`). The catalog's release of the closest date
/// gives the shape, flagged as sized from the name (a later release may add a vision
/// encoder, which is not counted).
pub(crate) fn another_release(name: &str) -> Option<Architecture> {
    let (stem, date) = dated(name)?;
    let member = super::models::catalog_models()
        .iter()
        .filter_map(|m| dated(&m.name).filter(|(s, _)| *s == stem).map(|(_, d)| (m, d.abs_diff(date))))
        .min_by_key(|(_, distance)| *distance)?
        .0;
    let mut arch = member.clone();
    arch.source = format!(
        "{SOURCE_PREFIX} (another release of {}, the catalog's of the same name; what the newer release adds, \
         such as a vision encoder, is not counted)",
        member.name
    );
    arch.name = name.trim().to_string();
    arch.hf_id = None;
    arch.aliases = Vec::new();
    arch.sized_from_name = true;
    Some(arch)
}

/// `magistral-small-2509-unsloth-bnb-4bit` → (`magistral-small`, 2509): the tokens before a
/// `YYMM` date, when only packaging tokens follow it.
fn dated(name: &str) -> Option<(String, u32)> {
    let lower = bare_lowercase(name);
    let tokens = tokens(&lower);
    let at = tokens.iter().position(|t| {
        t.len() == 4 && t.bytes().all(|b| b.is_ascii_digit()) && (1..=12).contains(&t[2..].parse::<u32>().unwrap_or(0))
    })?;
    let packaging = ["unsloth", "bnb", "4bit", "8bit", "gguf", "awq", "gptq", "fp8"];
    if at == 0 || !tokens[at + 1..].iter().all(|t| packaging.contains(t)) {
        return None;
    }
    Some((tokens[..at].join("-"), tokens[at].parse().ok()?))
}

fn billions(n: u64) -> String {
    format!("{:.2} B", n as f64 / 1e9)
}

fn log_distance(member: &Architecture, target: f64) -> f64 {
    ((member.parameter_count().max(1) as f64) / target).ln().abs()
}

/// `member` scaled by the factor whose `measure` is nearest `target` (bisection on log s).
fn scale_to(member: &Architecture, target: f64, measure: impl Fn(&Architecture) -> u64) -> Architecture {
    // The shape is whole numbers, so 32 halvings of the log range are more than enough; one
    // working copy is rescaled in place (the search measures parameters only).
    let (mut low, mut high) = (0.02f64.ln(), 50f64.ln());
    let mut work = member.clone();
    for _ in 0..32 {
        let mid = (low + high) / 2.0;
        rescale(&mut work, member, mid.exp());
        if (measure(&work) as f64) < target {
            low = mid;
        } else {
            high = mid;
        }
    }
    let (a, b) = (scaled(member, low.exp()), scaled(member, high.exp()));
    let off = |x: &Architecture| (measure(x) as f64 - target).abs();
    let mut best = if off(&a) <= off(&b) { a } else { b };
    best.parameters = best.parameter_count();
    best
}

/// A mixture of experts: width and depth for the active count, then the expert count for
/// the total.
fn scale_moe(member: &Architecture, total: u64, active: u64) -> Architecture {
    let mut arch = scale_to(member, active as f64, Architecture::active_parameter_count);
    let without = arch.parameter_count_with_experts(0);
    let per_expert = arch.parameter_count_with_experts(1).saturating_sub(without).max(1);
    let experts = (total.saturating_sub(without) as f64 / per_expert as f64).round() as u64;
    arch.n_expert = experts.clamp(arch.n_expert_per_token.max(1), 4096);
    arch.parameters = arch.parameter_count();
    arch
}

/// `member` with depth, width, heads and MLP widths scaled by `s` (module docs).
fn scaled(member: &Architecture, s: f64) -> Architecture {
    let mut a = member.clone();
    rescale(&mut a, member, s);
    a.sliding_window_layers = member
        .sliding_window_layers
        .as_ref()
        .filter(|p| !p.is_empty())
        .map(|p| p.chars().cycle().take(a.n_layer as usize).collect());
    a
}

/// The sizes of `a` set to `member`'s scaled by `s` (the parameter count depends on these only).
fn rescale(a: &mut Architecture, member: &Architecture, s: f64) {
    let round = |x: u64, multiple: u64| -> u64 {
        let m = multiple as f64;
        (((x as f64 * s) / m).round() as u64).max(1).saturating_mul(multiple)
    };
    // A hybrid's layers come in whole repeats of its pattern (Qwen3.5: three Gated DeltaNet
    // layers and one attention layer), so its mixers keep their share and their head shapes.
    let repeats = gcd(member.n_layer, member.n_mamba_layers).max(1);
    let unit = (member.n_layer / repeats).max(1);
    a.n_layer = ((member.n_layer as f64 * s / unit as f64).round() as u64).max(1) * unit;
    a.n_mamba_layers = a.n_layer / unit * (member.n_mamba_layers / repeats);
    a.n_embd = round(member.n_embd, 64);
    let groups = member.n_query_groups.max(1);
    if member.n_head.is_multiple_of(groups) {
        a.n_query_groups = ((groups as f64 * s).round() as u64).max(1);
        a.n_head = a.n_query_groups.saturating_mul(member.n_head / groups);
    } else {
        a.n_head = ((member.n_head as f64 * s).round() as u64).max(1);
        a.n_query_groups = groups.min(a.n_head);
    }
    a.intermediate_size = round(member.intermediate_size, 64);
    a.moe_intermediate_size = member.moe_intermediate_size.map(|w| round(w, 64));
    a.shared_expert_intermediate_size = member.shared_expert_intermediate_size.map(|w| round(w, 64));
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Whether the catalog alone resolves `name` (for tests).
#[cfg(test)]
fn in_catalog(name: &str) -> bool {
    super::models::resolve_model(name).is_ok()
}

#[cfg(test)]
mod tests;
