//! LitGPT `litgpt finetune_* / pretrain --config file.yaml` configs.
//!
//! Defaults follow `litgpt/finetune/{lora,adapter,adapter_v2,full}.py` and
//! `litgpt/pretrain.py` `setup()` signatures and `litgpt/args.py` at v0.5.13.

use super::{Format, Reader};
use crate::plan::{
    Attention, Checkpointing, Dtype, Framework, LitgptSettings, LoraPlan, LoraTargets, LossImpl, Method, ModelRef,
    Optimizer, Plan, Precision, Quantization, Sharding, Sourced,
};
use crate::syntax::ScalarKind;

use super::facts::{self, Framework::*};

const VERSION: &str = "LitGPT 0.5.13";

/// What a config whose class paths import `lit_gpt` (`class_path: lit_gpt.data.Alpaca`) runs
/// with: only the lit-gpt checkout before the package was renamed `litgpt` provides that module
/// (Lightning-AI/litgpt 4839345a, "Lit-GPT -> LitGPT", 2024-03-07, before the first `litgpt`
/// release), so it runs that code, not a `litgpt` release.
pub(crate) const LIT_GPT_MODULE: (&str, &[&str]) =
    ("the lit_gpt module its class paths import, which only lit-gpt before the litgpt rename has", &["litgpt<0.1"]);

/// Whether a `class_path` of the document names the `lit_gpt` module.
pub(crate) fn names_lit_gpt_module(document: &crate::syntax::Document) -> bool {
    fn names(node: &crate::syntax::Node) -> bool {
        match &node.value {
            crate::syntax::Value::Mapping(m) => m.entries.iter().any(|e| {
                let module =
                    e.key == "class_path" && e.value.as_scalar().is_some_and(|s| s.text.trim().starts_with("lit_gpt."));
                module || names(&e.value)
            }),
            crate::syntax::Value::Sequence(items) => items.iter().any(names),
            crate::syntax::Value::Scalar(_) => false,
        }
    }
    document.root.as_ref().is_some_and(names)
}

pub(crate) fn script(format: Format) -> &'static str {
    match format {
        Format::LitgptAdapter => "finetune_adapter",
        Format::LitgptAdapterV2 => "finetune_adapter_v2",
        Format::LitgptFull => "finetune_full",
        Format::LitgptPretrain => "pretrain",
        _ => "finetune_lora",
    }
}

fn default<T>(value: T, what: &str) -> Sourced<T> {
    Sourced::default_of(value, format!("{VERSION} {what}"))
}

/// Fabric precision strings (and their aliases) as parameter dtype + autocast.
pub(crate) fn parse_precision(text: &str) -> Option<Precision> {
    Some(match text {
        "bf16-true" => Precision::True(Dtype::Bf16),
        "bf16-mixed" | "bf16" => Precision::Mixed(Dtype::Bf16),
        "16-true" => Precision::True(Dtype::F16),
        "16-mixed" | "16" => Precision::Mixed(Dtype::F16),
        "32-true" | "32" | "64-true" | "64" => Precision::True(Dtype::F32),
        "transformer-engine" => Precision::Mixed(Dtype::Bf16),
        "transformer-engine-float16" => Precision::Mixed(Dtype::F16),
        _ => return None,
    })
}

pub(crate) fn parse_quantize(text: &str) -> Option<Quantization> {
    Some(match text {
        "bnb.nf4" => Quantization::Nf4 { double_quant: false },
        "bnb.nf4-dq" => Quantization::Nf4 { double_quant: true },
        "bnb.fp4" => Quantization::Fp4 { double_quant: false },
        "bnb.fp4-dq" => Quantization::Fp4 { double_quant: true },
        "bnb.int8-training" => Quantization::Int8,
        _ => return None,
    })
}

/// The optimizer's class name from `optimizer: AdamW` or `{class_path: torch.optim.AdamW}`.
pub(crate) fn optimizer_name(r: &Reader) -> Option<Sourced<String>> {
    r.str("optimizer.class_path").or_else(|| r.str("optimizer"))
}

fn optimizer_kind(name: &str) -> Optimizer {
    let class = name.rsplit('.').next().unwrap_or(name);
    match class {
        "AdamW" | "Adam" => Optimizer::AdamW,
        "SGD" => Optimizer::Sgd,
        "PagedAdamW" => Optimizer::PagedAdamW,
        "PagedAdamW8bit" => Optimizer::PagedAdamW8bit,
        "AdamW8bit" => Optimizer::AdamW8bit,
        "Adafactor" => Optimizer::Adafactor,
        _ => Optimizer::Other(name.to_string()),
    }
}

/// `checkpoints/meta-llama/Llama-2-7b-hf` → the hub id LitGPT downloaded it from.
fn model_ref(text: &str) -> ModelRef {
    let trimmed = text.trim_end_matches('/');
    let stripped = trimmed.strip_prefix("checkpoints/").unwrap_or(trimmed);
    let is_path = trimmed.starts_with(['/', '.', '~']) && !trimmed.starts_with("checkpoints/");
    ModelRef { name: stripped.to_string(), is_path }
}

pub(crate) fn plan(format: Format, r: &Reader) -> Plan {
    let pretrain = format == Format::LitgptPretrain;
    let mut plan = Plan::new(Framework::Litgpt);
    plan.command = Some(script(format).to_string());
    plan.model = r.str("checkpoint_dir").or_else(|| r.str("model_name")).map(|s| s.map(|t| model_ref(&t)));

    let quantize = r.str("quantize").and_then(|q| {
        let value = parse_quantize(&q.value)?;
        Some(Sourced { value: Some(value), origin: q.origin })
    });
    plan.quantization = Some(quantize.unwrap_or_else(|| default(None, "quantize=None")));
    let quantized = plan.quantization.as_ref().is_some_and(|q| q.value.is_some());

    let method = match format {
        Format::LitgptLora if quantized => Method::Qlora,
        Format::LitgptLora => Method::Lora,
        Format::LitgptAdapter => Method::Adapter,
        Format::LitgptAdapterV2 => Method::AdapterV2,
        Format::LitgptFull => Method::Full,
        _ => Method::Pretrain,
    };
    plan.method = Some(Sourced::derived(method, format!("litgpt {}", script(format))));

    if format == Format::LitgptLora {
        let flag = |key: &str, on: bool| r.bool(key).map_or(on, |s| s.value);
        let targets = LoraTargets {
            query: flag("lora_query", true),
            key: flag("lora_key", false),
            value: flag("lora_value", true),
            output: flag("lora_projection", false),
            mlp_gate: flag("lora_mlp", false),
            mlp_up: flag("lora_mlp", false),
            mlp_down: flag("lora_mlp", false),
            lm_head: flag("lora_head", false),
            shared_expert_only: false,
            names: ["lora_query", "lora_key", "lora_value", "lora_projection", "lora_mlp", "lora_head"]
                .iter()
                .filter(|k| r.bool(k).is_some_and(|b| b.value))
                .map(|k| k.trim_start_matches("lora_").to_string())
                .collect(),
        };
        plan.lora = Some(LoraPlan {
            rank: r.u64("lora_r").unwrap_or_else(|| default(facts::count(LitgptFinetune, "lora_r"), "lora_r")),
            alpha: r
                .f64("lora_alpha")
                .unwrap_or_else(|| default(facts::number(LitgptFinetune, "lora_alpha"), "lora_alpha")),
            dropout: r
                .f64("lora_dropout")
                .unwrap_or_else(|| default(facts::number(LitgptFinetune, "lora_dropout"), "lora_dropout")),
            targets: Sourced::derived(targets, "lora_query/lora_key/lora_value/lora_projection/lora_mlp/lora_head"),
        });
    }

    let precision = r.str("precision").and_then(|p| {
        let value = parse_precision(&p.value)?;
        Some(Sourced { value, origin: p.origin })
    });
    plan.precision = Some(precision.unwrap_or_else(|| {
        Sourced::default_of(
            Precision::Mixed(Dtype::Bf16),
            "LitGPT get_default_supported_precision(training=True): bf16-mixed on bf16 GPUs, 16-mixed otherwise",
        )
    }));
    let precision_value = plan.precision.as_ref().map(|p| p.value);
    plan.load_dtype = precision_value.map(|p| match p {
        Precision::True(d) => Sourced::derived(d, "precision (Fabric *-true keeps parameters in this dtype)"),
        Precision::Mixed(_) => Sourced::derived(Dtype::F32, "precision (Fabric *-mixed keeps fp32 parameters)"),
    });

    let defaults = if pretrain { LitgptPretrain } else { LitgptFinetune };
    let mbs_default = facts::count(defaults, "train.micro_batch_size");
    let gbs_default = facts::count(defaults, "train.global_batch_size");
    plan.micro_batch_size =
        Some(r.u64("train.micro_batch_size").unwrap_or_else(|| default(mbs_default, "train.micro_batch_size")));
    plan.global_batch_size =
        Some(r.u64("train.global_batch_size").unwrap_or_else(|| default(gbs_default, "train.global_batch_size")));
    plan.num_nodes =
        Some(r.u64("num_nodes").unwrap_or_else(|| default(facts::count(defaults, "num_nodes"), "num_nodes")));
    plan.devices = Some(match r.i64("devices") {
        Some(d) if d.value > 0 => d.map(|v| v as u64),
        Some(d) => Sourced::unknown(1, format!("devices: {} uses every visible GPU", d.value)),
        None if r.str("devices").is_some() => Sourced::unknown(1, "devices: auto uses every visible GPU"),
        None if pretrain => Sourced::unknown(1, "pretrain defaults to devices='auto' (every visible GPU)"),
        None => default(facts::count(LitgptFinetune, "devices"), "devices"),
    });
    let world = plan.world_size();
    let micro = plan.micro_batch_size.as_ref().map_or(1, |m| m.value.max(1));
    let global = plan.global_batch_size.as_ref().map_or(1, |g| g.value);
    plan.gradient_accumulation = Some(Sourced::derived(
        (global / world / micro).max(1),
        "global_batch_size // (devices*num_nodes) // micro_batch_size (litgpt/args.py)",
    ));
    plan.max_seq_length = r.u64("train.max_seq_length");

    let multi = world > 1;
    plan.gradient_checkpointing = Some(if multi && !pretrain {
        Sourced::derived(Checkpointing::Full, "multi-device finetuning wraps every Block in activation checkpointing")
    } else {
        Sourced::derived(Checkpointing::None, "LitGPT uses no activation checkpointing on one device (or in pretrain)")
    });
    plan.sharding = Some(if multi {
        Sourced::derived(
            Sharding::Fsdp { full_shard: true, offload_params: false },
            "FSDP strategy when devices*num_nodes > 1",
        )
    } else {
        default(Sharding::None, "single device")
    });
    plan.attention = Some(default(Attention::Sdpa, "scaled_dot_product_attention"));
    plan.loss = Some(if pretrain {
        default(LossImpl::Full, "pretrain chunked_cross_entropy over full logits")
    } else {
        default(LossImpl::LitgptChunked, "lm_head_chunk_size=128 with chunked_cross_entropy")
    });

    let optimizer = optimizer_name(r).map(|s| s.map(|n| optimizer_kind(&n)));
    plan.optimizer = Some(match optimizer {
        _ if quantized => Sourced::derived(
            Optimizer::PagedAdamW,
            "quantize replaces AdamW with bitsandbytes PagedAdamW (litgpt/utils.py)",
        ),
        Some(o) => o,
        None => default(Optimizer::AdamW, "optimizer=AdamW"),
    });
    plan.litgpt = Some(settings(r, defaults));
    plan
}

/// An integer, also from a numeric string (`devices: "2"`).
fn integer(r: &Reader, path: &str) -> Option<Sourced<i64>> {
    let entry = r.entry(path)?;
    let scalar = entry.value.as_scalar()?;
    let value = match scalar.kind {
        ScalarKind::Str => scalar.text.trim().parse().ok()?,
        _ => scalar.as_i64()?,
    };
    Some(Sourced::file(value, entry.key_span, entry.value.span))
}

/// What `setup` and `validate_args` check beyond the plan's fields.
fn settings(r: &Reader, defaults: facts::Framework) -> LitgptSettings {
    let optimizer = match r.entry("optimizer.class_path") {
        Some(entry) => Some((r.str("optimizer.class_path").map(|s| s.value).unwrap_or_default(), entry, true)),
        None => r.entry("optimizer").and_then(|entry| match entry.value.as_mapping() {
            Some(_) => Some((String::new(), entry, true)),
            None => r.str("optimizer").map(|s| (s.value, entry, false)),
        }),
    };
    let warmup_steps = "train.lr_warmup_steps";
    LitgptSettings {
        train_key: r.entry("train").map(|e| e.key_span),
        devices: integer(r, "devices"),
        num_nodes: r.i64("num_nodes"),
        quantize: r.str("quantize").filter(|_| r.flag("quantize").is_some_and(|q| q.value)),
        precision: r.nullable("precision", |r, k| r.str(k)),
        optimizer_is_class: optimizer.as_ref().is_some_and(|o| o.2),
        optimizer: optimizer.map(|(name, entry, _)| Sourced::file(name, entry.key_span, entry.value.span)),
        epochs: r.given("train.epochs"),
        max_tokens: r.given("train.max_tokens"),
        max_norm: r.given("train.max_norm"),
        tie_embeddings: r.given("train.tie_embeddings"),
        max_new_tokens: r.given("eval.max_new_tokens"),
        lr_warmup_fraction: r.nullable("train.lr_warmup_fraction", |r, k| r.f64(k)),
        lr_warmup_steps: r
            .nullable(warmup_steps, |r, k| r.f64(k))
            .unwrap_or_else(|| facts::default(defaults, warmup_steps, Some(facts::number(defaults, warmup_steps)))),
        resume: facts::Settings(r).flag(defaults, "resume"),
        initial_checkpoint_dir: r
            .given("initial_checkpoint_dir")
            .unwrap_or_else(|| facts::default(LitgptPretrain, "initial_checkpoint_dir", false)),
    }
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
    fn qlora_reads_keys_and_defaults() {
        let text = "checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf\nquantize: bnb.nf4\nprecision: bf16-true\nlora_r: 32\nlora_mlp: true\ntrain:\n  micro_batch_size: 2\n  global_batch_size: 16\n  max_seq_length: 512\n";
        let p = plan_of(Format::LitgptLora, text);
        assert_eq!(p.model.as_ref().unwrap().value.name, "meta-llama/Llama-2-7b-hf");
        assert_eq!(p.method.as_ref().unwrap().value, Method::Qlora);
        assert_eq!(p.quantization.as_ref().unwrap().value, Some(Quantization::Nf4 { double_quant: false }));
        assert_eq!(p.precision.as_ref().unwrap().value, Precision::True(Dtype::Bf16));
        let lora = p.lora.as_ref().unwrap();
        assert_eq!(lora.rank.value, 32);
        assert!(lora.targets.value.query && lora.targets.value.mlp_down && !lora.targets.value.key);
        assert_eq!(p.gradient_accumulation.as_ref().unwrap().value, 8);
        assert_eq!(p.optimizer.as_ref().unwrap().value, Optimizer::PagedAdamW);
        let mbs = p.micro_batch_size.as_ref().unwrap();
        assert_eq!(&text[mbs.value_span().unwrap().start..mbs.value_span().unwrap().end], "2");
    }

    #[test]
    fn null_precision_resolves_to_bf16_mixed_and_multi_gpu_checkpoints() {
        let p = plan_of(Format::LitgptFull, "checkpoint_dir: x\nprecision:\ndevices: 4\n");
        let precision = p.precision.unwrap();
        assert_eq!(precision.value, Precision::Mixed(Dtype::Bf16));
        assert!(!precision.is_from_file());
        assert_eq!(p.gradient_checkpointing.unwrap().value, Checkpointing::Full);
        assert_eq!(p.gradient_accumulation.unwrap().value, 4);
    }

    #[test]
    fn the_world_size_is_stated_only_by_a_numeric_devices() {
        let world = |text: &str| plan_of(Format::LitgptLora, text).stated_world_size();
        assert_eq!(world("checkpoint_dir: x\ndevices: 4\n"), Some(4));
        assert_eq!(world("checkpoint_dir: x\ndevices: 2\nnum_nodes: 2\n"), Some(4));
        // Unset: 1 unless the launch passes `--devices`; `auto`: every visible GPU.
        assert_eq!(world("checkpoint_dir: x\n"), None);
        assert_eq!(world("checkpoint_dir: x\ndevices: auto\n"), None);
    }
}
