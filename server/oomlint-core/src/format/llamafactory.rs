//! LLaMA-Factory YAML configs (`llamafactory-cli train config.yaml`), both the classic
//! argument set (`model_name_or_path`, `stage`, `finetuning_type`, TrainingArguments keys)
//! and the v1 plugin layout (`model`, `peft_config`, `dist_config`, `quant_config`).
//!
//! Defaults follow `src/llamafactory/hparams/{model_args,finetuning_args,data_args,parser}.py`,
//! `model/adapter.py` (fp32 upcast of trainable parameters), `model/loader.py`
//! (`torch_dtype="auto"`), `model/model_utils/checkpointing.py`, `train/trainer_utils.py`
//! (`create_ref_model`) and `v1/config/*.py` at hiyouga/LLaMA-Factory@ff6d4d12 (0.9.6.dev0).
//! The TrainingArguments keys follow transformers (LLaMA-Factory allows 4.55 to 5.8).

use super::axolotl::model_ref;
use super::hf_names::{lora_targets, optimizer_kind};
use super::{accelerate, deepspeed, facts, Reader};
use crate::plan::{
    Attention, Checkpointing, Dtype, Framework, LoraPlan, LossImpl, Method, Optimizer, Plan, Precision, Quantization,
    RlAlgorithm, Sharding, Sourced,
};

/// LLaMA-Factory's `check_dependencies()` raises outside these ranges unless
/// `DISABLE_VERSION_CHECK=1` (hiyouga/LLaMA-Factory src/llamafactory/extras/misc.py @ ff6d4d1, 2026-08).
pub(crate) const REQUIREMENTS: &[&str] = &[
    "transformers>=4.55.0,<=5.8.0,!=4.57.0,!=5.6.0",
    "accelerate>=1.3.0,<=1.15.0",
    "peft>=0.18.0,<=0.20.0",
    "trl>=0.18.0,<=0.24.0",
];

const VERSION: &str = "LLaMA-Factory 0.9.6";
const TRAINER: &str = "transformers TrainingArguments";

fn default<T>(value: T, what: &str) -> Sourced<T> {
    Sourced::default_of(value, format!("{VERSION} {what}"))
}

fn is_true(r: &Reader, key: &str) -> Option<Sourced<bool>> {
    r.bool(key).filter(|b| b.value)
}

/// The v1 layout names the model with `model` and configures plugins by mapping.
fn is_v1(r: &Reader) -> bool {
    !r.has("model_name_or_path") && ["model", "model_class", "peft_config", "dist_config"].iter().any(|k| r.has(k))
}

fn stage(r: &Reader) -> String {
    r.str("stage").map_or_else(|| "sft".to_string(), |s| s.value.to_ascii_lowercase())
}

fn algorithm(r: &Reader, stage: &str) -> Sourced<RlAlgorithm> {
    let pref_loss = r.str("pref_loss").map(|l| l.value.to_ascii_lowercase());
    let value = match stage {
        "sft" | "pt" => RlAlgorithm::Sft,
        "dpo" if pref_loss.as_deref() == Some("orpo") => RlAlgorithm::Orpo,
        "dpo" if pref_loss.as_deref() == Some("simpo") => RlAlgorithm::Cpo,
        "dpo" => RlAlgorithm::Dpo,
        "kto" => RlAlgorithm::Kto,
        _ => RlAlgorithm::Other,
    };
    match r.str("stage") {
        Some(s) => s.map(|_| value),
        None => default(value, "stage=sft"),
    }
}

/// `quantization_bit` with `quantization_method` (bnb by default) and `quantization_type`.
fn quantization(r: &Reader, bits_key: &str, method_key: &str) -> Sourced<Option<Quantization>> {
    let Some(bits) = r.u64(bits_key) else {
        return default(None, "quantization_bit=None (a pre-quantized GPTQ/AWQ checkpoint still loads quantized)");
    };
    let method = r.str(method_key).map_or_else(|| "bnb".to_string(), |m| m.value.to_ascii_lowercase());
    let four_bit = || {
        let double_quant = r.bool("double_quantization").is_none_or(|d| d.value);
        if r.str("quantization_type").is_some_and(|t| t.value == "fp4") {
            Quantization::Fp4 { double_quant }
        } else {
            Quantization::Nf4 { double_quant }
        }
    };
    match (bits.value, method.as_str()) {
        (8, _) => bits.map(|_| Some(Quantization::Int8)),
        (4, "bnb" | "auto") => bits.map(|_| Some(four_bit())),
        (b, m) => Sourced::derived(
            Some(Quantization::Nf4 { double_quant: false }),
            format!("quantization_bit: {b} with {m} (counted like 4-bit NF4)"),
        ),
    }
}

fn method(r: &Reader, quantized: bool) -> Sourced<Method> {
    let lora = if quantized { Method::Qlora } else { Method::Lora };
    let Some(kind) = r.str("finetuning_type") else {
        return default(lora, "finetuning_type=lora");
    };
    match kind.value.to_ascii_lowercase().as_str() {
        "full" => kind.map(|_| Method::Full),
        "lora" if quantized => Sourced::derived(Method::Qlora, "finetuning_type: lora over a quantized model"),
        "lora" => kind.map(|_| Method::Lora),
        "oft" => Sourced::derived(lora, "finetuning_type: oft (orthogonal adapters, counted as LoRA)"),
        "freeze" => Sourced::derived(
            Method::Full,
            "finetuning_type: freeze trains only freeze_trainable_layers (default 2) layers; counted as full",
        ),
        other => Sourced::unknown(Method::Full, format!("finetuning_type: {other} is not a LLaMA-Factory method")),
    }
}

fn lora(r: &Reader, prefix: &str, names: [&str; 4]) -> LoraPlan {
    let [rank_key, alpha_key, dropout_key, target_key] = names.map(|k| format!("{prefix}{k}"));
    let rank = r.u64(&rank_key).unwrap_or_else(|| {
        facts::count_as(facts::Framework::LlamaFactory, "lora_rank", |v| format!("{VERSION} {rank_key}={v}"))
    });
    let alpha = r.f64(&alpha_key).unwrap_or_else(|| {
        Sourced::derived(rank.value as f64 * 2.0, format!("{rank_key} × 2 (LLaMA-Factory's {alpha_key} default)"))
    });
    LoraPlan {
        dropout: r.f64(&dropout_key).unwrap_or_else(|| {
            facts::number_as(facts::Framework::LlamaFactory, "lora_dropout", |v| {
                format!("{VERSION} {dropout_key}={v:?}")
            })
        }),
        targets: r
            .strings(&target_key, true)
            .map(|t| t.map(|names| lora_targets(&names)))
            .unwrap_or_else(|| default(lora_targets(&["all".to_string()]), &format!("{target_key}=all"))),
        rank,
        alpha,
    }
}

fn precision(r: &Reader, load: Dtype) -> Sourced<Precision> {
    if let Some(pure) = is_true(r, "pure_bf16") {
        return pure.map(|_| Precision::True(Dtype::Bf16));
    }
    if let Some(bf16) = is_true(r, "bf16") {
        return bf16.map(|_| Precision::Mixed(Dtype::Bf16));
    }
    if let Some(fp16) = is_true(r, "fp16") {
        return fp16.map(|_| Precision::Mixed(Dtype::F16));
    }
    Sourced::default_of(Precision::True(load), format!("{TRAINER} bf16=False, fp16=False (no autocast)"))
}

fn attention(r: &Reader, default_kind: Attention, default_why: &str) -> Sourced<Attention> {
    let Some(flash) = r.str("flash_attn") else {
        return default(default_kind, default_why);
    };
    let value = match flash.value.to_ascii_lowercase().as_str() {
        "fa2" | "fa3" => Attention::Flash,
        "sdpa" => Attention::Sdpa,
        "disabled" | "eager" => Attention::Eager,
        _ => return Sourced::derived(default_kind, "flash_attn: auto keeps the transformers default (sdpa)"),
    };
    flash.map(|_| value)
}

fn optimizer(r: &Reader) -> Sourced<Optimizer> {
    let custom = [
        ("use_galore", "galore"),
        ("use_apollo", "apollo"),
        ("use_badam", "badam"),
        ("use_adam_mini", "adam_mini"),
        ("use_muon", "muon"),
    ];
    if let Some(o) =
        custom.iter().find_map(|(key, name)| is_true(r, key).map(|b| b.map(|_| Optimizer::Other(name.to_string()))))
    {
        return o;
    }
    r.str("optim").map(|o| o.map(|name| optimizer_kind(&name))).unwrap_or_else(|| {
        Sourced::default_of(Optimizer::AdamW, format!("{TRAINER} optim=adamw_torch (adamw_torch_fused on torch ≥ 2.8)"))
    })
}

/// Liger's fused linear cross-entropy runs only for stages that need no logits (pt, sft).
fn loss(r: &Reader, stage: &str) -> Sourced<LossImpl> {
    let Some(liger) = is_true(r, "enable_liger_kernel").or_else(|| is_true(r, "use_liger_kernel")) else {
        return Sourced::default_of(LossImpl::Full, "transformers cross-entropy over full logits");
    };
    if matches!(stage, "pt" | "sft") {
        liger.map(|_| LossImpl::Liger)
    } else {
        Sourced::derived(LossImpl::Full, format!("stage {stage} needs logits, so Liger keeps the plain cross-entropy"))
    }
}

fn sharding(r: &Reader) -> Sourced<Sharding> {
    if let Some(ds) = deepspeed::trainer_sharding(r, "deepspeed") {
        return ds;
    }
    if let Some(options) = accelerate::trainer_fsdp_options(r, "fsdp") {
        let offload = accelerate::fsdp_key(r, "fsdp_config.", "offload_params", Reader::bool).is_some_and(|o| o.value);
        return options.map(|s| match s {
            Sharding::Fsdp { full_shard, offload_params } => {
                Sharding::Fsdp { full_shard, offload_params: offload_params || offload }
            }
            other => other,
        });
    }
    Sourced::default_of(Sharding::None, format!("{TRAINER} deepspeed=None, fsdp=None (an accelerate config may shard)"))
}

/// `create_ref_model`: DPO (unless ORPO/SimPO loss) and KTO keep a reference model; a LoRA
/// run without `ref_model` gets its reference logits with the adapter disabled.
fn reference_model(r: &Reader, stage: &str, lora: bool) -> Option<Sourced<bool>> {
    let uses_reference = uses_reference(r, stage)?;
    Some(if !uses_reference {
        Sourced::derived(false, "pref_loss orpo/simpo needs no reference model")
    } else if let Some(reference) = r.str("ref_model") {
        reference.map(|_| true)
    } else if lora {
        Sourced::derived(false, "LoRA without ref_model: the adapter is disabled for the reference logits")
    } else {
        Sourced::derived(true, format!("stage {stage} without LoRA loads a second copy of the model"))
    })
}

/// Whether the stage computes reference log-probabilities (None for stages without a preference loss).
fn uses_reference(r: &Reader, stage: &str) -> Option<bool> {
    let pref_loss = r.str("pref_loss").map(|l| l.value.to_ascii_lowercase());
    match stage {
        "dpo" => Some(!matches!(pref_loss.as_deref(), Some("orpo" | "simpo"))),
        "kto" => Some(true),
        _ => None,
    }
}

/// The trainers' `compute_reference_log_probs` runs a no-grad forward after the policy's each
/// step, through `ref_model` or the policy with its adapter disabled (`train/dpo/trainer.py`,
/// `train/kto/trainer.py` `get_batch_loss_metrics`).
fn reference_forward(r: &Reader, stage: &str) -> Option<Sourced<bool>> {
    let uses = uses_reference(r, stage)?;
    Some(Sourced::derived(uses, format!("stage {stage}: reference log-probabilities computed every step")))
}

fn classic_plan(r: &Reader, plan: &mut Plan) {
    let stage = stage(r);
    plan.model = r.str("model_name_or_path").map(|m| m.map(|name| model_ref(&name)));
    let quantization = quantization(r, "quantization_bit", "quantization_method");
    let method = method(r, quantization.value.is_some());
    let lora = r.str("finetuning_type").is_none_or(|f| f.value.eq_ignore_ascii_case("lora"));
    if lora {
        plan.lora = Some(lora_plan(r));
    }
    let sharding = sharding(r);
    let zero3 = matches!(sharding.value, Sharding::Zero { stage: 3, .. });
    let keeps_half = is_true(r, "pure_bf16").is_some() || is_true(r, "use_badam").is_some();
    let full = r.str("finetuning_type").is_some_and(|f| f.value.eq_ignore_ascii_case("full"));
    plan.load_dtype = Some(if full && !keeps_half && !zero3 {
        Sourced::derived(Dtype::F32, "full fine-tuning upcasts the trainable parameters to fp32 (model/adapter.py)")
    } else {
        default(Dtype::Auto, "torch_dtype=auto (the checkpoint's dtype)")
    });
    let load = plan.load_dtype.as_ref().map_or(Dtype::Auto, |d| d.value);
    plan.precision = Some(precision(r, load));
    plan.reference_model = reference_model(r, &stage, lora);
    plan.reference_forward = reference_forward(r, &stage);
    plan.method = Some(method);
    plan.quantization = Some(quantization);

    let micro = r.u64("per_device_train_batch_size").unwrap_or_else(|| {
        facts::count_as(facts::Framework::Transformers, "per_device_train_batch_size", |v| {
            format!("{TRAINER} per_device_train_batch_size={v}")
        })
    });
    let accumulation = r.u64("gradient_accumulation_steps").unwrap_or_else(|| {
        facts::count_as(facts::Framework::Transformers, "gradient_accumulation_steps", |v| {
            format!("{TRAINER} gradient_accumulation_steps={v}")
        })
    });
    plan.global_batch_size = Some(Sourced::derived(
        micro.value * accumulation.value,
        "per_device_train_batch_size × gradient_accumulation_steps (× the world size)",
    ));
    plan.micro_batch_size = Some(micro);
    plan.gradient_accumulation = Some(accumulation);

    plan.max_seq_length = Some(r.u64("cutoff_len").unwrap_or_else(|| {
        facts::count_as(facts::Framework::LlamaFactory, "cutoff_len", |v| format!("{VERSION} cutoff_len={v}"))
    }));
    plan.packing = Some(match (r.bool("packing"), is_true(r, "neat_packing")) {
        (Some(p), _) => p,
        (None, Some(neat)) => neat,
        (None, None) => Sourced::derived(stage == "pt", "packing=None turns packing on for stage pt only (parser.py)"),
    });
    plan.gradient_checkpointing =
        Some(match (r.bool("disable_gradient_checkpointing"), is_true(r, "use_unsloth_gc")) {
            (Some(off), _) if off.value => off.map(|_| Checkpointing::None),
            (_, Some(unsloth)) => unsloth.map(|_| Checkpointing::CpuOffload),
            (Some(on), None) => on.map(|_| Checkpointing::Full),
            (None, None) => default(Checkpointing::Full, "disable_gradient_checkpointing=False (checkpointing on)"),
        });
    plan.attention = Some(attention(r, Attention::Sdpa, "flash_attn=auto (transformers default, sdpa)"));
    plan.optimizer = Some(optimizer(r));
    plan.loss = Some(loss(r, &stage));
    plan.sharding = Some(sharding);
    plan.algorithm = Some(algorithm(r, &stage));
}

fn lora_plan(r: &Reader) -> LoraPlan {
    lora(r, "", ["lora_rank", "lora_alpha", "lora_dropout", "lora_target"])
}

fn v1_sharding(r: &Reader) -> Sourced<Sharding> {
    let Some(name) = r.str("dist_config.name") else {
        return default(Sharding::None, "v1 dist_config=None");
    };
    match name.value.to_ascii_lowercase().as_str() {
        "fsdp2" | "fsdp" => name.map(|_| Sharding::Fsdp { full_shard: true, offload_params: false }),
        "deepspeed" => r
            .str("dist_config.config_file")
            .and_then(|file| deepspeed::sharding_from_name(&file))
            .unwrap_or_else(|| {
                Sourced::unknown(
                    Sharding::Zero { stage: 0, offload_optimizer: false, offload_params: false },
                    "the ZeRO stage is set in dist_config.config_file, which is not read",
                )
            }),
        other => Sourced::unknown(Sharding::None, format!("dist_config {other} is not modelled")),
    }
}

fn v1_plan(r: &Reader, plan: &mut Plan) {
    plan.model = r.str("model").map(|m| m.map(|name| model_ref(&name)));
    let quantization = match r.str("quant_config.name") {
        Some(_) => quantization(r, "quant_config.quantization_bit", "quant_config.name"),
        None => default(None, "v1 quant_config=None"),
    };
    let quantized = quantization.value.is_some();
    plan.method = Some(match r.str("peft_config.name") {
        Some(p) if p.value.eq_ignore_ascii_case("lora") => {
            plan.lora = Some(lora(r, "peft_config.", ["r", "lora_alpha", "lora_dropout", "target_modules"]));
            let method = if quantized { Method::Qlora } else { Method::Lora };
            p.map(|_| method)
        }
        Some(p) => Sourced::derived(Method::Lora, format!("peft_config {} (counted as LoRA)", p.value)),
        None => default(Method::Full, "v1 peft_config=None (full fine-tuning)"),
    });
    plan.quantization = Some(quantization);
    plan.load_dtype = Some(default(Dtype::Auto, "v1 dtype=auto (the checkpoint's dtype)"));
    plan.precision = Some(match r.bool("bf16") {
        Some(b) if b.value => b.map(|_| Precision::Mixed(Dtype::Bf16)),
        Some(b) => b.map(|_| Precision::True(Dtype::Auto)),
        None => default(Precision::Mixed(Dtype::Bf16), "v1 bf16=True"),
    });
    let micro = r.u64("micro_batch_size").unwrap_or_else(|| default(1, "v1 micro_batch_size=1"));
    plan.global_batch_size = r.u64("global_batch_size");
    plan.micro_batch_size = Some(micro);
    plan.max_seq_length = Some(r.u64("cutoff_len").unwrap_or_else(|| default(2048, "v1 cutoff_len=2048")));
    plan.gradient_checkpointing = Some(
        r.bool("enable_activation_checkpointing")
            .map(|c| c.map(|on| if on { Checkpointing::Full } else { Checkpointing::None }))
            .unwrap_or_else(|| default(Checkpointing::Full, "v1 enable_activation_checkpointing=True")),
    );
    plan.attention = Some(attention(r, Attention::Sdpa, "v1 flash_attn=sdpa"));
    plan.optimizer = Some(
        r.str("optim_config.name")
            .map(|o| o.map(|name| optimizer_kind(&name)))
            .unwrap_or_else(|| default(Optimizer::AdamW, "v1 optim_config=None (torch.optim.AdamW)")),
    );
    plan.loss = Some(default(LossImpl::Full, "v1 cross-entropy over full logits"));
    plan.sharding = Some(v1_sharding(r));
    plan.algorithm = Some(default(RlAlgorithm::Sft, "v1 supervised training"));
}

pub(crate) fn plan(r: &Reader) -> Plan {
    let mut plan = Plan::new(Framework::Llamafactory);
    // `llamafactory-cli export` and `chat`/`api` configs name where to write or how to
    // serve, and do not train (`do_train` defaults to False: `run_sft` trains only with it).
    let trains = r.bool("do_train").is_some_and(|b| b.value);
    let command = match (r.has("export_dir"), r.has("infer_backend")) {
        _ if trains => "train",
        (true, _) => "export",
        (false, true) => "chat",
        _ => "train",
    };
    plan.command = Some(command.to_string());
    if is_v1(r) {
        v1_plan(r, &mut plan);
    } else {
        classic_plan(r, &mut plan);
    }
    plan.trainer = Some(super::trl::trainer_settings(super::Format::Llamafactory, r));
    plan
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

    #[test]
    fn inference_and_export_configs_do_not_train() {
        let chat =
            plan_of("model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\ntemplate: qwen3\ninfer_backend: huggingface\n");
        assert_eq!(chat.command.as_deref(), Some("chat"));
        assert!(!chat.trains());
        let export = plan_of("model_name_or_path: saves/sft\ntemplate: qwen3\nexport_dir: saves/merged\n");
        assert!(!export.trains());
        let train =
            plan_of("model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\ninfer_backend: vllm\n");
        assert!(train.trains(), "do_train wins");
    }

    const QLORA: &str = "\
### model
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
quantization_bit: 4  # bnb by default
### method
stage: sft
finetuning_type: lora
lora_rank: 16
lora_target: q_proj,v_proj
### dataset
cutoff_len: 1024
### train
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
flash_attn: fa2
enable_liger_kernel: true
deepspeed: examples/deepspeed/ds_z2_offload_config.json
";

    #[test]
    fn qlora_values_and_spans() {
        let p = plan_of(QLORA);
        let model = p.model.as_ref().unwrap();
        assert_eq!(model.value.name, "meta-llama/Meta-Llama-3-8B-Instruct");
        assert_eq!(spanned(QLORA, model), "meta-llama/Meta-Llama-3-8B-Instruct");
        assert_eq!(p.method.as_ref().unwrap().value, Method::Qlora);
        let quantization = p.quantization.as_ref().unwrap();
        assert_eq!(quantization.value, Some(Quantization::Nf4 { double_quant: true }));
        assert_eq!(spanned(QLORA, quantization), "4");
        let lora = p.lora.as_ref().unwrap();
        assert_eq!(spanned(QLORA, &lora.rank), "16");
        assert_eq!(lora.alpha.value, 32.0);
        assert!(matches!(lora.alpha.origin, Origin::Derived { .. }));
        assert!(lora.targets.value.query && lora.targets.value.value && !lora.targets.value.mlp_up);
        assert_eq!(spanned(QLORA, &lora.targets), "q_proj,v_proj");
        assert_eq!(spanned(QLORA, p.micro_batch_size.as_ref().unwrap()), "2");
        assert_eq!(p.global_batch_size.as_ref().unwrap().value, 16);
        assert_eq!(spanned(QLORA, p.max_seq_length.as_ref().unwrap()), "1024");
        assert_eq!(p.precision.as_ref().unwrap().value, Precision::Mixed(Dtype::Bf16));
        assert_eq!(p.load_dtype.as_ref().unwrap().value, Dtype::Auto);
        assert_eq!(spanned(QLORA, p.attention.as_ref().unwrap()), "fa2");
        assert_eq!(p.loss.as_ref().unwrap().value, LossImpl::Liger);
        let gc = p.gradient_checkpointing.as_ref().unwrap();
        assert_eq!(gc.value, Checkpointing::Full);
        assert!(!gc.is_from_file());
        assert_eq!(
            p.sharding.as_ref().unwrap().value,
            Sharding::Zero { stage: 2, offload_optimizer: true, offload_params: false }
        );
        assert!(!p.packing.as_ref().unwrap().value);
        assert!(p.reference_model.is_none());
    }

    #[test]
    fn full_dpo_with_fsdp_and_defaults() {
        let text = "\
model_name_or_path: /mnt/models/qwen3-8b
stage: dpo
finetuning_type: full
pref_beta: 0.1
disable_gradient_checkpointing: true
fsdp: full_shard auto_wrap
fsdp_config:
  fsdp_offload_params: true
optim: adamw_bnb_8bit
";
        let p = plan_of(text);
        assert!(p.model.as_ref().unwrap().value.is_path);
        assert_eq!(spanned(text, p.method.as_ref().unwrap()), "full");
        assert!(p.lora.is_none());
        assert_eq!(p.algorithm.as_ref().unwrap().value, RlAlgorithm::Dpo);
        assert!(p.reference_model.as_ref().unwrap().value);
        assert_eq!(p.load_dtype.as_ref().unwrap().value, Dtype::F32);
        assert_eq!(p.precision.as_ref().unwrap().value, Precision::True(Dtype::F32));
        let gc = p.gradient_checkpointing.as_ref().unwrap();
        assert_eq!(gc.value, Checkpointing::None);
        assert_eq!(spanned(text, gc), "true");
        let sharding = p.sharding.as_ref().unwrap();
        assert_eq!(sharding.value, Sharding::Fsdp { full_shard: true, offload_params: true });
        assert_eq!(spanned(text, sharding), "full_shard auto_wrap");
        assert_eq!(spanned(text, p.optimizer.as_ref().unwrap()), "adamw_bnb_8bit");
        assert_eq!(p.optimizer.as_ref().unwrap().value, Optimizer::AdamW8bit);
        assert_eq!(p.micro_batch_size.as_ref().unwrap().value, 8);
        assert_eq!(p.max_seq_length.as_ref().unwrap().value, 2048);
    }

    #[test]
    fn defaults_and_stage_rules() {
        let p = plan_of("model_name_or_path: Qwen/Qwen3-4B\nstage: pt\n");
        assert_eq!(p.method.as_ref().unwrap().value, Method::Lora);
        assert!(p.lora.as_ref().unwrap().targets.value.mlp_down, "lora_target defaults to all");
        assert!(p.packing.as_ref().unwrap().value, "pt packs by default");
        let lora_dpo = plan_of("model_name_or_path: m\nstage: dpo\nfinetuning_type: lora\n");
        assert!(!lora_dpo.reference_model.unwrap().value);
        let orpo = plan_of("model_name_or_path: m\nstage: dpo\npref_loss: orpo\nfinetuning_type: full\n");
        assert_eq!(orpo.algorithm.unwrap().value, RlAlgorithm::Orpo);
        assert!(!orpo.reference_model.unwrap().value);
        let dpo_liger = plan_of("model_name_or_path: m\nstage: dpo\nenable_liger_kernel: true\n");
        assert_eq!(dpo_liger.loss.unwrap().value, LossImpl::Full);
        let zero3 = plan_of("model_name_or_path: m\nfinetuning_type: full\ndeepspeed: ds_z3_config.json\n");
        assert_eq!(zero3.load_dtype.unwrap().value, Dtype::Auto);
        let unsloth_gc = plan_of("model_name_or_path: m\nuse_unsloth_gc: true\n");
        assert_eq!(unsloth_gc.gradient_checkpointing.unwrap().value, Checkpointing::CpuOffload);
        let hqq = plan_of("model_name_or_path: m\nquantization_bit: 2\nquantization_method: hqq\n");
        assert!(matches!(hqq.quantization.unwrap().origin, Origin::Derived { .. }));
        let eight = plan_of("model_name_or_path: m\nquantization_bit: 8\n");
        assert_eq!(eight.quantization.unwrap().value, Some(Quantization::Int8));
        assert_eq!(eight.method.unwrap().value, Method::Qlora);
    }

    #[test]
    fn v1_layout() {
        let text = "\
model: Qwen/Qwen3-0.6B
model_class: llm
peft_config:
  name: lora
  r: 16
  lora_alpha: 32
  target_modules: all
quant_config:
  name: bnb
  quantization_bit: 4
dist_config:
  name: fsdp2
micro_batch_size: 2
cutoff_len: 4096
";
        let p = plan_of(text);
        assert_eq!(spanned(text, p.model.as_ref().unwrap()), "Qwen/Qwen3-0.6B");
        assert_eq!(p.method.as_ref().unwrap().value, Method::Qlora);
        let lora = p.lora.as_ref().unwrap();
        assert_eq!(spanned(text, &lora.rank), "16");
        assert!(lora.targets.value.mlp_gate);
        assert_eq!(p.quantization.as_ref().unwrap().value, Some(Quantization::Nf4 { double_quant: true }));
        assert_eq!(spanned(text, p.micro_batch_size.as_ref().unwrap()), "2");
        assert_eq!(p.max_seq_length.as_ref().unwrap().value, 4096);
        assert!(matches!(p.sharding.as_ref().unwrap().value, Sharding::Fsdp { full_shard: true, .. }));
        assert_eq!(p.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::Full);
    }

    /// Every LLaMA-Factory config in the shared corpus builds a plan that names its model.
    #[test]
    fn corpus_files_build_plans() {
        each_corpus_file("llamafactory", Language::Yaml, |path, _, reader| {
            let p = plan(reader);
            if let Some(named) = reader.str("model_name_or_path").or_else(|| reader.str("model")) {
                let model = p.model.as_ref().unwrap_or_else(|| panic!("{}: no model", path.display()));
                assert_eq!(model.value_span(), named.value_span(), "{}", path.display());
            }
            assert!(p.method.is_some() && p.max_seq_length.is_some(), "{}", path.display());
        });
    }
}
