//! Axolotl YAML configs (`axolotl train config.yaml`), plus the model-reference reading other
//! trainer formats share.
//!
//! Defaults follow the pydantic schema `src/axolotl/utils/schemas/{config,training,peft,trl,
//! vllm,fsdp}.py`, `utils/config/__init__.py` (`normalize_config`, `resolve_dtype`),
//! `loaders/model.py` (bitsandbytes settings), `train.py` (`setup_reference_model`) and
//! `core/trainers/grpo/__init__.py` at axolotl-ai-cloud/axolotl@067b021c (0.18.0), which
//! pins TRL 1.8.0 and transformers 5.14.1.

use super::hf_names::{attention_kind, lora_targets, optimizer_kind};
use super::{accelerate, deepspeed, Reader};
use crate::plan::{
    Attention, AxolotlSettings, Checkpointing, Dtype, Framework, LoraPlan, LoraTargets, LossImpl, Method, ModelRef,
    Optimizer, Plan, Precision, Quantization, RlAlgorithm, RlPlan, Sharding, Sourced, TensorParallel, TpLayout,
    VllmMode, VllmPlan,
};

use super::facts::{self, Framework::Axolotl};

const VERSION: &str = "Axolotl 0.18";
const TRL: &str = "TRL 1.8";

fn default<T>(value: T, what: &str) -> Sourced<T> {
    Sourced::default_of(value, format!("{VERSION} {what}"))
}

/// A hub id (`org/name`) or a local directory (`/data/m`, `./m`, `~/m`, `a/b/c`).
pub(crate) fn model_ref(text: &str) -> ModelRef {
    let trimmed = text.trim().trim_end_matches(['/', '\\']);
    let is_path = trimmed.starts_with(['/', '.', '~', '\\'])
        || trimmed.as_bytes().get(1) == Some(&b':')
        || trimmed.matches('/').count() > 1;
    ModelRef { name: trimmed.to_string(), is_path }
}

fn is_true(r: &Reader, key: &str) -> Option<Sourced<bool>> {
    r.bool(key).filter(|b| b.value)
}

fn method(r: &Reader) -> Sourced<Method> {
    let four_bit = is_true(r, "load_in_4bit").is_some();
    let Some(adapter) = r.str("adapter") else {
        return default(Method::Full, "adapter=None (all parameters train)");
    };
    match adapter.value.as_str() {
        "qlora" => adapter.map(|_| Method::Qlora),
        "lora" if four_bit => Sourced::derived(Method::Qlora, "adapter: lora with load_in_4bit"),
        "lora" => adapter.map(|_| Method::Lora),
        "llama-adapter" => adapter.map(|_| Method::Adapter),
        other => Sourced::derived(Method::Lora, format!("plugin adapter `{other}` (counted as LoRA)")),
    }
}

fn lora(r: &Reader) -> LoraPlan {
    let linear = is_true(r, "lora_target_linear");
    let modules = r.strings("lora_target_modules", false).filter(|m| !m.value.is_empty());
    let targets = match (linear, modules) {
        (Some(linear), modules) => {
            let mut names = vec!["all-linear".to_string()];
            names.extend(modules.map(|m| m.value).unwrap_or_default());
            linear.map(|_| lora_targets(&names))
        }
        (None, Some(modules)) => modules.map(|names| lora_targets(&names)),
        (None, None) => Sourced::default_of(
            LoraTargets {
                query: true,
                value: true,
                names: vec!["q_proj".into(), "v_proj".into()],
                ..Default::default()
            },
            "PEFT per-architecture default target modules (q_proj, v_proj for Llama-style models)",
        ),
    };
    LoraPlan {
        rank: r.u64("lora_r").unwrap_or_else(|| {
            facts::count_as(facts::Framework::Peft, "r", |v| format!("PEFT LoraConfig r={v} (lora_r unset)"))
        }),
        alpha: r.f64("lora_alpha").unwrap_or_else(|| {
            facts::number_as(facts::Framework::Peft, "lora_alpha", |v| {
                format!("PEFT LoraConfig lora_alpha={v} (lora_alpha unset)")
            })
        }),
        dropout: r
            .f64("lora_dropout")
            .unwrap_or_else(|| facts::number_as(Axolotl, "lora_dropout", |v| format!("{VERSION} lora_dropout={v:?}"))),
        targets,
    }
}

/// How `bf16` resolves: explicitly on or off, or `auto` (the default).
enum Bf16 {
    On(Sourced<bool>),
    Off,
    Auto,
}

/// `resolve_dtype`: the load dtype and training precision.
fn dtypes(r: &Reader) -> (Sourced<Dtype>, Sourced<Precision>) {
    let fp16 = is_true(r, "fp16");
    let bf16 = match r.bool("bf16") {
        Some(b) if b.value => Bf16::On(b),
        Some(_) => Bf16::Off,
        None if fp16.is_some() => Bf16::Off,
        None => Bf16::Auto,
    };
    let auto_why = if r.has("bf16") { "bf16: auto" } else { "bf16 unset (Axolotl 0.18 default auto)" };
    let half_key = ["load_in_8bit", "fp16", "float16"].into_iter().find_map(|k| is_true(r, k));
    let load = match (&bf16, is_true(r, "bfloat16"), &half_key) {
        (Bf16::On(b), ..) => b.clone().map(|_| Dtype::Bf16),
        (_, Some(b), _) => b.map(|_| Dtype::Bf16),
        (Bf16::Auto, ..) => Sourced::derived(
            Dtype::Bf16,
            format!("{auto_why}: bf16 weights on a bf16-capable GPU, fp16 otherwise (resolve_dtype)"),
        ),
        (Bf16::Off, None, Some(half)) => half.clone().map(|_| Dtype::F16),
        (Bf16::Off, None, None) => Sourced::derived(Dtype::F32, "resolve_dtype: neither bf16 nor fp16 → float32"),
    };
    let precision = match (bf16, fp16) {
        (Bf16::On(b), _) => b.map(|_| Precision::Mixed(Dtype::Bf16)),
        (Bf16::Auto, _) => Sourced::derived(
            Precision::Mixed(Dtype::Bf16),
            format!("{auto_why}: bf16 autocast on a bf16-capable GPU, fp16 otherwise"),
        ),
        (Bf16::Off, Some(f)) => f.map(|_| Precision::Mixed(Dtype::F16)),
        (Bf16::Off, None) => Sourced::derived(Precision::True(load.value), "bf16 and fp16 off: no autocast"),
    };
    (load, precision)
}

fn quantization(r: &Reader) -> Sourced<Option<Quantization>> {
    if let Some(four_bit) = is_true(r, "load_in_4bit") {
        let fp4 = r.str("bnb_config_kwargs.bnb_4bit_quant_type").is_some_and(|t| t.value == "fp4");
        let double_quant = r.bool("bnb_config_kwargs.bnb_4bit_use_double_quant").is_none_or(|d| d.value);
        let q = if fp4 { Quantization::Fp4 { double_quant } } else { Quantization::Nf4 { double_quant } };
        return four_bit.map(|_| Some(q));
    }
    if let Some(eight_bit) = is_true(r, "load_in_8bit") {
        return eight_bit.map(|_| Some(Quantization::Int8));
    }
    if is_true(r, "gptq").is_some() {
        return Sourced::derived(
            Some(Quantization::Nf4 { double_quant: false }),
            "gptq: 4-bit GPTQ weights (counted like NF4)",
        );
    }
    if r.has("model_quantization_config") {
        return Sourced::unknown(None, "model_quantization_config is not modelled");
    }
    default(None, "load_in_4bit=False, load_in_8bit=False")
}

fn checkpointing(r: &Reader) -> Sourced<Checkpointing> {
    let offloaded = r.str("activation_offloading").filter(|a| !matches!(a.value.as_str(), "false" | "False"));
    let gc = match r.str("gradient_checkpointing") {
        Some(g) => match g.value.to_ascii_lowercase().as_str() {
            "offload" | "offload_disk" => Some(g.map(|_| Checkpointing::CpuOffload)),
            "true" => Some(match offloaded {
                Some(a) => Sourced::derived(
                    Checkpointing::CpuOffload,
                    format!("gradient_checkpointing with activation_offloading: {}", a.value),
                ),
                None => g.map(|_| Checkpointing::Full),
            }),
            _ => None,
        },
        None => None,
    };
    gc.or_else(|| accelerate::fsdp_checkpointing(r, "fsdp_config.").filter(|c| c.value == Checkpointing::Full))
        .unwrap_or_else(|| match r.bool("gradient_checkpointing") {
            Some(off) => off.map(|_| Checkpointing::None),
            None => default(Checkpointing::None, "gradient_checkpointing=False"),
        })
}

fn attention(r: &Reader) -> Sourced<Attention> {
    if let Some(a) = r.str("attn_implementation").and_then(|a| {
        let kind = attention_kind(&a.value)?;
        Some(a.map(|_| kind))
    }) {
        return a;
    }
    let legacy = [
        ("flash_attention", Attention::Flash),
        ("xformers_attention", Attention::Flash),
        ("sage_attention", Attention::Flash),
        ("flex_attention", Attention::Flex),
        ("sdp_attention", Attention::Sdpa),
        ("eager_attention", Attention::Eager),
    ];
    legacy
        .into_iter()
        .find_map(|(key, kind)| is_true(r, key).map(|b| b.map(|_| kind)))
        .unwrap_or_else(|| Sourced::default_of(Attention::Sdpa, "transformers 5.14 attn_implementation=sdpa"))
}

fn loss(r: &Reader) -> Sourced<LossImpl> {
    let plugins = r.strings("plugins", false).map(|p| p.value).unwrap_or_default();
    let has_plugin = |part: &str| plugins.iter().any(|p| p.to_ascii_lowercase().contains(part));
    if has_plugin("liger") {
        if let Some(flce) = is_true(r, "liger_fused_linear_cross_entropy") {
            return flce.map(|_| LossImpl::Liger);
        }
    }
    if let Some(liger) = is_true(r, "trl.use_liger_loss") {
        return liger.map(|_| LossImpl::Liger);
    }
    if has_plugin("cut_cross_entropy") && r.bool("cut_cross_entropy").is_none_or(|c| c.value) {
        return Sourced::derived(
            LossImpl::Liger,
            "CutCrossEntropyPlugin (no full logits; counted like fused linear cross-entropy)",
        );
    }
    Sourced::default_of(LossImpl::Full, "transformers 5.14 cross-entropy over full logits")
}

fn sharding(r: &Reader) -> Sourced<Sharding> {
    if let Some(ds) = deepspeed::trainer_sharding(r, "deepspeed") {
        return ds;
    }
    let offload = accelerate::fsdp_key(r, "fsdp_config.", "offload_params", Reader::bool).is_some_and(|o| o.value);
    if let Some(options) = accelerate::trainer_fsdp_options(r, "fsdp") {
        return options.map(|s| match s {
            Sharding::Fsdp { full_shard, offload_params } => {
                Sharding::Fsdp { full_shard, offload_params: offload_params || offload }
            }
            other => other,
        });
    }
    if r.entry("fsdp_config").is_some_and(|e| e.value.as_mapping().is_some()) {
        let version = r
            .u64("fsdp_version")
            .or_else(|| accelerate::fsdp_key(r, "fsdp_config.", "version", Reader::u64))
            .map_or(1, |v| v.value);
        return accelerate::fsdp_sharding(r, "fsdp_config.", version, VERSION);
    }
    default(Sharding::None, "no deepspeed or fsdp_config (one GPU or DDP)")
}

fn algorithm(r: &Reader) -> Sourced<RlAlgorithm> {
    let Some(rl) = r.str("rl") else {
        return default(RlAlgorithm::Sft, "rl=None (supervised fine-tuning)");
    };
    let kind = match rl.value.to_ascii_lowercase().as_str() {
        "dpo" | "ipo" => RlAlgorithm::Dpo,
        "grpo" => RlAlgorithm::Grpo,
        "orpo" => RlAlgorithm::Orpo,
        "kto" => RlAlgorithm::Kto,
        "simpo" => RlAlgorithm::Cpo,
        _ => RlAlgorithm::Other,
    };
    rl.map(|_| kind)
}

fn beta(r: &Reader) -> Option<Sourced<f64>> {
    r.f64("trl.beta").or_else(|| r.f64("rl_beta"))
}

/// GRPO-style generation settings (`rl: grpo` and `rl: gdpo` share GRPOStrategy).
fn rl_plan(r: &Reader) -> RlPlan {
    let vllm = is_true(r, "trl.use_vllm").map(|_| {
        let mode = r.str("trl.vllm_mode");
        let explicit_colocate = mode.as_ref().is_some_and(|m| m.value == "colocate");
        let server = mode.as_ref().is_some_and(|m| m.value == "server");
        let utilization = r.f64("vllm.gpu_memory_utilization");
        let gpu_memory_utilization = match utilization {
            Some(u) if explicit_colocate || server => u,
            _ if explicit_colocate || server => facts::number_as(Axolotl, "vllm.gpu_memory_utilization", |v| {
                format!("{VERSION} vllm.gpu_memory_utilization={v}")
            }),
            _ => facts::number_as(facts::Framework::TrlGrpo, "vllm_gpu_memory_utilization", |v| {
                format!(
                    "{TRL} vllm_gpu_memory_utilization={v} (Axolotl passes vllm.gpu_memory_utilization only with an \
                     explicit trl.vllm_mode: colocate)"
                )
            }),
        };
        let mode = match mode {
            Some(m) => {
                let value = if m.value == "server" { VllmMode::Server } else { VllmMode::Colocate };
                m.map(|_| value)
            }
            None => Sourced::default_of(VllmMode::Colocate, format!("{TRL} vllm_mode=colocate")),
        };
        VllmPlan {
            mode,
            gpu_memory_utilization,
            fraction_of_free: false,
            enable_sleep_mode: r
                .bool("trl.vllm_enable_sleep_mode")
                .unwrap_or_else(|| Sourced::default_of(false, format!("{TRL} vllm_enable_sleep_mode=False"))),
        }
    });
    RlPlan {
        num_generations: r.count("trl.num_generations").unwrap_or_else(|| {
            facts::count_as(facts::Framework::TrlGrpo, "num_generations", |v| {
                format!("{TRL} GRPOConfig num_generations={v}")
            })
        }),
        max_prompt_length: r.u64("max_prompt_len"),
        prompt_length: r.u64("max_prompt_len").unwrap_or_else(|| super::trl::assumed_prompt_length("max_prompt_len")),
        max_completion_length: r.u64("trl.max_completion_length").unwrap_or_else(|| {
            Sourced::unknown(
                256,
                "trl.max_completion_length unset: Axolotl passes None to GRPOConfig, so generation runs to the \
                 model's limit (value assumes TRL's 256)",
            )
        }),
        generation_batch_size: r.u64("trl.generation_batch_size"),
        steps_per_generation: r.u64("trl.steps_per_generation"),
        beta: beta(r).unwrap_or_else(|| {
            facts::number_as(facts::Framework::TrlGrpo, "beta", |v| format!("{TRL} GRPOConfig beta={v:?}"))
        }),
        vllm,
    }
}

/// `setup_reference_model`: every `rl` except ORPO loads a second model copy unless an
/// adapter is trained (TRL disables it for reference logits); GRPO and EBFT skip it only
/// when `trl.beta` is explicitly 0.
fn reference_model(r: &Reader, rl: &str) -> Sourced<bool> {
    if rl == "orpo" {
        return Sourced::derived(false, "rl: orpo uses no reference model");
    }
    if r.str("adapter").is_some() && is_true(r, "rl_adapter_ref_model").is_none() {
        return Sourced::derived(
            false,
            "adapter set: the reference logits come from the model with the adapter disabled",
        );
    }
    if matches!(rl, "grpo" | "ebft") {
        if let Some(zero) = r.f64("trl.beta").filter(|b| b.value == 0.0) {
            return zero.map(|_| false);
        }
        return Sourced::derived(
            true,
            "no adapter and trl.beta is not 0: Axolotl loads a second model copy (train.py setup_reference_model)",
        );
    }
    Sourced::derived(true, format!("rl: {rl} without an adapter loads a second model copy as the reference"))
}

pub(crate) fn plan(r: &Reader) -> Plan {
    let mut plan = Plan::new(Framework::Axolotl);
    plan.command = Some("train".to_string());
    plan.model = r.str("base_model").map(|m| m.map(|name| model_ref(&name)));
    let method = method(r);
    if matches!(method.value, Method::Lora | Method::Qlora) {
        plan.lora = Some(lora(r));
    }
    plan.method = Some(method);
    let (load, precision) = dtypes(r);
    plan.load_dtype = Some(load);
    plan.precision = Some(precision);
    plan.quantization = Some(quantization(r));

    let micro = r
        .u64("micro_batch_size")
        .unwrap_or_else(|| facts::count_as(Axolotl, "micro_batch_size", |v| format!("{VERSION} micro_batch_size={v}")));
    let accumulation = match (r.u64("gradient_accumulation_steps"), r.u64("batch_size")) {
        (Some(ga), _) => ga,
        (None, Some(batch)) => Sourced::derived(
            (batch.value / micro.value.max(1)).max(1),
            "batch_size // micro_batch_size (normalize_config)",
        ),
        (None, None) => facts::count_as(Axolotl, "gradient_accumulation_steps", |v| {
            format!("{VERSION} gradient_accumulation_steps={v}")
        }),
    };
    plan.global_batch_size = Some(Sourced::derived(
        micro.value * accumulation.value,
        "micro_batch_size × gradient_accumulation_steps per rank (× the world size under DDP/FSDP)",
    ));
    plan.micro_batch_size = Some(micro);
    plan.gradient_accumulation = Some(accumulation);

    plan.max_seq_length = Some(
        r.u64("sequence_len")
            .unwrap_or_else(|| facts::count_as(Axolotl, "sequence_len", |v| format!("{VERSION} sequence_len={v}"))),
    );
    plan.packing = Some(r.flag("sample_packing").unwrap_or_else(|| default(false, "sample_packing=None (off)")));
    plan.gradient_checkpointing = Some(checkpointing(r));
    // `context_parallel_size` (ring attention over the ranks; `sequence_parallel_degree` is its
    // deprecated alias, `utils/schemas/fsdp.py`) splits each sequence.
    plan.sequence_parallel = r.u64("context_parallel_size").or_else(|| r.u64("sequence_parallel_degree"));
    // `tensor_parallel_size` loads the model with transformers' TP plan over that many ranks
    // (`loaders/model.py` `ModelLoader._build_model`: `tp_size`, `tp_plan="auto"`, the device
    // mesh of `utils/distributed.py` `build_parallelism_config`); the rest of the world is the
    // data-parallel (FSDP) dimension.
    plan.tensor_parallel = r
        .u64("tensor_parallel_size")
        .filter(|n| n.value > 1)
        .map(|n| n.map(|size| TensorParallel { size: Some(size), layout: TpLayout::Transformers }));
    plan.attention = Some(attention(r));
    plan.optimizer = Some(
        r.str("optimizer")
            .map(|o| o.map(|name| optimizer_kind(&name)))
            .unwrap_or_else(|| default(Optimizer::AdamWFused, "optimizer=adamw_torch_fused")),
    );
    plan.loss = Some(loss(r));
    plan.sharding = Some(sharding(r));
    // `dp_shard_size` sizes the FSDP shard group (with `context_parallel_size`, the `dp_shard_cp`
    // mesh); the ranks left over become `dp_replicate_size` replicas of it
    // (`utils/distributed.py` `_get_parallel_config_kwargs`).
    if plan.sharding.as_ref().is_some_and(|s| matches!(s.value, Sharding::Fsdp { .. })) {
        let cp = plan.sequence_parallel.as_ref().map_or(1, |n| n.value.max(1));
        plan.shard_group = r
            .u64("dp_shard_size")
            .filter(|n| n.value > 0)
            .map(|n| Sourced::derived(n.value * cp, "dp_shard_size × context_parallel_size (FSDP's dp_shard_cp mesh)"));
    }

    let algorithm = algorithm(r);
    if let Some(rl) = r.str("rl").map(|rl| rl.value.to_ascii_lowercase()) {
        if matches!(rl.as_str(), "grpo" | "gdpo") {
            plan.rl = Some(rl_plan(r));
        }
        plan.reference_model = Some(reference_model(r, &rl));
        // DPO, IPO and KTO compute reference log-probabilities every step (TRL's trainers,
        // `core/trainers/dpo`); ORPO and SimPO need none.
        if matches!(rl.as_str(), "dpo" | "ipo" | "kto") {
            plan.reference_forward = Some(Sourced::derived(
                is_true(r, "precompute_ref_log_probs").is_none(),
                format!("rl: {rl} computes reference log-probabilities each step unless precompute_ref_log_probs"),
            ));
        }
    }
    plan.algorithm = Some(algorithm);
    plan.axolotl = Some(settings(r));
    plan
}

/// The legacy attention flags in Axolotl's order (`schemas/enums.py` `LEGACY_ATTN_FLAG_TO_IMPL`).
const LEGACY_ATTENTION_FLAGS: [&str; 6] =
    ["xformers_attention", "sage_attention", "flex_attention", "flash_attention", "sdp_attention", "eager_attention"];

/// What Axolotl's validators read beyond the plan's fields.
fn settings(r: &Reader) -> AxolotlSettings {
    let s = facts::Settings(r);
    let set = |key: &str| r.flag(key).unwrap_or_else(|| facts::default(Axolotl, key, false));
    let given = |key: &str| r.given(key).unwrap_or_else(|| facts::default(Axolotl, key, false));
    let bf16 = r
        .bool("bf16")
        .map(|b| b.map(Some))
        .or_else(|| r.entry("bf16").map(|e| Sourced::file(None, e.key_span, e.value.span)));
    let fsdp_version = r.has("fsdp_config").then(|| {
        r.first(&["fsdp_version", "fsdp_config.fsdp_version", "fsdp_config.version"], |r, k| r.u64(k))
            .unwrap_or_else(|| s.count(Axolotl, "fsdp_version"))
    });
    AxolotlSettings {
        adapter: r.str("adapter"),
        load_in_4bit: s.flag(Axolotl, "load_in_4bit"),
        load_in_8bit: s.flag(Axolotl, "load_in_8bit"),
        gptq: set("gptq"),
        merge_lora: set("merge_lora"),
        fp16: r.bool("fp16").unwrap_or_else(|| facts::default(Axolotl, "fp16", false)),
        bf16: bf16.unwrap_or_else(|| facts::default(Axolotl, "bf16", None)),
        fp16_full_eval: s.bool(Axolotl, "fp16_full_eval"),
        bf16_full_eval: s.bool(Axolotl, "bf16_full_eval"),
        gradient_checkpointing: s.flag(Axolotl, "gradient_checkpointing"),
        activation_offloading: s.flag(Axolotl, "activation_offloading"),
        attn_implementation: r.str("attn_implementation"),
        legacy_attention: LEGACY_ATTENTION_FLAGS
            .into_iter()
            .filter_map(|key| r.flag(key).filter(|f| f.value).map(|f| f.map(|_| key)))
            .collect(),
        batch_size: r
            .nullable("batch_size", |r, k| r.u64(k))
            .unwrap_or_else(|| facts::default(Axolotl, "batch_size", None)),
        beta: r.f64("beta"),
        trl_beta: r.f64("trl.beta"),
        deepspeed: set("deepspeed"),
        fsdp: set("fsdp"),
        fsdp_version,
        optimizer: s.text(Axolotl, "optimizer"),
        max_memory: given("max_memory"),
        gpu_memory_limit: given("gpu_memory_limit"),
        rl: set("rl"),
        trl_use_vllm: s.flag(Axolotl, "trl.use_vllm"),
        trl_vllm_enable_sleep_mode: s.flag(Axolotl, "trl.vllm_enable_sleep_mode"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_support::{each_corpus_file, plan_with, spanned};
    use crate::plan::Origin;
    use crate::syntax::Language;

    fn plan_of(text: &str) -> Plan {
        plan_with(text, Language::Yaml, plan)
    }

    const QLORA: &str = "\
base_model: NousResearch/Meta-Llama-3-8B  # hub id
load_in_8bit: false
load_in_4bit: true
adapter: qlora
lora_r: 32
lora_alpha: 16
lora_dropout: 0.05
lora_target_modules:
  - q_proj
  - k_proj
  - v_proj
  - o_proj
sequence_len: 4096
sample_packing: true
gradient_accumulation_steps: 4
micro_batch_size: 2
optimizer: paged_adamw_8bit
bf16: auto
gradient_checkpointing: true
flash_attention: true
deepspeed: deepspeed_configs/zero2.json
";

    #[test]
    fn qlora_values_and_spans() {
        let p = plan_of(QLORA);
        let model = p.model.as_ref().unwrap();
        assert_eq!(model.value.name, "NousResearch/Meta-Llama-3-8B");
        assert!(!model.value.is_path);
        assert_eq!(spanned(QLORA, model), "NousResearch/Meta-Llama-3-8B");
        let method = p.method.as_ref().unwrap();
        assert_eq!(method.value, Method::Qlora);
        assert_eq!(spanned(QLORA, method), "qlora");
        let quantization = p.quantization.as_ref().unwrap();
        assert_eq!(quantization.value, Some(Quantization::Nf4 { double_quant: true }));
        assert_eq!(spanned(QLORA, quantization), "true");
        assert_eq!(
            &QLORA[quantization.key_span().unwrap().start..quantization.key_span().unwrap().end],
            "load_in_4bit"
        );
        let lora = p.lora.as_ref().unwrap();
        assert_eq!(lora.rank.value, 32);
        assert_eq!(spanned(QLORA, &lora.rank), "32");
        assert_eq!(lora.alpha.value, 16.0);
        let t = &lora.targets.value;
        assert!(t.query && t.key && t.value && t.output && !t.mlp_up && !t.lm_head);
        assert_eq!(spanned(QLORA, p.micro_batch_size.as_ref().unwrap()), "2");
        assert_eq!(spanned(QLORA, p.gradient_accumulation.as_ref().unwrap()), "4");
        assert_eq!(p.global_batch_size.as_ref().unwrap().value, 8);
        assert_eq!(spanned(QLORA, p.max_seq_length.as_ref().unwrap()), "4096");
        assert!(p.packing.as_ref().unwrap().value);
        assert_eq!(p.optimizer.as_ref().unwrap().value, Optimizer::PagedAdamW8bit);
        assert_eq!(p.attention.as_ref().unwrap().value, Attention::Flash);
        assert_eq!(p.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::Full);
        let load = p.load_dtype.as_ref().unwrap();
        assert_eq!(load.value, Dtype::Bf16);
        assert!(matches!(&load.origin, Origin::Derived { from } if from.contains("bf16: auto")));
        let sharding = p.sharding.as_ref().unwrap();
        // Axolotl's bundled zero2.json offloads the optimizer although its name does not say so.
        assert_eq!(sharding.value, Sharding::Zero { stage: 2, offload_optimizer: true, offload_params: false });
        assert!(matches!(&sharding.origin, Origin::Derived { from } if from.contains("zero2.json")));
        assert_eq!(p.algorithm.as_ref().unwrap().value, RlAlgorithm::Sft);
        assert!(p.reference_model.is_none());
    }

    #[test]
    fn full_fsdp2_with_defaults() {
        let text = "\
base_model: /data/models/llama-3-8b/
sequence_len: 2048
micro_batch_size: 1
batch_size: 16
fp16: true
gradient_checkpointing: offload
attn_implementation: sdpa
plugins:
  - axolotl.integrations.liger.LigerPlugin
liger_fused_linear_cross_entropy: true
fsdp_version: 2
fsdp_config:
  offload_params: true
  reshard_after_forward: true
";
        let p = plan_of(text);
        assert!(p.model.as_ref().unwrap().value.is_path);
        assert_eq!(p.method.as_ref().unwrap().value, Method::Full);
        assert!(p.lora.is_none());
        assert_eq!(p.gradient_accumulation.as_ref().unwrap().value, 16);
        assert_eq!(p.load_dtype.as_ref().unwrap().value, Dtype::F16);
        let precision = p.precision.as_ref().unwrap();
        assert_eq!(precision.value, Precision::Mixed(Dtype::F16));
        assert_eq!(spanned(text, precision), "true");
        assert_eq!(p.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::CpuOffload);
        assert_eq!(spanned(text, p.gradient_checkpointing.as_ref().unwrap()), "offload");
        assert_eq!(p.attention.as_ref().unwrap().value, Attention::Sdpa);
        assert_eq!(p.optimizer.as_ref().unwrap().value, Optimizer::AdamWFused);
        assert!(!p.optimizer.as_ref().unwrap().is_from_file());
        let loss = p.loss.as_ref().unwrap();
        assert_eq!(loss.value, LossImpl::Liger);
        assert_eq!(spanned(text, loss), "true");
        let sharding = p.sharding.as_ref().unwrap();
        assert_eq!(sharding.value, Sharding::Fsdp { full_shard: true, offload_params: true });
        assert_eq!(spanned(text, sharding), "true");
        assert_eq!(p.quantization.as_ref().unwrap().value, None);
    }

    #[test]
    fn resolve_dtype_cases() {
        let load = |text: &str| plan_of(text).load_dtype.unwrap().value;
        assert_eq!(load("base_model: m\nbf16: true\n"), Dtype::Bf16);
        assert_eq!(load("base_model: m\nbf16: false\nload_in_8bit: true\n"), Dtype::F16);
        assert_eq!(load("base_model: m\nbf16: false\n"), Dtype::F32);
        assert_eq!(load("base_model: m\nbf16: false\nbfloat16: true\n"), Dtype::Bf16);
        assert_eq!(load("base_model: m\n"), Dtype::Bf16);
        let p = plan_of("base_model: m\nbf16: false\n");
        assert_eq!(p.precision.unwrap().value, Precision::True(Dtype::F32));
    }

    #[test]
    fn quantization_and_checkpointing_variants() {
        let q = |text: &str| plan_of(text).quantization.unwrap().value;
        assert_eq!(
            q("base_model: m\nadapter: qlora\nload_in_4bit: true\nbnb_config_kwargs:\n  bnb_4bit_quant_type: fp4\n  bnb_4bit_use_double_quant: false\n"),
            Some(Quantization::Fp4 { double_quant: false })
        );
        assert_eq!(q("base_model: m\nadapter: lora\ngptq: true\n"), Some(Quantization::Nf4 { double_quant: false }));
        let offloaded = plan_of("base_model: m\ngradient_checkpointing: true\nactivation_offloading: true\n");
        let gc = offloaded.gradient_checkpointing.unwrap();
        assert_eq!(gc.value, Checkpointing::CpuOffload);
        assert!(matches!(gc.origin, Origin::Derived { .. }));
        let fsdp_ac = plan_of("base_model: m\nfsdp_config:\n  activation_checkpointing: true\n");
        assert_eq!(fsdp_ac.gradient_checkpointing.unwrap().value, Checkpointing::Full);
        assert_eq!(
            fsdp_ac.sharding.unwrap().value,
            Sharding::Fsdp { full_shard: true, offload_params: false },
            "fsdp_config without a version is FSDP1 with FULL_SHARD"
        );
        let cce =
            plan_of("base_model: m\nplugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n");
        assert_eq!(cce.loss.unwrap().value, LossImpl::Liger);
        let no_plugin = plan_of("base_model: m\nliger_fused_linear_cross_entropy: true\n");
        assert_eq!(no_plugin.loss.unwrap().value, LossImpl::Full, "plugin keys do nothing without the plugin");
    }

    #[test]
    fn grpo_with_vllm_colocate() {
        let text = "\
base_model: Qwen/Qwen2.5-1.5B-Instruct
rl: grpo
trl:
  beta: 0.04
  num_generations: 8
  max_completion_length: 1024
  use_vllm: true
  vllm_mode: colocate
vllm:
  gpu_memory_utilization: 0.5
sequence_len: 1536
micro_batch_size: 4
gradient_accumulation_steps: 2
bf16: true
lora_target_linear: true
";
        let p = plan_of(text);
        assert_eq!(p.algorithm.as_ref().unwrap().value, RlAlgorithm::Grpo);
        assert_eq!(spanned(text, p.algorithm.as_ref().unwrap()), "grpo");
        let rl = p.rl.as_ref().unwrap();
        assert_eq!(spanned(text, &rl.num_generations), "8");
        assert_eq!(rl.max_completion_length.value, 1024);
        assert_eq!(rl.beta.value, 0.04);
        let vllm = rl.vllm.as_ref().unwrap();
        assert_eq!(vllm.mode.value, VllmMode::Colocate);
        assert_eq!(spanned(text, &vllm.gpu_memory_utilization), "0.5");
        let reference = p.reference_model.as_ref().unwrap();
        assert!(reference.value, "full GRPO with beta > 0 keeps a reference copy");
        assert!(p.lora.is_none(), "lora_target_linear without an adapter trains nothing extra");
    }

    #[test]
    fn grpo_defaults_follow_axolotl_and_trl() {
        let p = plan_of("base_model: m\nrl: grpo\nadapter: lora\ntrl:\n  use_vllm: true\n");
        let rl = p.rl.unwrap();
        assert_eq!(rl.num_generations.value, 8);
        assert!(matches!(rl.max_completion_length.origin, Origin::Unknown { .. }));
        let vllm = rl.vllm.unwrap();
        assert_eq!(vllm.gpu_memory_utilization.value, 0.3);
        assert_eq!(vllm.mode.value, VllmMode::Colocate);
        assert!(!p.reference_model.unwrap().value);
        let lora = p.lora.unwrap();
        assert!(lora.targets.value.query && lora.targets.value.value && !lora.targets.value.key);
        assert!(plan_of("base_model: m\nrl: dpo\n").reference_model.unwrap().value);
        assert!(!plan_of("base_model: m\nrl: orpo\n").reference_model.unwrap().value);
    }

    #[test]
    fn model_references() {
        assert!(model_ref("./outputs/merged").is_path);
        assert!(!model_ref("meta-llama/Llama-3.2-1B").is_path);
    }

    /// Every Axolotl config in the shared corpus builds a plan that names its base model.
    #[test]
    fn corpus_files_build_plans() {
        each_corpus_file("axolotl", Language::Yaml, |path, _, reader| {
            let p = plan(reader);
            if let Some(base) = reader.str("base_model") {
                let model = p.model.as_ref().unwrap_or_else(|| panic!("{}: no model", path.display()));
                assert_eq!(model.value.name, base.value.trim().trim_end_matches('/'), "{}", path.display());
                assert_eq!(model.value_span(), base.value_span());
            }
            assert!(p.method.is_some() && p.max_seq_length.is_some(), "{}", path.display());
        });
    }

    #[test]
    fn context_parallelism_and_its_deprecated_alias_split_sequences() {
        let plan = plan_of("base_model: NousResearch/Meta-Llama-3-8B\ncontext_parallel_size: 4\n");
        assert_eq!(plan.sequence_parallel.map(|n| n.value), Some(4));
        let plan = plan_of("base_model: NousResearch/Meta-Llama-3-8B\nsequence_parallel_degree: 2\n");
        assert_eq!(plan.sequence_parallel.map(|n| n.value), Some(2));
        assert!(plan_of("base_model: NousResearch/Meta-Llama-3-8B\n").sequence_parallel.is_none());
    }

    #[test]
    fn tensor_parallel_size_splits_the_model_with_transformers_plan() {
        let text = "base_model: NousResearch/Meta-Llama-3-8B\ntensor_parallel_size: 2\n";
        let tp = plan_of(text).tensor_parallel.expect("tensor parallel");
        assert_eq!(tp.value, TensorParallel { size: Some(2), layout: TpLayout::Transformers });
        assert_eq!(crate::format::test_support::spanned(text, &tp), "2");
        assert!(plan_of("base_model: NousResearch/Meta-Llama-3-8B\ntensor_parallel_size: 1\n")
            .tensor_parallel
            .is_none());
        let fsdp = "base_model: NousResearch/Meta-Llama-3-8B\ntensor_parallel_size: 2\ndp_shard_size: 2\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n";
        assert_eq!(plan_of(fsdp).shard_group.map(|n| n.value), Some(2));
    }
}
