//! TRL CLI configs (`trl sft|dpo|grpo --config file.yaml`) and plain transformers
//! `TrainingArguments` YAML.
//!
//! A TRL YAML is one flat mapping over `TrainingArguments`, the command's config class,
//! `ModelConfig` and the script arguments (`trl/scripts/utils.py` `TrlParser`). Defaults
//! follow `trl/trainer/{base,sft,dpo,grpo,model}_config.py` at TRL 1.10.0.dev0 and
//! `transformers/training_args.py` (v5 tree).

use super::hf_names::{attention_kind, lora_targets, optimizer_kind};
use super::{deepspeed, Format, Reader};
use crate::plan::{
    Attention, Checkpointing, DpoSettings, Dtype, Framework, GrpoSettings, LoraPlan, LossImpl, Method, ModelRef,
    Optimizer, Plan, Precision, Quantization, RlAlgorithm, RlPlan, SftSettings, Sharding, Sourced, TrainerSettings,
    VllmMode, VllmPlan,
};

use super::facts::{self, Framework::*};

const TRL: &str = "TRL 1.10";
const TRANSFORMERS: &str = "transformers 5";

pub(crate) fn dtype_of(name: &str) -> Option<Dtype> {
    Some(match name.trim_start_matches("torch.") {
        "float32" | "fp32" | "float" => Dtype::F32,
        "bfloat16" | "bf16" => Dtype::Bf16,
        "float16" | "fp16" | "half" => Dtype::F16,
        "auto" => Dtype::Auto,
        _ => return None,
    })
}

fn trl_default<T>(value: T, what: &str) -> Sourced<T> {
    Sourced::default_of(value, format!("{TRL} {what}"))
}

fn hf_default<T>(value: T, what: &str) -> Sourced<T> {
    Sourced::default_of(value, format!("{TRANSFORMERS} TrainingArguments.{what}"))
}

pub(crate) fn plan(format: Format, r: &Reader) -> Plan {
    let algorithm = match format {
        Format::TrlDpo => RlAlgorithm::Dpo,
        Format::TrlGrpo => RlAlgorithm::Grpo,
        _ => RlAlgorithm::Sft,
    };
    let mut plan = plan_for(format, algorithm, r);
    plan.algorithm = Some(Sourced::derived(algorithm, "trl command"));
    plan
}

/// The plan of a TRL trainer's config: `format` the file's (a TRL config class for every TRL
/// trainer), `algorithm` the trainer that reads it.
pub(crate) fn plan_for(format: Format, algorithm: RlAlgorithm, r: &Reader) -> Plan {
    let is_trl = format != Format::Transformers;
    let mut plan = Plan::new(if is_trl { Framework::Trl } else { Framework::Transformers });
    plan.command = is_trl.then(|| match preference_config(algorithm) {
        Some((_, class)) => class.trim_end_matches("Config").to_ascii_lowercase(),
        None => format.name().trim_start_matches("trl-").to_string(),
    });
    plan.algorithm = Some(Sourced::derived(algorithm, "the trainer class"));
    plan.model = r
        .str("model_name_or_path")
        .map(|s| s.map(|name| ModelRef { is_path: name.starts_with(['/', '.', '~']), name }));

    plan.load_dtype = Some(
        r.first(&["dtype", "torch_dtype"], |r, k| r.str(k))
            .and_then(|s| Some(Sourced { value: dtype_of(&s.value)?, origin: s.origin }))
            .unwrap_or_else(|| {
                if is_trl {
                    trl_default(Dtype::F32, "ModelConfig.dtype=float32 (since 0.27)")
                } else {
                    Sourced::unknown(Dtype::F32, "the training script chooses the load dtype")
                }
            }),
    );
    let fp16 = r.bool("fp16").filter(|b| b.value);
    let bf16 = r.bool("bf16");
    plan.precision = Some(match (&bf16, &fp16) {
        (_, Some(f)) => Sourced { value: Precision::Mixed(Dtype::F16), origin: f.origin.clone() },
        (Some(b), None) if b.value => Sourced { value: Precision::Mixed(Dtype::Bf16), origin: b.origin.clone() },
        (Some(b), None) => Sourced { value: Precision::True(Dtype::F32), origin: b.origin.clone() },
        (None, None) if is_trl => trl_default(Precision::Mixed(Dtype::Bf16), "bf16=None → not fp16 (since 0.19)"),
        (None, None) => hf_default(Precision::True(Dtype::F32), "bf16=False"),
    });

    let load_4bit = r.bool("load_in_4bit").filter(|b| b.value);
    let load_8bit = r.bool("load_in_8bit").filter(|b| b.value);
    let double_quant = r.bool("use_bnb_nested_quant").is_some_and(|b| b.value);
    plan.quantization = Some(match (&load_4bit, &load_8bit) {
        (Some(b), _) => {
            let fp4 = r.str("bnb_4bit_quant_type").is_some_and(|t| t.value == "fp4");
            let q = if fp4 { Quantization::Fp4 { double_quant } } else { Quantization::Nf4 { double_quant } };
            Sourced { value: Some(q), origin: b.origin.clone() }
        }
        (None, Some(b)) => Sourced { value: Some(Quantization::Int8), origin: b.origin.clone() },
        (None, None) => trl_default(None, "load_in_4bit=False, load_in_8bit=False"),
    });

    let peft = r.bool("use_peft").filter(|b| b.value);
    plan.method = Some(match &peft {
        Some(p) if load_4bit.is_some() => Sourced { value: Method::Qlora, origin: p.origin.clone() },
        Some(p) => Sourced { value: Method::Lora, origin: p.origin.clone() },
        None => trl_default(Method::Full, "use_peft=False"),
    });
    if peft.is_some() {
        let targets =
            r.strings("lora_target_modules", false).map(|s| s.map(|names| lora_targets(&names))).unwrap_or_else(|| {
                let names = vec!["q_proj".to_string(), "v_proj".to_string()];
                Sourced::default_of(
                    lora_targets(&names),
                    "PEFT default target modules for Llama-style models (q_proj, v_proj)",
                )
            });
        plan.lora = Some(LoraPlan {
            rank: r
                .u64("lora_r")
                .unwrap_or_else(|| trl_default(facts::count(TrlModel, "lora_r"), "ModelConfig.lora_r")),
            alpha: r
                .f64("lora_alpha")
                .unwrap_or_else(|| trl_default(facts::number(TrlModel, "lora_alpha"), "ModelConfig.lora_alpha")),
            dropout: r
                .f64("lora_dropout")
                .unwrap_or_else(|| trl_default(facts::number(TrlModel, "lora_dropout"), "ModelConfig.lora_dropout")),
            targets,
        });
    }

    plan.micro_batch_size = Some(r.u64("per_device_train_batch_size").unwrap_or_else(|| {
        hf_default(facts::count(Transformers, "per_device_train_batch_size"), "per_device_train_batch_size")
    }));
    plan.gradient_accumulation = Some(r.u64("gradient_accumulation_steps").unwrap_or_else(|| {
        hf_default(facts::count(Transformers, "gradient_accumulation_steps"), "gradient_accumulation_steps")
    }));
    plan.devices = r.u64("num_processes");

    plan.gradient_checkpointing = Some(match r.bool("gradient_checkpointing") {
        Some(b) => b.map(|on| if on { Checkpointing::Full } else { Checkpointing::None }),
        None if is_trl => trl_default(Checkpointing::Full, "gradient_checkpointing=True (since 0.22)"),
        None => hf_default(Checkpointing::None, "gradient_checkpointing=False"),
    });
    plan.attention = Some(
        r.str("attn_implementation")
            .and_then(|s| Some(Sourced { value: attention_kind(&s.value)?, origin: s.origin }))
            .unwrap_or_else(|| Sourced::default_of(Attention::Sdpa, "transformers picks sdpa when available")),
    );
    plan.optimizer = Some(
        r.str("optim")
            .map(|s| s.map(|n| optimizer_kind(&n)))
            .unwrap_or_else(|| hf_default(Optimizer::AdamWFused, "optim=adamw_torch_fused (torch >= 2.8)")),
    );
    let liger = r.bool("use_liger_kernel").filter(|b| b.value);
    plan.loss = Some(match (&liger, format) {
        (Some(l), _) => Sourced { value: LossImpl::Liger, origin: l.origin.clone() },
        (None, Format::TrlSft) => match r.str("loss_type") {
            Some(t) if t.value == "chunked_nll" => t.map(|_| LossImpl::TrlChunkedNll),
            Some(t) => t.map(|_| LossImpl::Full),
            // The estimate resolves it by release: full logits up to 1.5, `chunked_nll` in 1.6–1.14,
            // the fused LM head from 1.15 (`estimate::TrlLoss`).
            None => {
                trl_default(LossImpl::TrlChunkedNll, "SFTConfig.loss_type default (chunked; fused LM head since 1.15)")
            }
        },
        _ => Sourced::default_of(LossImpl::Full, "transformers causal-LM loss over full fp32 logits"),
    });
    plan.sharding = deepspeed::trainer_sharding(r, "deepspeed").or_else(|| {
        r.strings("fsdp", true).filter(|s| !s.value.is_empty()).map(|s| {
            let opts = s.value.join(" ");
            s.map(|_| Sharding::Fsdp {
                full_shard: opts.contains("full_shard") || opts.contains("hybrid_shard"),
                offload_params: opts.contains("offload"),
            })
        })
    });

    match format {
        _ if preference_config(algorithm).is_some() => plan_preference(&mut plan, algorithm, r),
        Format::TrlSft => {
            plan.max_seq_length = Some(
                r.first(&["max_length", "max_seq_length"], |r, k| r.u64(k))
                    .unwrap_or_else(|| trl_default(facts::count(TrlSft, "max_length"), "SFTConfig.max_length")),
            );
            plan.packing = Some(
                r.flag("packing").unwrap_or_else(|| trl_default(facts::flag(TrlSft, "packing"), "SFTConfig.packing")),
            );
            plan.padding_free = Some(
                r.flag("padding_free")
                    .unwrap_or_else(|| trl_default(facts::flag(TrlSft, "padding_free"), "SFTConfig.padding_free")),
            );
        }
        Format::TrlGrpo => plan_grpo(&mut plan, r, peft.is_some()),
        _ => plan.max_seq_length = r.u64("max_length"),
    }
    let mut trainer = trainer_settings(format, r);
    if algorithm != RlAlgorithm::Dpo {
        trainer.dpo = None;
    }
    if let Some(rl) = plan.rl.as_ref().filter(|_| format == Format::TrlGrpo) {
        trainer.grpo = Some(grpo_settings(r, rl));
    }
    plan.trainer = Some(trainer);
    plan
}

/// The config class and facts row of a preference trainer (None for the others).
pub(crate) fn preference_config(algorithm: RlAlgorithm) -> Option<(facts::Framework, &'static str)> {
    Some(match algorithm {
        RlAlgorithm::Dpo => (TrlDpo, "DPOConfig"),
        RlAlgorithm::Orpo => (TrlOrpo, "ORPOConfig"),
        RlAlgorithm::Kto => (TrlKto, "KTOConfig"),
        RlAlgorithm::Cpo => (TrlCpo, "CPOConfig"),
        RlAlgorithm::Reward => (TrlReward, "RewardConfig"),
        _ => return None,
    })
}

/// DPO, ORPO, KTO, CPO/SimPO and reward modelling: the sequence length is `max_length`
/// (prompt and completion together, `trl/trainer/dpo_trainer.py` `DataCollatorForPreference`);
/// DPOTrainer and KTOTrainer run a reference forward each step unless
/// `precompute_ref_log_probs`, through a second copy of the model unless PEFT disables the
/// adapters instead (`dpo_trainer.py` `DPOTrainer.__init__` "Reference model",
/// `kto_trainer.py` `KTOTrainer.__init__`); ORPO, CPO and reward models have no reference.
fn plan_preference(plan: &mut Plan, algorithm: RlAlgorithm, r: &Reader) {
    let Some((facts_of, class)) = preference_config(algorithm) else { return };
    plan.max_seq_length = Some(
        r.u64("max_length")
            .unwrap_or_else(|| facts::count_as(facts_of, "max_length", |v| format!("{TRL} {class}.max_length={v}"))),
    );
    if matches!(algorithm, RlAlgorithm::Dpo | RlAlgorithm::Kto) {
        let precompute = r.bool("precompute_ref_log_probs").unwrap_or_else(|| {
            facts::default(facts_of, "precompute_ref_log_probs", facts::flag(facts_of, "precompute_ref_log_probs"))
        });
        plan.reference_model = Some(Sourced::derived(
            !precompute.value,
            format!("{class}: a frozen copy of the model unless precompute_ref_log_probs (or PEFT)"),
        ));
        plan.reference_forward = Some(precompute.map(|p| !p));
    } else {
        plan.reference_model = Some(Sourced::derived(false, format!("{class}: no reference model")));
    }
    preference_adapters(plan, r);
}

/// What a preference trainer does to the adapters of a PEFT run: the reference is the model
/// with its adapters disabled, not a copy, and `disable_dropout_in_model` sets every
/// `nn.Dropout` to p=0, LoRA's included (`trl/trainer/dpo_trainer.py` `DPOTrainer.__init__`,
/// `disable_dropout=True` in every preference config). Scripts call it again once their
/// PEFT call is read.
pub(crate) fn preference_adapters(plan: &mut Plan, r: &Reader) {
    let Some((_, class)) = plan.algorithm.as_ref().and_then(|a| preference_config(a.value)) else { return };
    let peft = plan.method.as_ref().is_some_and(|m| m.value != Method::Full && m.value != Method::Pretrain);
    if let (true, Some(reference)) = (peft, plan.reference_model.as_mut()) {
        if reference.value {
            *reference = Sourced::derived(
                false,
                format!("{class} with PEFT: the reference is the model with its adapters disabled"),
            );
        }
    }
    if let (Some(lora), false) = (plan.lora.as_mut(), r.bool("disable_dropout").is_some_and(|b| !b.value)) {
        lora.dropout = Sourced::derived(0.0, format!("{class}.disable_dropout=True sets LoRA dropout to p=0"));
    }
}

/// The trainer's own settings of a TRL, transformers or LLaMA-Factory config.
pub(crate) fn trainer_settings(format: Format, r: &Reader) -> TrainerSettings {
    let is_trl = matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo);
    let s = facts::Settings(r);
    // TRL's configs override some TrainingArguments defaults.
    let trl_or_hf = |key: &str| if is_trl && facts::has(Trl, key) { Trl } else { Transformers };
    let fp16 = s.bool(Transformers, "fp16");
    let bf16 = r.bool("bf16").unwrap_or_else(|| {
        if is_trl {
            Sourced::derived(!fp16.value, format!("bf16=None → not fp16 ({})", facts::get(Trl, "bf16").source))
        } else {
            facts::default(Transformers, "bf16", facts::flag(Transformers, "bf16"))
        }
    });
    let logging_steps = s.number(trl_or_hf("logging_steps"), "logging_steps");
    let eval_steps = r.f64("eval_steps").unwrap_or_else(|| {
        Sourced::derived(
            logging_steps.value,
            format!("eval_steps=None → logging_steps ({})", facts::get(Transformers, "eval_steps").source),
        )
    });
    let dtype = ["dtype", "torch_dtype", "model_init_kwargs.dtype"]
        .iter()
        .find_map(|k| r.nullable(k, |r, k| r.str(k)))
        .unwrap_or_else(|| facts::default(TrlModel, "dtype", Some(facts::text(TrlModel, "dtype").to_string())));
    let prefetch = r
        .nullable("dataloader_prefetch_factor", |r, k| r.u64(k))
        .unwrap_or_else(|| facts::default(Transformers, "dataloader_prefetch_factor", None));
    TrainerSettings {
        model_config: is_trl,
        model_name_or_path: r.str("model_name_or_path"),
        dtype,
        use_peft: s.flag(TrlModel, "use_peft"),
        load_in_4bit: s.flag(TrlModel, "load_in_4bit"),
        load_in_8bit: s.flag(TrlModel, "load_in_8bit"),
        fp16,
        bf16,
        fp16_full_eval: s.bool(Transformers, "fp16_full_eval"),
        bf16_full_eval: s.bool(Transformers, "bf16_full_eval"),
        max_grad_norm: s.number(Transformers, "max_grad_norm"),
        auto_find_batch_size: s.flag(Transformers, "auto_find_batch_size"),
        per_device_eval_batch_size: s.count(Transformers, "per_device_eval_batch_size"),
        eval_strategy: s.text_of(Transformers, &["eval_strategy", "evaluation_strategy"]),
        save_strategy: s.text(Transformers, "save_strategy"),
        logging_steps,
        eval_steps,
        save_steps: s.number(Transformers, "save_steps"),
        load_best_model_at_end: s.flag(Transformers, "load_best_model_at_end"),
        lr_scheduler_type: s.text(Transformers, "lr_scheduler_type"),
        dataloader_num_workers: s.count(Transformers, "dataloader_num_workers"),
        dataloader_prefetch_factor: prefetch,
        deepspeed: r
            .entry("deepspeed")
            .filter(|e| e.value.as_mapping().is_some())
            .map(|_| deepspeed::settings(r, "deepspeed.")),
        sft: (format == Format::TrlSft).then(|| SftSettings {
            max_length: r
                .nullable("max_length", |r, k| r.u64(k))
                .unwrap_or_else(|| facts::default(TrlSft, "max_length", Some(facts::count(TrlSft, "max_length")))),
            default_max_length: facts::count(TrlSft, "max_length"),
        }),
        dpo: (format == Format::TrlDpo).then(|| DpoSettings {
            loss_type: r.nullable("loss_type", |r, k| r.strings(k, false)).unwrap_or_else(|| {
                let default = facts::texts(TrlDpo, "loss_type").iter().map(|t| t.to_string()).collect();
                facts::default(TrlDpo, "loss_type", Some(default))
            }),
            loss_weights: list_items(r, "loss_weights"),
        }),
        grpo: None,
    }
}

/// The items of a list (each scalar's text; other items as empty strings).
fn list_items(r: &Reader, path: &str) -> Option<Sourced<Vec<String>>> {
    let entry = r.entry(path)?;
    let items = entry.value.as_sequence()?;
    let texts = items.iter().map(|n| n.as_scalar().map(|s| s.text.clone()).unwrap_or_default()).collect();
    Some(Sourced::file(texts, entry.key_span, entry.value.span))
}

fn grpo_settings(r: &Reader, rl: &RlPlan) -> GrpoSettings {
    let s = facts::Settings(r);
    GrpoSettings {
        num_generations_eval: r.u64("num_generations_eval").unwrap_or_else(|| {
            Sourced::derived(
                rl.num_generations.value,
                format!(
                    "num_generations_eval=None → num_generations ({})",
                    facts::get(TrlGrpo, "num_generations_eval").source
                ),
            )
        }),
        sync_ref_model: s.flag(TrlGrpo, "sync_ref_model"),
        use_vllm: s.flag(TrlGrpo, "use_vllm"),
        vllm_mode: s.text(TrlGrpo, "vllm_mode"),
        vllm_tensor_parallel_size: s.count(TrlGrpo, "vllm_tensor_parallel_size"),
        vllm_enable_sleep_mode: s.flag(TrlGrpo, "vllm_enable_sleep_mode"),
    }
}

/// The prompt length generation is sized for when the config sets none (`key` unset).
pub(crate) fn assumed_prompt_length(key: &str) -> Sourced<u64> {
    let fact = facts::get(TrlGrpo, "max_prompt_length");
    Sourced::unknown(
        facts::count(TrlGrpo, "max_prompt_length"),
        format!("{key} unset: the prompts' length depends on the dataset (assumed {}, {})", fact.value, fact.source),
    )
}

fn plan_grpo(plan: &mut Plan, r: &Reader, peft: bool) {
    let completion = r.u64("max_completion_length").unwrap_or_else(|| {
        trl_default(facts::count(TrlGrpo, "max_completion_length"), "GRPOConfig.max_completion_length (256 up to 1.9)")
    });
    let prompt = r.u64("max_prompt_length");
    let beta =
        r.f64("beta").unwrap_or_else(|| trl_default(facts::number(TrlGrpo, "beta"), "GRPOConfig.beta (since 0.19)"));
    let vllm = r.bool("use_vllm").filter(|b| b.value).map(|_| VllmPlan {
        mode: r
            .str("vllm_mode")
            .map(|s| s.map(|m| if m == "server" { VllmMode::Server } else { VllmMode::Colocate }))
            .unwrap_or_else(|| trl_default(VllmMode::Colocate, "GRPOConfig.vllm_mode=colocate (since 1.0)")),
        gpu_memory_utilization: r.f64("vllm_gpu_memory_utilization").unwrap_or_else(|| {
            trl_default(facts::number(TrlGrpo, "vllm_gpu_memory_utilization"), "GRPOConfig.vllm_gpu_memory_utilization")
        }),
        fraction_of_free: false,
        enable_sleep_mode: r
            .bool("vllm_enable_sleep_mode")
            .unwrap_or_else(|| trl_default(false, "GRPOConfig.vllm_enable_sleep_mode")),
    });
    plan.max_seq_length = Some(match &prompt {
        Some(p) => Sourced::derived(p.value + completion.value, "max_prompt_length + max_completion_length"),
        None => Sourced::unknown(
            completion.value,
            "prompt length depends on the dataset (max_prompt_length removed in TRL 0.28)",
        ),
    });
    plan.reference_model =
        Some(Sourced::derived(beta.value != 0.0 && !peft, "GRPO loads a reference model when beta != 0 and no PEFT"));
    plan.rl = Some(RlPlan {
        num_generations: r
            .count("num_generations")
            .unwrap_or_else(|| trl_default(facts::count(TrlGrpo, "num_generations"), "GRPOConfig.num_generations")),
        prompt_length: prompt.clone().unwrap_or_else(|| assumed_prompt_length("max_prompt_length")),
        max_prompt_length: prompt,
        max_completion_length: completion,
        generation_batch_size: r.u64("generation_batch_size"),
        steps_per_generation: r.u64("steps_per_generation"),
        beta,
        vllm,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{self, Language};

    fn plan_of(format: Format, text: &str) -> Plan {
        let doc = syntax::parse(text, Language::Yaml);
        plan(format, &Reader::new(doc.root_mapping().unwrap()))
    }

    #[test]
    fn trl_defaults_are_fp32_load_bf16_autocast_and_checkpointing() {
        let p = plan_of(Format::TrlSft, "model_name_or_path: Qwen/Qwen2.5-0.5B\n");
        assert_eq!(p.load_dtype.unwrap().value, Dtype::F32);
        assert_eq!(p.precision.unwrap().value, Precision::Mixed(Dtype::Bf16));
        assert_eq!(p.gradient_checkpointing.unwrap().value, Checkpointing::Full);
        assert_eq!(p.max_seq_length.unwrap().value, 1024);
        assert_eq!(p.micro_batch_size.unwrap().value, 8);
    }

    #[test]
    fn qlora_dpo_reads_keys() {
        let text = "model_name_or_path: x\ntorch_dtype: bfloat16\nuse_peft: true\nload_in_4bit: true\nlora_r: 128\nlora_target_modules:\n- q_proj\n- down_proj\nper_device_train_batch_size: 4\n";
        let p = plan_of(Format::TrlDpo, text);
        assert_eq!(p.method.unwrap().value, Method::Qlora);
        assert_eq!(p.load_dtype.unwrap().value, Dtype::Bf16);
        let lora = p.lora.unwrap();
        assert_eq!(lora.rank.value, 128);
        assert!(lora.targets.value.query && lora.targets.value.mlp_down && !lora.targets.value.value);
        assert!(!p.reference_model.unwrap().value);
        let mbs = p.micro_batch_size.unwrap();
        assert_eq!(&text[mbs.value_span().unwrap().start..mbs.value_span().unwrap().end], "4");
        // DPOConfig.disable_dropout=True zeroes LoRA's dropout unless the file turns it off.
        assert_eq!(lora.dropout.value, 0.0);
        let kept = plan_of(Format::TrlDpo, &format!("{text}lora_dropout: 0.1\ndisable_dropout: false\n"));
        assert_eq!(kept.lora.unwrap().dropout.value, 0.1);
    }

    #[test]
    fn grpo_with_colocated_vllm() {
        let text =
            "model_name_or_path: x\nnum_generations: 4\nuse_vllm: true\nmax_completion_length: 1024\nbeta: 0.04\n";
        let p = plan_of(Format::TrlGrpo, text);
        let rl = p.rl.unwrap();
        assert_eq!(rl.num_generations.value, 4);
        let vllm = rl.vllm.unwrap();
        assert_eq!(vllm.mode.value, VllmMode::Colocate);
        assert_eq!(vllm.gpu_memory_utilization.value, 0.3);
        assert!(p.reference_model.unwrap().value);
    }
}
