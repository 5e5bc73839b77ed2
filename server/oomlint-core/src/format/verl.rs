//! verl (`python3 -m verl.trainer.main_ppo key=value …`, also behind `ray job submit -- …`,
//! and `verl.trainer.fsdp_sft_trainer`): the config Hydra composes from the trainer's defaults
//! tree and the script's overrides, read into the plan.
//!
//! The defaults are `verl/defaults.tsv`, generated from a verl checkout by
//! `schema/tools/verl_defaults.py` (the flattened `_generated_ppo_trainer.yaml`,
//! `_generated_ppo_megatron_trainer.yaml`, and `sft_trainer.yaml` with its defaults list).
//! Overrides follow Hydra's grammar (`hydra/core/override_parser`): `key=value` sets a key of
//! the tree, `+key=value` adds one, `++key=value` adds or sets, `~key` deletes a key and
//! everything under it; `--config-name NAME` picks the trainer config. Interpolations are
//! resolved as OmegaConf does: `${a.b}`, `${.sibling}` and `${oc.select:a.b,default}` (the key's
//! value unless missing or null). A word the script computes at run time leaves its key
//! unknown, never the default.

use super::axolotl::model_ref;
use super::hf_names::lora_targets;
use crate::plan::{
    Attention, Checkpointing, Dtype, Framework, LoraPlan, LossImpl, Method, Optimizer, Origin, Plan, Precision,
    RlAlgorithm, RlPhases, RlPlan, Sharding, Sourced, TensorParallel, TpLayout, VerlSettings, VllmMode, VllmPlan,
    WeightSync,
};
use crate::span::Span;
use crate::syntax::shell::Word;
use crate::syntax::{Entry, Mapping, Node, Scalar, ScalarKind, ScalarStyle, Value};
use std::collections::BTreeMap;

/// verl's defaults, one `config \t key \t value` row per leaf (see the module doc).
const DEFAULTS: &str = include_str!("verl/defaults.tsv");

/// The release the table was generated from, for the origin of a default.
fn release() -> &'static str {
    DEFAULTS.lines().next().and_then(|l| l.strip_prefix("# ")).and_then(|l| l.split(" (").next()).unwrap_or("verl")
}

/// The key under which an override word the script computes at run time is kept.
const COMPUTED: &str = "";
/// The key under which `--config-name` is kept.
const CONFIG_NAME: &str = "--config-name";
/// The key under which the module the command runs is kept.
const MODULE: &str = "-m";

/// Hydra overrides of a verl command line as a flat mapping: each entry's key is the override
/// as written before `=` (`+a.b`, `~a.b`), in order; words not known statically are kept
/// under [`COMPUTED`] with their span, as the script's text there says which key they set.
pub(crate) fn overrides(module: &Word, words: &[Word]) -> Mapping {
    let mut out = Mapping::default();
    let mut push = |key: String, key_span: Span, text: String, span: Span| {
        let scalar = Scalar { text, style: ScalarStyle::Plain, kind: ScalarKind::Str };
        out.entries.push(Entry { key, key_span, value: Node { span, value: Value::Scalar(scalar) } });
    };
    push(MODULE.into(), module.span, module.text.clone().unwrap_or_default(), module.span);
    let mut i = 0;
    while let Some(w) = words.get(i) {
        i += 1;
        let Some(t) = w.text.as_deref() else {
            push(COMPUTED.into(), w.span, String::new(), w.span);
            continue;
        };
        if let Some(name) = t.strip_prefix("--config-name").or_else(|| t.strip_prefix("-cn")) {
            let value = match name.strip_prefix('=') {
                Some(v) => Some((v.to_string(), w.span)),
                None if name.is_empty() => words.get(i).and_then(|n| Some((n.text.clone()?, n.span))),
                None => None,
            };
            if let Some((v, span)) = value {
                i += usize::from(name.is_empty());
                push(CONFIG_NAME.into(), w.span, v, span);
            }
            continue;
        }
        if t.starts_with('-') {
            continue;
        }
        match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                let start = w.span.start + t.len() - v.len();
                push(k.to_string(), w.span, v.to_string(), Span::new(start.min(w.span.end), w.span.end));
            }
            None if t.starts_with('~') => push(t.to_string(), w.span, String::new(), w.span),
            _ => {}
        }
    }
    out
}

/// One resolved value: its text as written (None: null) and where it came from.
#[derive(Clone)]
struct Setting {
    text: Option<String>,
    origin: Origin,
}

/// The composed config: every key of the trainer's defaults, with the overrides applied.
pub(crate) struct Config {
    values: BTreeMap<String, Setting>,
    /// `ppo_trainer`, `ppo_megatron_trainer` or `sft_trainer`.
    trainer: &'static str,
}

fn unquote(text: &str) -> &str {
    let t = text.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    t
}

impl Config {
    /// The defaults of `trainer` with the script's overrides (`flags`, from [`overrides`]);
    /// `text` is the script, for the keys of words computed at run time.
    fn compose(trainer: &'static str, flags: &Mapping, text: &str) -> Config {
        let source = DEFAULTS.lines().find_map(|l| l.strip_prefix(&format!("# {trainer}: "))).unwrap_or(trainer);
        let of = format!("{} {source}", release());
        let values = DEFAULTS
            .lines()
            .filter_map(|l| l.strip_prefix(trainer)?.strip_prefix('\t')?.split_once('\t'))
            .map(|(k, v)| {
                let text = (!matches!(v, "null" | "~")).then(|| v.to_string());
                (k.to_string(), Setting { text, origin: Origin::Default { of: of.clone().into() } })
            })
            .collect();
        let mut config = Config { values, trainer };
        for e in &flags.entries {
            let Some(node) = e.value.as_scalar() else { continue };
            let (key, setting) = if e.key == COMPUTED {
                let raw = text.get(e.key_span.start..e.key_span.end).unwrap_or("");
                let Some((k, _)) = raw.split_once('=') else { continue };
                let why = format!("`{}` is computed when the script runs", raw.trim());
                (k.to_string(), Setting { text: None, origin: Origin::Unknown { why } })
            } else if e.key == CONFIG_NAME || e.key == MODULE {
                continue;
            } else {
                let value = unquote(&node.text);
                let text = (!matches!(value, "null" | "~")).then(|| value.to_string());
                (e.key.clone(), Setting { text, origin: Origin::File { key: e.key_span, value: e.value.span } })
            };
            let key = key.trim_start_matches(['+', '~']).to_string();
            if e.key.starts_with('~') {
                let prefix = format!("{key}.");
                config.values.retain(|k, _| *k != key && !k.starts_with(&prefix));
            } else {
                config.values.insert(key, setting);
            }
        }
        config
    }

    /// The setting at `key`, interpolations resolved (at most a few levels deep).
    fn setting(&self, key: &str) -> Option<Setting> {
        self.resolve(key, 0)
    }

    fn resolve(&self, key: &str, depth: u8) -> Option<Setting> {
        let s = self.values.get(key)?.clone();
        let Some(inner) = s.text.as_deref().and_then(|t| t.strip_prefix("${")).and_then(|t| t.strip_suffix('}')) else {
            return Some(s);
        };
        if depth > 8 {
            return None;
        }
        let parent = key.rsplit_once('.').map_or("", |(p, _)| p);
        let absolute = |k: &str| match k.strip_prefix('.') {
            Some(rel) if parent.is_empty() => rel.to_string(),
            Some(rel) => format!("{parent}.{rel}"),
            None => k.to_string(),
        };
        let (target, fallback) = match inner.strip_prefix("oc.select:") {
            Some(args) => match args.split_once(',') {
                Some((k, d)) => (absolute(k.trim()), Some(d.trim())),
                None => (absolute(args.trim()), None),
            },
            None => (absolute(inner.trim()), None),
        };
        match self.resolve(&target, depth + 1) {
            Some(found) if found.text.is_some() || fallback.is_none() => Some(found),
            Some(found) if matches!(found.origin, Origin::Unknown { .. }) => Some(found),
            _ => {
                let text = fallback.filter(|d| !matches!(*d, "null" | "~")).map(|d| unquote(d).to_string());
                Some(Setting { text, origin: s.origin })
            }
        }
    }

    /// The value at `key` parsed as `T`; None inside for null, a missing key or a value that
    /// does not parse (the origin says which for computed words).
    fn get<T>(&self, key: &str, parse: impl Fn(&str) -> Option<T>) -> Sourced<Option<T>> {
        match self.setting(key) {
            Some(Setting { text, origin }) => Sourced { value: text.as_deref().and_then(parse), origin },
            None => Sourced::unknown(None, format!("{key} is not in verl's {} config", self.trainer)),
        }
    }

    fn int(&self, key: &str) -> Sourced<Option<u64>> {
        self.get(key, |t| t.parse::<f64>().ok().filter(|v| *v >= 0.0 && v.fract() == 0.0).map(|v| v as u64))
    }

    fn float(&self, key: &str) -> Sourced<Option<f64>> {
        self.get(key, |t| t.parse().ok())
    }

    fn bool(&self, key: &str) -> Sourced<Option<bool>> {
        self.get(key, super::read::cli_bool)
    }

    fn string(&self, key: &str) -> Sourced<Option<String>> {
        self.get(key, |t| Some(t.to_string()).filter(|t| t != "???"))
    }
}

/// A value that is known (set or defaulted), not computed by the script.
fn known<T>(s: Sourced<Option<T>>) -> Option<Sourced<T>> {
    let Sourced { value, origin } = s;
    value.map(|value| Sourced { value, origin })
}

/// The keys of `trainer`'s config an override sets, each with its default as the config
/// writes it (`null` for none), in the table's order: what a launch script completes.
pub(crate) fn defaults(trainer: &str) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    DEFAULTS.lines().filter_map(move |l| l.strip_prefix(trainer)?.strip_prefix('\t')?.split_once('\t'))
}

/// The release and the config file `trainer`'s defaults were read from
/// (`verl 0.8.0.dev`, `verl/trainer/config/_generated_ppo_trainer.yaml`).
pub(crate) fn defaults_source(trainer: &str) -> (&'static str, &'static str) {
    let file = DEFAULTS.lines().find_map(|l| l.strip_prefix("# ")?.strip_prefix(trainer)?.strip_prefix(": "));
    (release(), file.unwrap_or("verl/trainer/config"))
}

/// The trainer configs of the table, the PPO trainer's first.
pub(crate) const TRAINERS: [&str; 3] = ["ppo_trainer", "ppo_megatron_trainer", "sft_trainer"];

/// The trainer config `--config-name` picks (the PPO trainer's by default).
pub(crate) fn trainer(flags: &Mapping) -> &'static str {
    let value = |key: &str| flags.entries.iter().rev().find(|e| e.key == key).and_then(|e| e.value.as_scalar());
    let module = value(MODULE).map_or("", |s| s.text.as_str());
    match value(CONFIG_NAME).map(|s| unquote(&s.text)) {
        _ if module.ends_with("sft_trainer") => "sft_trainer",
        Some(n) if n.contains("megatron") => "ppo_megatron_trainer",
        _ => "ppo_trainer",
    }
}

/// The plan of a verl command line, read by [`overrides`] into `flags`.
pub(crate) fn plan(flags: &Mapping, text: &str) -> Plan {
    let trainer = trainer(flags);
    let config = Config::compose(trainer, flags, text);
    if trainer == "sft_trainer" {
        sft_plan(&config)
    } else {
        let command = flags.entries.iter().find(|e| e.key == MODULE).map_or(Span::new(0, 0), |e| e.key_span);
        ppo_plan(&config, command)
    }
}

fn product(a: Sourced<Option<u64>>, b: &Sourced<Option<u64>>, what: &str) -> Sourced<Option<u64>> {
    match (a.value, b.value) {
        (Some(x), Some(y)) => Sourced::derived(Some(x * y), what),
        _ => Sourced { value: None, origin: if a.value.is_none() { a.origin } else { b.origin.clone() } },
    }
}

fn common(config: &Config, prefix: &str, plan: &mut Plan) {
    let model_path = if config.trainer == "sft_trainer" { "model.partial_pretrain" } else { "model.path" };
    plan.model = known(config.string(&format!("{prefix}{model_path}"))).map(|m| m.map(|t| model_ref(&t)));
    plan.devices = known(config.int("trainer.n_gpus_per_node"));
    plan.num_nodes = known(config.int("trainer.nnodes"));
    plan.gradient_checkpointing = known(config.bool(&format!("{prefix}model.enable_gradient_checkpointing")))
        .map(|s| s.map(|on| if on { Checkpointing::Full } else { Checkpointing::None }));
    // Ulysses splits each sequence over this many ranks (the actor's, or the SFT trainer's).
    let ulysses = if prefix.is_empty() {
        "ulysses_sequence_parallel_size".to_string()
    } else {
        format!("{prefix}actor.ulysses_sequence_parallel_size")
    };
    plan.sequence_parallel = known(config.int(&ulysses)).filter(|n| n.value > 1);
    plan.optimizer = Some(Sourced::default_of(Optimizer::AdamW, "verl FSDPOptimizerConfig optimizer: AdamW"));
    // FSDP keeps fp32 parameters (`fsdp_config.model_dtype: fp32`) and computes in bf16
    // (`mixed_precision.param_dtype`, `verl/workers/fsdp_workers.py` `_build_model_optimizer`).
    plan.precision = Some(Sourced::default_of(Precision::Mixed(Dtype::Bf16), "verl FSDP mixed precision"));
    plan.load_dtype = Some(Sourced::default_of(Dtype::F32, "verl fsdp_config.model_dtype fp32"));
    let rank = known(config.int(&format!("{prefix}model.lora_rank"))).filter(|r| r.value > 0);
    if let Some(rank) = rank {
        let targets = config.get(&format!("{prefix}model.target_modules"), |t| {
            let names: Vec<String> = unquote(t)
                .trim_matches(['[', ']'])
                .split(',')
                .map(|n| unquote(n).to_string())
                .filter(|n| !n.is_empty())
                .collect();
            Some(lora_targets(&names))
        });
        let alpha = known(config.float(&format!("{prefix}model.lora_alpha")))
            .unwrap_or_else(|| Sourced::default_of(16.0, "verl lora_alpha"));
        let targets =
            known(targets).unwrap_or_else(|| Sourced::default_of(lora_targets(&["all-linear".into()]), "verl"));
        plan.method = Some(Sourced::derived(Method::Lora, "model.lora_rank > 0"));
        plan.lora =
            Some(LoraPlan { rank, alpha, dropout: Sourced::default_of(0.0, "verl (no LoRA dropout key)"), targets });
    } else {
        plan.method = Some(Sourced::derived(Method::Full, "model.lora_rank is 0"));
    }
}

fn ppo_plan(config: &Config, command: Span) -> Plan {
    let mut plan = Plan::new(Framework::Verl);
    plan.command = Some("main_ppo".into());
    common(config, "actor_rollout_ref.", &mut plan);
    let actor = |k: &str| format!("actor_rollout_ref.actor.{k}");
    let rollout = |k: &str| format!("actor_rollout_ref.rollout.{k}");
    let megatron = config.trainer == "ppo_megatron_trainer";
    let settings = VerlSettings::read(config, command);
    let prompt = config.int("data.max_prompt_length");
    let response = config.int("data.max_response_length");
    let seq = match (prompt.value, response.value) {
        (Some(p), Some(r)) => Some(Sourced::derived(p + r, "data.max_prompt_length + data.max_response_length")),
        _ => None,
    };
    if settings.dynamic_bsz.value == Some(true) {
        // Micro batches are packed up to `ppo_max_token_len_per_gpu` tokens (`verl/utils/seqlen_balancing.py`
        // `rearrange_micro_batches`).
        plan.micro_batch_size = Some(Sourced::derived(1, "use_dynamic_bsz: one packed sequence per micro batch"));
        plan.max_seq_length = known(config.int(&actor("ppo_max_token_len_per_gpu")));
        plan.packing = Some(settings.dynamic_bsz.clone().map(|_| true));
    } else {
        plan.micro_batch_size = known(micro_per_gpu(&settings));
        plan.gradient_accumulation = accumulation(&settings);
        plan.max_seq_length = seq;
        plan.padding_free = known(settings.remove_padding.clone());
    }
    plan.sharding = Some(if megatron {
        // `verl/utils/megatron_utils.py` `make_megatron_module`: `use_distributed_optimizer`
        // (default true) and `grad_reduce_in_fp32=True`.
        config
            .bool(&actor("megatron.use_distributed_optimizer"))
            .map(|d| Sharding::Megatron { distributed_optimizer: d.unwrap_or(true) })
    } else {
        Sourced::derived(Sharding::Fsdp { full_shard: true, offload_params: false }, "verl FSDP actor (FULL_SHARD)")
    });
    plan.algorithm = Some(Sourced::derived(RlAlgorithm::Grpo, "verl PPO trainer (policy-gradient actor)"));
    let need_ref = settings.need_reference.value.unwrap_or(false);
    plan.reference_model = Some(Sourced::derived(need_ref, "actor.use_kl_loss or algorithm.use_kl_in_reward"));
    let engine = settings.rollout_name.value.as_deref();
    let vllm = matches!(engine, Some("vllm" | "sglang")).then(|| VllmPlan {
        mode: Sourced::derived(VllmMode::Colocate, "verl hybrid engine: rollout colocated with the actor"),
        gpu_memory_utilization: known(config.float(&rollout("gpu_memory_utilization")))
            .unwrap_or_else(|| Sourced::unknown(0.5, "gpu_memory_utilization is computed at run time")),
        fraction_of_free: false,
        enable_sleep_mode: known(config.bool(&rollout("free_cache_engine")))
            .unwrap_or_else(|| Sourced::unknown(true, "free_cache_engine is computed at run time")),
    });
    let rl_n = known(settings.rollout_n.clone()).unwrap_or_else(|| Sourced::unknown(1, "rollout.n unknown"));
    let kl = known(config.float(&actor("kl_loss_coef"))).unwrap_or_else(|| Sourced::unknown(0.0, "kl_loss_coef"));
    let response_tokens = response.value;
    plan.rl = match (known(prompt), known(response)) {
        (Some(p), Some(r)) => Some(RlPlan {
            num_generations: rl_n,
            max_prompt_length: Some(p.clone()),
            prompt_length: p,
            max_completion_length: r,
            generation_batch_size: None,
            steps_per_generation: None,
            beta: kl,
            vllm,
        }),
        _ => None,
    };
    plan.loss = Some(log_prob_loss(config, plan.padding_free.as_ref().is_some_and(|p| !p.value), response_tokens));
    // `fsdp_workers.py` `_build_model_optimizer`: `override_config.get("attn_implementation", "flash_attention_2")`.
    plan.attention = Some(Sourced::default_of(Attention::Flash, "verl attn_implementation flash_attention_2"));
    plan.rl_phases = Some(rl_phases(config, &settings, plan.max_seq_length.as_ref().map(|s| s.value)));
    if megatron {
        megatron_parallelism(config, &settings, &mut plan);
    }
    plan.verl = Some(settings);
    plan
}

/// The Megatron actor's tensor and context parallelism (`actor.megatron.*`, which
/// `workers/megatron_workers.py` hands to `mpu.initialize_model_parallel`): the block linears,
/// the vocabulary-parallel embedding and output layer split over `tensor_model_parallel_size`
/// ranks (with `sequence_parallel`, the norms' activations too), and each sequence over
/// `context_parallel_size` ranks.
fn megatron_parallelism(config: &Config, settings: &VerlSettings, plan: &mut Plan) {
    let [tp, pp, cp, ep] = &settings.megatron_sizes;
    plan.pipeline_parallel = pp.clone().filter(|n| n.value > 1);
    plan.expert_parallel = ep.clone().filter(|n| n.value > 1);
    plan.expert_tensor_parallel =
        known(config.int("actor_rollout_ref.actor.megatron.expert_tensor_parallel_size")).filter(|n| n.value > 0);
    // Megatron keeps its parameters in `megatron.dtype` (bfloat16), the fp32 copies in the optimizer.
    plan.load_dtype = Some(match known(config.string("actor_rollout_ref.actor.megatron.dtype")) {
        Some(d) if d.value == "float32" || d.value == "fp32" => d.map(|_| Dtype::F32),
        Some(d) if d.value == "float16" || d.value == "fp16" => d.map(|_| Dtype::F16),
        Some(d) => d.map(|_| Dtype::Bf16),
        None => Sourced::default_of(Dtype::Bf16, "verl actor.megatron.dtype bfloat16"),
    });
    let sequence_parallel =
        known(config.bool("actor_rollout_ref.actor.megatron.sequence_parallel")).is_some_and(|s| s.value);
    plan.tensor_parallel = tp
        .clone()
        .filter(|n| n.value > 1)
        .map(|n| n.map(|size| TensorParallel { size: Some(size), layout: TpLayout::Megatron { sequence_parallel } }));
    if plan.sequence_parallel.is_none() {
        plan.sequence_parallel = cp.clone().filter(|n| n.value > 1);
    }
}

/// A deprecated global micro batch (`ppo_micro_batch_size`, `log_prob_micro_batch_size`) per
/// GPU: `fsdp_workers.py` `ActorRolloutRefWorker.__init__` divides it by the data-parallel size
/// (`//= device_mesh.size() // ulysses_sequence_parallel_size`) and makes the result the
/// `*_micro_batch_size_per_gpu` (unlike the mini batch, not multiplied by `rollout.n`).
fn legacy_per_gpu(global: &Sourced<Option<u64>>, settings: &VerlSettings) -> Sourced<Option<u64>> {
    match (global.value, data_parallel(settings)) {
        (Some(m), Some(r)) if r > 0 => Sourced::derived(Some(m / r), "global micro batch ÷ data-parallel ranks"),
        _ => Sourced { value: None, origin: global.origin.clone() },
    }
}

/// The actor's data-parallel ranks, which its worker divides the batches by: the GPUs over the
/// Ulysses size (`fsdp_workers.py`), or over tensor × pipeline × context parallelism for
/// Megatron (`megatron_workers.py`: `mpu.get_data_parallel_world_size()`).
fn data_parallel(settings: &VerlSettings) -> Option<u64> {
    let gpus = settings.n_gpus.value?;
    let divisor = if settings.strategy.value.as_deref() == Some("megatron") {
        let [tp, pp, cp, _] = &settings.megatron_sizes;
        [tp, pp, cp].iter().map(|s| s.as_ref().map_or(1, |n| n.value.max(1))).product()
    } else {
        settings.ulysses.value.unwrap_or(1).max(1)
    };
    Some(gpus / divisor)
}

/// The actor's micro batch per GPU: `ppo_micro_batch_size_per_gpu`, or the deprecated global
/// `ppo_micro_batch_size` divided as `fsdp_workers.py` does ([`legacy_per_gpu`]).
fn micro_per_gpu(settings: &VerlSettings) -> Sourced<Option<u64>> {
    if settings.micro_per_gpu.value.is_some() {
        return settings.micro_per_gpu.clone();
    }
    if settings.micro_batch.value.is_some() {
        return legacy_per_gpu(&settings.micro_batch, settings);
    }
    settings.micro_per_gpu.clone()
}

/// Micro batches per optimizer step, as `fsdp_workers.py` (and `megatron_workers.py`) normalise
/// the mini batch (`ppo_mini_batch_size *= rollout.n`, `//=` the data-parallel ranks) and
/// `dp_actor.py` `update_policy` splits it (`mini_batch.split(ppo_micro_batch_size_per_gpu)`):
/// the gradients are kept across them.
fn accumulation(settings: &VerlSettings) -> Option<Sourced<u64>> {
    let n = settings.rollout_n.value?;
    let ranks = data_parallel(settings)?;
    let micro = micro_per_gpu(settings).value.filter(|m| *m > 0)?;
    let per_rank = settings.mini_batch.value? * n / ranks.max(1);
    Some(Sourced::derived(
        (per_rank / micro).max(1),
        "ppo_mini_batch_size × rollout.n ÷ data-parallel ranks ÷ ppo_micro_batch_size_per_gpu",
    ))
}

/// The actor's log-probabilities in the update (`dp_actor.py` `update_policy` →
/// `_forward_micro_batch`): flash-attn's cross-entropy over the logits of every token, the
/// gradient in place unless the entropy is taken too (`calculate_entropy = calculate_entropy or
/// entropy_coeff != 0`); with `use_fused_kernels` no `[T, V]` logits.
fn log_prob_loss(config: &Config, padded: bool, response: Option<u64>) -> Sourced<LossImpl> {
    let actor = |k: &str| format!("actor_rollout_ref.actor.{k}");
    let on = |k: &str| config.bool(&actor(k)).value == Some(true);
    let fused = on("use_fused_kernels");
    let entropy = on("calculate_entropy") || config.float(&actor("entropy_coeff")).value.is_some_and(|c| c != 0.0);
    // Eager `entropy_from_logits` saves its softmax for backward; compiled (`use_torch_compile`),
    // chunked or checkpointed, only the logits' own gradient is certain.
    let eager = !on("use_torch_compile") && !on("entropy_from_logits_with_chunking") && !on("entropy_checkpointing");
    let entropy_copies = match (entropy, eager) {
        (false, _) => 0,
        (true, false) => 1,
        (true, true) => 2,
    };
    Sourced::derived(
        LossImpl::TokenLogProbs { fused, entropy_copies, response_copy: response.filter(|_| padded) },
        "verl dp_actor.py _forward_micro_batch (logprobs_from_logits)",
    )
}

/// The no-grad log-prob passes (`fsdp_workers.py` `compute_log_prob`, `compute_ref_log_prob`):
/// micro batches of `log_prob_micro_batch_size_per_gpu` sequences, or up to
/// `log_prob_max_token_len_per_gpu` tokens with `log_prob_use_dynamic_bsz`; the actor's pass
/// takes the entropy unless it runs as the LoRA reference.
fn rl_phases(config: &Config, settings: &VerlSettings, seq: Option<u64>) -> RlPhases {
    let need_ref = settings.need_reference.value == Some(true);
    let sections: &[&str] =
        if need_ref { &["actor_rollout_ref.rollout", "actor_rollout_ref.ref"] } else { &["actor_rollout_ref.rollout"] };
    let log_prob_tokens = sections
        .iter()
        .filter_map(|section| {
            let key = |k: &str| format!("{section}.{k}");
            if config.bool(&key("log_prob_use_dynamic_bsz")).value == Some(true) {
                return known(config.int(&key("log_prob_max_token_len_per_gpu")));
            }
            let micro = known(config.int(&key("log_prob_micro_batch_size_per_gpu")))
                .or_else(|| known(legacy_per_gpu(&config.int(&key("log_prob_micro_batch_size")), settings)))?;
            Some(micro.map(|m| m * seq.unwrap_or(0)))
        })
        .filter(|t| t.value > 0)
        .max_by_key(|t| t.value);
    let actor = |k: &str| format!("actor_rollout_ref.actor.{k}");
    let on = |k: &str| config.bool(&actor(k)).value == Some(true);
    let eager = !on("use_torch_compile") && !on("entropy_from_logits_with_chunking");
    let offload = |s: &Sourced<Option<bool>>| s.value == Some(true);
    RlPhases {
        log_prob_tokens,
        log_prob_entropy: Some(eager),
        offloads: [
            offload(&settings.param_offload),
            offload(&settings.optimizer_offload),
            offload(&settings.ref_param_offload),
        ],
        weight_sync: weight_sync(settings),
    }
}

/// What `rollout_mode` (`fsdp_workers.py`) gathers to hand the actor's weights to the rollout
/// engine: with LoRA, `collect_lora_params` (`verl/utils/fsdp_utils.py`) runs
/// `FSDP.summon_full_params` over the whole FSDP1 model, or over one top-level module at a time
/// with `rollout.layered_summon` (FSDP2 modules are not FSDP1's to summon: their LoRA tensors are
/// gathered one by one); without LoRA the sharded `state_dict()` is gathered one tensor at a
/// time as the engine loads it. The FSDP workers only (Megatron's hand-over is not modelled).
fn weight_sync(settings: &VerlSettings) -> Option<Sourced<WeightSync>> {
    let strategy = settings.strategy.value.as_deref().unwrap_or("fsdp");
    if !matches!(strategy, "fsdp" | "fsdp2") {
        return None;
    }
    let lora = settings.lora_rank.value.is_some_and(|r| r > 0);
    let layered = settings.layered_summon.clone();
    Some(match (lora, strategy, layered.value) {
        (true, "fsdp", Some(true)) => Sourced::derived(WeightSync::Layered, "rollout.layered_summon: true"),
        (true, "fsdp", _) => match known(layered) {
            Some(off) => off.map(|_| WeightSync::WholeModel),
            None => Sourced::derived(WeightSync::WholeModel, "rollout.layered_summon unset (false)"),
        },
        (true, _, _) => Sourced::derived(WeightSync::PerTensor, "LoRA under FSDP2: its tensors one at a time"),
        (false, _, _) => Sourced::derived(WeightSync::PerTensor, "full weights: one tensor at a time"),
    })
}

fn sft_plan(config: &Config) -> Plan {
    let mut plan = Plan::new(Framework::Verl);
    plan.command = Some("fsdp_sft_trainer".into());
    common(config, "", &mut plan);
    plan.micro_batch_size = known(config.int("data.micro_batch_size_per_gpu"));
    plan.max_seq_length = known(config.int("data.max_length"));
    plan.padding_free = known(config.bool("use_remove_padding"));
    plan.global_batch_size = known(config.int("data.train_batch_size"));
    plan.algorithm = Some(Sourced::derived(RlAlgorithm::Sft, "verl SFT trainer"));
    let offload = known(config.bool("model.fsdp_config.cpu_offload")).is_some_and(|o| o.value);
    plan.sharding = Some(Sourced::derived(
        Sharding::Fsdp { full_shard: true, offload_params: offload },
        "verl FSDP SFT trainer (FULL_SHARD; fsdp_config.cpu_offload)",
    ));
    plan
}

/// Whether `validate_config` checks the reward model's micro-batch keys (`verl/utils/config.py`):
/// `reward_model.enable` and neither `use_dynamic_bsz` nor `use_reward_loop`; unknown when one
/// of them is computed at run time.
fn reward_micro_checked(config: &Config) -> Sourced<Option<bool>> {
    let enable = config.bool("reward_model.enable");
    let off = [config.bool("reward_model.use_dynamic_bsz"), config.bool("reward_model.use_reward_loop")];
    if let Some(unknown) = std::iter::once(&enable).chain(&off).find(|s| s.is_unknown()) {
        return Sourced { value: None, origin: unknown.origin.clone() };
    }
    let checked = enable.value == Some(true) && off.iter().all(|s| s.value != Some(true));
    Sourced::derived(Some(checked), "reward_model.enable, not use_dynamic_bsz, not use_reward_loop")
}

impl VerlSettings {
    fn read(config: &Config, command: Span) -> VerlSettings {
        let actor = |k: &str| format!("actor_rollout_ref.actor.{k}");
        let n_gpus =
            product(config.int("trainer.n_gpus_per_node"), &config.int("trainer.nnodes"), "n_gpus_per_node × nnodes");
        let megatron = |k: &str| known(config.int(&actor(&format!("megatron.{k}"))));
        // The offload switches sit in `fsdp_config` for the FSDP workers, in `megatron` for
        // Megatron's (`_generated_ppo_megatron_trainer.yaml`).
        let engine = if config.trainer == "ppo_megatron_trainer" { "megatron" } else { "fsdp_config" };
        let kl_loss = config.bool(&actor("use_kl_loss"));
        let kl_reward = config.bool("algorithm.use_kl_in_reward");
        let need_reference = match (kl_loss.value, kl_reward.value) {
            (Some(a), Some(b)) => Sourced::derived(Some(a || b), "actor.use_kl_loss or algorithm.use_kl_in_reward"),
            (Some(true), None) => kl_loss,
            (None, Some(true)) => kl_reward,
            (None, _) => kl_loss.map(|_| None),
            (_, None) => kl_reward.map(|_| None),
        };
        // `need_critic` (`verl/trainer/ppo/utils.py`): `critic.enable` when it is not null,
        // else whether the advantage estimator is GAE.
        let enable = config.bool("critic.enable");
        let need_critic = if enable.value.is_some() || enable.is_unknown() {
            enable
        } else {
            config.string("algorithm.adv_estimator").map(|e| e.map(|e| e == "gae"))
        };
        VerlSettings {
            command,
            legacy_workers: config.string("trainer.use_legacy_worker_impl"),
            n_gpus,
            train_batch_size: config.int("data.train_batch_size"),
            rollout_n: config.int("actor_rollout_ref.rollout.n"),
            strategy: config.string(&actor("strategy")),
            mini_batch: config.int(&actor("ppo_mini_batch_size")),
            micro_batch: config.int(&actor("ppo_micro_batch_size")),
            micro_per_gpu: config.int(&actor("ppo_micro_batch_size_per_gpu")),
            dynamic_bsz: config.bool(&actor("use_dynamic_bsz")),
            ulysses: config.int(&actor("ulysses_sequence_parallel_size")),
            remove_padding: config.bool("actor_rollout_ref.model.use_remove_padding"),
            megatron_sizes: [
                megatron("tensor_model_parallel_size"),
                megatron("pipeline_model_parallel_size"),
                megatron("context_parallel_size"),
                megatron("expert_model_parallel_size"),
            ],
            rollout_name: config.string("actor_rollout_ref.rollout.name"),
            rollout_tp: config.int("actor_rollout_ref.rollout.tensor_model_parallel_size"),
            need_reference,
            log_prob_keys: ["actor_rollout_ref.ref", "actor_rollout_ref.rollout"].map(|section| {
                (
                    config.int(&format!("{section}.log_prob_micro_batch_size")),
                    config.int(&format!("{section}.log_prob_micro_batch_size_per_gpu")),
                )
            }),
            param_offload: config.bool(&actor(&format!("{engine}.param_offload"))),
            optimizer_offload: config.bool(&actor(&format!("{engine}.optimizer_offload"))),
            ref_param_offload: config.bool(&format!("actor_rollout_ref.ref.{engine}.param_offload")),
            critic_offloads: [
                config.bool("critic.model.fsdp_config.param_offload"),
                config.bool("critic.model.fsdp_config.optimizer_offload"),
            ],
            need_critic,
            critic_micro_keys: (
                config.int("critic.ppo_micro_batch_size"),
                config.int("critic.ppo_micro_batch_size_per_gpu"),
            ),
            critic_mini_batch: config.int("critic.ppo_mini_batch_size"),
            critic_dynamic_bsz: config.bool("critic.use_dynamic_bsz"),
            critic_strategy: config.string("critic.strategy"),
            critic_ulysses: config.int("critic.ulysses_sequence_parallel_size"),
            critic_remove_padding: config.bool("critic.model.use_remove_padding"),
            critic_rollout_n: config.int("critic.rollout_n"),
            max_model_len: config.int("actor_rollout_ref.rollout.max_model_len"),
            max_num_batched_tokens: config.int("actor_rollout_ref.rollout.max_num_batched_tokens"),
            gpu_memory_utilization: config.float("actor_rollout_ref.rollout.gpu_memory_utilization"),
            max_prompt_length: config.int("data.max_prompt_length"),
            max_response_length: config.int("data.max_response_length"),
            reward_micro_checked: reward_micro_checked(config),
            reward_micro_keys: (
                config.int("reward_model.micro_batch_size"),
                config.int("reward_model.micro_batch_size_per_gpu"),
            ),
            val_do_sample: config.bool("actor_rollout_ref.rollout.val_kwargs.do_sample"),
            rollout_temperature: config.float("actor_rollout_ref.rollout.temperature"),
            lora_rank: config.int("actor_rollout_ref.model.lora_rank"),
            layered_summon: config.bool("actor_rollout_ref.rollout.layered_summon"),
            load_format: config.string("actor_rollout_ref.rollout.load_format"),
            max_token_len: config.int("actor_rollout_ref.actor.ppo_max_token_len_per_gpu"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> (String, Vec<Word>) {
        let mut at = 0;
        let words = line
            .split(' ')
            .map(|w| {
                let span = Span::new(at, at + w.len());
                at += w.len() + 1;
                Word { text: (!w.contains('$')).then(|| w.to_string()), span }
            })
            .collect();
        (line.to_string(), words)
    }

    fn config(line: &str) -> Config {
        let (text, words) = words(line);
        let module = Word { text: Some("verl.trainer.main_ppo".into()), span: Span::new(0, 0) };
        let flags = overrides(&module, &words);
        Config::compose(trainer(&flags), &flags, &text)
    }

    #[test]
    fn the_defaults_table_parses_for_every_trainer() {
        let rows: Vec<_> = DEFAULTS.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(rows.iter().all(|l| l.split('\t').count() == 3), "three columns");
        for trainer in ["ppo_trainer", "ppo_megatron_trainer", "sft_trainer"] {
            assert!(rows.iter().filter(|l| l.starts_with(&format!("{trainer}\t"))).count() > 50, "{trainer}");
        }
        assert!(release().starts_with("verl "), "{}", release());
        let c = config("");
        assert_eq!(c.int("data.train_batch_size").value, Some(1024));
        assert_eq!(c.int("actor_rollout_ref.rollout.n").value, Some(1));
        assert_eq!(c.bool("actor_rollout_ref.rollout.free_cache_engine").value, Some(true));
    }

    #[test]
    fn overrides_follow_hydra_and_interpolations_resolve() {
        let c = config(
            "actor_rollout_ref.actor.ppo_micro_batch_size=8 +trainer.extra=1 ~critic.optim \
             actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=$LEN \
             data.max_prompt_length='2048'",
        );
        assert_eq!(c.int("actor_rollout_ref.actor.ppo_micro_batch_size").value, Some(8));
        assert!(c.int("actor_rollout_ref.actor.ppo_micro_batch_size").value_span().is_some());
        assert_eq!(c.int("trainer.extra").value, Some(1));
        assert!(c.setting("critic.optim.lr").is_none());
        // `${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}` follows the override.
        assert_eq!(c.bool("actor_rollout_ref.ref.log_prob_use_dynamic_bsz").value, Some(true));
        // A computed word leaves the key unknown rather than defaulted.
        let len = c.int("actor_rollout_ref.ref.log_prob_max_token_len_per_gpu");
        assert!(matches!(len.origin, Origin::Unknown { .. }), "{len:?}");
        assert_eq!(c.int("data.max_prompt_length").value, Some(2048));
        // `${oc.select:.ppo_micro_batch_size,null}` is relative to the critic.
        assert_eq!(c.int("critic.ppo_micro_batch_size_per_gpu").value, None);
    }

    #[test]
    fn the_critic_is_needed_for_gae_or_when_enabled() {
        let settings = |line: &str| VerlSettings::read(&config(line), Span::new(0, 0));
        // `algorithm.adv_estimator` defaults to gae.
        assert_eq!(settings("").need_critic.value, Some(true));
        assert_eq!(settings("algorithm.adv_estimator=grpo").need_critic.value, Some(false));
        assert_eq!(settings("algorithm.adv_estimator=grpo critic.enable=True").need_critic.value, Some(true));
        assert_eq!(settings("critic.enable=False").need_critic.value, Some(false));
        // The critic's per-GPU micro batch follows its global one; its mini batch follows the actor's.
        let s = settings("critic.ppo_micro_batch_size=16 actor_rollout_ref.actor.ppo_mini_batch_size=32");
        assert_eq!((s.critic_micro_keys.0.value, s.critic_micro_keys.1.value), (Some(16), Some(16)));
        assert_eq!(s.critic_mini_batch.value, Some(32));
        assert_eq!(s.critic_dynamic_bsz.value, Some(false));
        assert_eq!(s.critic_strategy.value.as_deref(), Some("fsdp"));
        assert_eq!(s.critic_ulysses.value, Some(1));
        assert_eq!(settings("actor_rollout_ref.rollout.n=4").critic_rollout_n.value, Some(4));
    }

    #[test]
    fn the_megatron_config_is_picked_by_name() {
        let c =
            config("--config-name=ppo_megatron_trainer actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4");
        assert_eq!(c.trainer, "ppo_megatron_trainer");
        assert_eq!(c.int("actor_rollout_ref.actor.megatron.tensor_model_parallel_size").value, Some(4));
    }

    #[test]
    fn the_megatron_actor_splits_the_model_over_its_tensor_parallel_ranks() {
        let c = config(
            "--config-name=ppo_megatron_trainer actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4 \
             actor_rollout_ref.actor.megatron.context_parallel_size=2",
        );
        let plan = ppo_plan(&c, Span::new(0, 0));
        let tp = plan.tensor_parallel.expect("tensor parallel");
        assert_eq!(tp.value, TensorParallel { size: Some(4), layout: TpLayout::Megatron { sequence_parallel: true } });
        assert!(tp.value_span().is_some());
        assert_eq!(plan.sequence_parallel.map(|n| n.value), Some(2));
        // The FSDP trainer's actor has no tensor parallelism of its own.
        let fsdp = ppo_plan(&config("actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4"), Span::new(0, 0));
        assert!(fsdp.tensor_parallel.is_none());
    }
}
