//! DeepSpeed JSON configs (`--deepspeed ds_config.json`), and the `deepspeed` key of
//! trainer configs (a path or an inline mapping).
//!
//! Semantics follow `deepspeed/runtime/config.py`, `runtime/zero/config.py` and
//! `runtime/zero/offload_config.py` at deepspeedai/DeepSpeed@edaa7221. `"auto"` values are
//! filled by the Hugging Face Trainer from TrainingArguments
//! (`transformers/integrations/deepspeed.py`), so they are unknown from this file alone.

use super::facts::{self, Framework::Deepspeed};
use super::Reader;
use crate::plan::{
    DeepspeedSettings, Dtype, Framework, Optimizer, Plan, Precision, Sharding, Sourced, ZeroBuckets, ZeroSize,
};
use crate::syntax::{self, Language, ScalarKind};

const VERSION: &str = "DeepSpeed (edaa7221)";
const FROM_TRAINER: &str = "\"auto\": filled from TrainingArguments";

/// A batch-size key: a number, `"auto"`, or absent.
enum BatchValue {
    Number(Sourced<u64>),
    Auto,
    Absent,
}

fn batch_value(r: &Reader, path: &str) -> BatchValue {
    if let Some(n) = r.u64(path) {
        return BatchValue::Number(n);
    }
    match r.str(path) {
        Some(s) if s.value.eq_ignore_ascii_case("auto") => BatchValue::Auto,
        _ => BatchValue::Absent,
    }
}

impl BatchValue {
    fn number(&self) -> Option<u64> {
        match self {
            BatchValue::Number(n) => Some(n.value),
            _ => None,
        }
    }
}

fn offload_device_on(r: &Reader, path: &str) -> bool {
    r.str(path).is_some_and(|d| matches!(d.value.to_ascii_lowercase().as_str(), "cpu" | "nvme"))
}

fn flag(r: &Reader, path: &str) -> bool {
    r.bool(path).is_some_and(|b| b.value)
}

/// ZeRO sharding of the DeepSpeed config at `prefix` (`""` for a file's root,
/// `"deepspeed."` for an inline mapping). The origin is the `stage` key when set.
pub(crate) fn zero_sharding(r: &Reader, prefix: &str) -> Sourced<Sharding> {
    let key = |k: &str| format!("{prefix}zero_optimization.{k}");
    let offload_optimizer = offload_device_on(r, &key("offload_optimizer.device")) || flag(r, &key("cpu_offload"));
    let offload_params = offload_device_on(r, &key("offload_param.device")) || flag(r, &key("cpu_offload_param"));
    let zero = |stage: u8| Sharding::Zero { stage, offload_optimizer, offload_params };
    match r.u64(&key("stage")) {
        Some(stage) => stage.map(|s| zero(u8::try_from(s.min(3)).unwrap_or(3))),
        None => Sourced::default_of(zero(0), format!("{VERSION} zero_optimization.stage=0")),
    }
}

/// One ZeRO size at `path`: a number of elements (JSON writes `5e8`), `"auto"`, else
/// DeepSpeed's default for `key`.
fn zero_size(r: &Reader, path: &str, key: &str) -> ZeroSize {
    if let Some(n) = r.f64(path).filter(|n| n.value >= 0.0) {
        return ZeroSize::Elements(n.value as u64);
    }
    match r.str(path) {
        Some(s) if s.value.eq_ignore_ascii_case("auto") => ZeroSize::Auto,
        _ => ZeroSize::Elements(facts::count(Deepspeed, key)),
    }
}

/// ZeRO's buffer sizes of the DeepSpeed config at `prefix`.
pub(crate) fn zero_buckets(r: &Reader, prefix: &str) -> ZeroBuckets {
    let size = |key: &str| {
        let full = format!("zero_optimization.{key}");
        zero_size(r, &format!("{prefix}{full}"), &full)
    };
    ZeroBuckets {
        reduce_bucket_size: size("reduce_bucket_size"),
        prefetch_bucket_size: size("stage3_prefetch_bucket_size"),
        max_live_parameters: size("stage3_max_live_parameters"),
        param_persistence_threshold: size("stage3_param_persistence_threshold"),
    }
}

/// The sizes of a DeepSpeed config that is named but not read: the `"auto"` the Hugging
/// Face Trainer fills (what the configs transformers and TRL ship write), and DeepSpeed's
/// default `stage3_max_live_parameters` (which the Trainer does not fill).
pub(crate) fn unread_buckets() -> ZeroBuckets {
    let max_live = "zero_optimization.stage3_max_live_parameters";
    ZeroBuckets {
        reduce_bucket_size: ZeroSize::Auto,
        prefetch_bucket_size: ZeroSize::Auto,
        max_live_parameters: ZeroSize::Elements(facts::count(Deepspeed, max_live)),
        param_persistence_threshold: ZeroSize::Auto,
    }
}

/// The ZeRO stage a config file's name states (`zero3.json`, `ds_z2_config.json`,
/// `zero_stage3_offload_config.json`, `ds_config_zero2.json`).
pub(crate) fn stage_from_name(path: &str) -> Option<u8> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path).to_ascii_lowercase();
    let bytes = name.as_bytes();
    for (i, _) in name.match_indices('z') {
        let after_z = if name[i..].starts_with("zero") {
            i + 4
        } else if i == 0 || !bytes[i - 1].is_ascii_alphabetic() {
            i + 1
        } else {
            continue;
        };
        let rest = name[after_z..].trim_start_matches(['_', '-']);
        let rest = rest.strip_prefix("stage").unwrap_or(rest).trim_start_matches(['_', '-']);
        let mut digits = rest.bytes();
        if let Some(d @ b'0'..=b'3') = digits.next() {
            if !digits.next().is_some_and(|b| b.is_ascii_digit()) {
                return Some(d - b'0');
            }
        }
    }
    None
}

/// Bundled configs that offload the optimizer to CPU without saying so in their names.
const BUNDLED_OPTIMIZER_OFFLOAD: [(&str, &str); 3] = [
    ("deepspeed_configs/zero2.json", "Axolotl's bundled"),
    ("deepspeed_configs/zero2_torch_compile.json", "Axolotl's bundled"),
    ("examples/deepspeed/ds_z3_fp8_config.json", "LLaMA-Factory's bundled"),
];

/// ZeRO settings read off a DeepSpeed config's file name, when the name states the stage.
/// `offload` alone means both offloads at stage 3 and the optimizer below it;
/// `offload_param(s)` and `offload_optimizer` name one; `offload_all` both. The frameworks'
/// bundled configs whose names hide an optimizer offload are recognised by path.
pub(crate) fn sharding_from_name(path: &Sourced<String>) -> Option<Sourced<Sharding>> {
    let stage = stage_from_name(&path.value)?;
    let normalized = path.value.replace('\\', "/").to_ascii_lowercase();
    if let Some((suffix, whose)) = BUNDLED_OPTIMIZER_OFFLOAD.iter().find(|(suffix, _)| normalized.ends_with(suffix)) {
        let value = Sharding::Zero { stage, offload_optimizer: true, offload_params: false };
        return Some(Sourced::derived(value, format!("{whose} {suffix} (ZeRO-{stage}, optimizer offloaded to CPU)")));
    }
    let name = normalized.rsplit('/').next().unwrap_or(&normalized);
    let offload = name.contains("offload");
    let params_only = name.contains("offload_param");
    let optimizer_only = name.contains("offload_opt");
    let both = offload && !params_only && !optimizer_only;
    let value = Sharding::Zero {
        stage,
        offload_optimizer: optimizer_only || both,
        offload_params: stage == 3 && (params_only || both),
    };
    Some(Sourced::derived(
        value,
        format!("the DeepSpeed config's file name `{}` (the file itself is not read)", path.value),
    ))
}

/// The sharding a trainer config's `deepspeed` key selects: an inline mapping, a JSON
/// string, or a path whose name states the stage. None when the key is absent or null.
pub(crate) fn trainer_sharding(r: &Reader, key: &str) -> Option<Sourced<Sharding>> {
    let entry = r.entry(key)?;
    if entry.value.as_mapping().is_some() {
        return Some(zero_sharding(r, &format!("{key}.")));
    }
    let path = r.str(key)?;
    if path.value.trim_start().starts_with('{') {
        let doc = syntax::parse(&path.value, Language::Json);
        let sharding = doc.root_mapping().map(|root| zero_sharding(&Reader::new(root), "").value);
        return sharding.map(|s| Sourced::derived(s, format!("the JSON string in `{key}`")));
    }
    Some(sharding_from_name(&path).unwrap_or_else(|| {
        Sourced::unknown(
            Sharding::Zero { stage: 0, offload_optimizer: false, offload_params: false },
            format!("the ZeRO stage is set inside `{}`, which is not read", path.value),
        )
    }))
}

/// `fp16.enabled` / `bf16.enabled` (or `bfloat16.enabled`) at `prefix` as mixed precision.
pub(crate) fn precision(r: &Reader, prefix: &str) -> Sourced<Precision> {
    for (block, dtype) in [("bf16", Dtype::Bf16), ("bfloat16", Dtype::Bf16), ("fp16", Dtype::F16)] {
        let path = format!("{prefix}{block}.enabled");
        if let Some(enabled) = r.bool(&path) {
            if enabled.value {
                return enabled.map(|_| Precision::Mixed(dtype));
            }
            continue;
        }
        if r.str(&path).is_some_and(|s| s.value.eq_ignore_ascii_case("auto")) {
            return Sourced::unknown(
                Precision::Mixed(Dtype::Bf16),
                format!("{block}.enabled is {FROM_TRAINER} bf16/fp16"),
            );
        }
    }
    Sourced::default_of(Precision::True(Dtype::F32), format!("{VERSION} fp16/bf16 disabled (fp32 training)"))
}

fn optimizer_kind(name: &str) -> Optimizer {
    match name.to_ascii_lowercase().as_str() {
        "adam" | "adamw" | "fusedadam" | "cpuadam" => Optimizer::AdamW,
        "lion" | "fusedlion" => Optimizer::Lion,
        "sgd" => Optimizer::Sgd,
        _ => Optimizer::Other(name.to_string()),
    }
}

pub(crate) fn plan(r: &Reader) -> Plan {
    let mut plan = Plan::new(Framework::Deepspeed);
    let micro = batch_value(r, "train_micro_batch_size_per_gpu");
    let accumulation = batch_value(r, "gradient_accumulation_steps");
    let train = batch_value(r, "train_batch_size");

    if let (Some(t), Some(m), Some(g)) = (train.number(), micro.number(), accumulation.number()) {
        if m > 0 && g > 0 && t % (m * g) == 0 && t > 0 {
            plan.devices = Some(Sourced::derived(
                t / (m * g),
                "train_batch_size / (train_micro_batch_size_per_gpu × gradient_accumulation_steps)",
            ));
        }
    }
    plan.gradient_accumulation = match (&accumulation, train.number(), micro.number()) {
        (BatchValue::Number(g), ..) => Some(g.clone()),
        (BatchValue::Auto, ..) => Some(Sourced::unknown(1, format!("{FROM_TRAINER} gradient_accumulation_steps"))),
        (BatchValue::Absent, Some(t), Some(m)) if m > 0 => Some(Sourced::unknown(
            (t / m).max(1),
            "train_batch_size / (micro batch × world size); the world size is set at launch (value assumes one GPU)",
        )),
        (BatchValue::Absent, None, _) => Some(facts::count_as(Deepspeed, "gradient_accumulation_steps", |v| {
            format!("{VERSION} gradient_accumulation_steps={v}")
        })),
        (BatchValue::Absent, ..) => None,
    };
    plan.micro_batch_size = match micro {
        BatchValue::Number(m) => Some(m),
        BatchValue::Auto => Some(Sourced::unknown(1, format!("{FROM_TRAINER} per_device_train_batch_size"))),
        BatchValue::Absent => None,
    };
    plan.global_batch_size = match train {
        BatchValue::Number(t) => Some(t),
        BatchValue::Auto => Some(Sourced::unknown(
            1,
            format!("{FROM_TRAINER} (world size × per_device_train_batch_size × gradient_accumulation_steps)"),
        )),
        BatchValue::Absent => None,
    };
    plan.sharding = Some(zero_sharding(r, ""));
    plan.zero_buckets = Some(zero_buckets(r, ""));
    plan.precision = Some(precision(r, ""));
    plan.optimizer = r.str("optimizer.type").map(|t| t.map(|name| optimizer_kind(&name)));
    plan.deepspeed = Some(settings(r, ""));
    plan
}

/// A number, or a boolean as 0 or 1 (as the HF Trainer compares them); None for `"auto"`.
fn numeric(r: &Reader, path: &str) -> Option<Sourced<f64>> {
    let entry = r.entry(path)?;
    let scalar = entry.value.as_scalar()?;
    let value = match scalar.kind {
        ScalarKind::Bool(b) => f64::from(u8::from(b)),
        _ => scalar.as_f64()?,
    };
    Some(Sourced::file(value, entry.key_span, entry.value.span))
}

/// What DeepSpeed checks in the config at `prefix` (`""` for a file's root, `"deepspeed."`
/// for an inline mapping).
pub(crate) fn settings(r: &Reader, prefix: &str) -> DeepspeedSettings {
    let key = |k: &str| format!("{prefix}{k}");
    let number = |k: &str| {
        r.entry(&key(k)).and_then(|e| e.value.as_scalar()?.as_f64().map(|v| Sourced::file(v, e.key_span, e.value.span)))
    };
    let stage = "zero_optimization.stage";
    DeepspeedSettings {
        train_batch_size: number("train_batch_size"),
        train_micro_batch_size_per_gpu: number("train_micro_batch_size_per_gpu"),
        gradient_accumulation_steps: number("gradient_accumulation_steps"),
        gradient_clipping: numeric(r, &key("gradient_clipping")),
        fp16_enabled: numeric(r, &key("fp16.enabled")),
        bf16_enabled: numeric(r, &key("bf16.enabled")),
        zero_stage: r
            .i64(&key(stage))
            .unwrap_or_else(|| facts::default(Deepspeed, stage, facts::count(Deepspeed, stage) as i64)),
        offload_param_device: r.str(&key("zero_optimization.offload_param.device")),
        offload_param_key: r.entry(&key("zero_optimization.offload_param")).map(|e| e.key_span),
        offload_optimizer_ratio: r.f64(&key("zero_optimization.offload_optimizer.ratio")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_support::{each_corpus_file, plan_with, spanned};
    use crate::plan::Origin;
    use crate::syntax::{self, Language};

    fn plan_of(text: &str) -> Plan {
        plan_with(text, Language::Json, plan)
    }

    #[test]
    fn zero3_offload_with_auto_batches() {
        let text = r#"{
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "bf16": { "enabled": true },
  "optimizer": { "type": "AdamW", "params": { "lr": "auto" } },
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": { "device": "cpu", "pin_memory": true },
    "offload_param": { "device": "none" }
  }
}"#;
        let p = plan_of(text);
        let sharding = p.sharding.as_ref().unwrap();
        assert_eq!(sharding.value, Sharding::Zero { stage: 3, offload_optimizer: true, offload_params: false });
        assert_eq!(spanned(text, sharding), "3");
        let micro = p.micro_batch_size.as_ref().unwrap();
        assert!(matches!(&micro.origin, Origin::Unknown { why } if why.contains("per_device_train_batch_size")));
        let precision = p.precision.as_ref().unwrap();
        assert_eq!(precision.value, Precision::Mixed(Dtype::Bf16));
        assert_eq!(spanned(text, precision), "true");
        let optimizer = p.optimizer.as_ref().unwrap();
        assert_eq!(optimizer.value, Optimizer::AdamW);
        assert_eq!(spanned(text, optimizer), "\"AdamW\"");
        assert!(p.devices.is_none());
    }

    #[test]
    fn explicit_batches_give_the_world_size_and_stage_defaults_to_zero() {
        let text = r#"{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
                      "fp16": {"enabled": "auto"}}"#;
        let p = plan_of(text);
        assert_eq!(p.devices.as_ref().unwrap().value, 8);
        assert_eq!(spanned(text, p.micro_batch_size.as_ref().unwrap()), "4");
        assert_eq!(spanned(text, p.global_batch_size.as_ref().unwrap()), "64");
        let sharding = p.sharding.unwrap();
        assert!(matches!(sharding.value, Sharding::Zero { stage: 0, .. }));
        assert!(!sharding.is_from_file());
        assert!(matches!(p.precision.unwrap().origin, Origin::Unknown { .. }));
        assert!(p.optimizer.is_none());
    }

    #[test]
    fn legacy_cpu_offload_flag_counts() {
        let p = plan_of(r#"{"zero_optimization": {"stage": 2, "cpu_offload": true}}"#);
        assert_eq!(
            p.sharding.unwrap().value,
            Sharding::Zero { stage: 2, offload_optimizer: true, offload_params: false }
        );
    }

    #[test]
    fn stage_and_offload_from_file_names() {
        let cases = [
            ("deepspeed_configs/zero3.json", Some(3)),
            ("examples/deepspeed/ds_z3_offload_config.json", Some(3)),
            ("zero_stage2_offload_config.json", Some(2)),
            ("tests/deepspeed/ds_config_zero2.json", Some(2)),
            ("ds_z0_config.json", Some(0)),
            ("zero1_torch_compile.json", Some(1)),
            ("my_fuzz3.json", None),
            ("ds_config.json", None),
            ("zero35.json", None),
        ];
        for (name, stage) in cases {
            assert_eq!(stage_from_name(name), stage, "{name}");
        }
        let of = |name: &str| sharding_from_name(&Sourced::derived(name.to_string(), "test")).map(|s| s.value);
        assert_eq!(
            of("ds_z3_offload_config.json"),
            Some(Sharding::Zero { stage: 3, offload_optimizer: true, offload_params: true })
        );
        assert_eq!(
            of("ds_z2_offload_config.json"),
            Some(Sharding::Zero { stage: 2, offload_optimizer: true, offload_params: false })
        );
        assert_eq!(
            of("zero3_bf16_cpuoffload_params.json"),
            Some(Sharding::Zero { stage: 3, offload_optimizer: false, offload_params: true })
        );
        assert_eq!(
            of("zero3_bf16_cpuoffload_all.json"),
            Some(Sharding::Zero { stage: 3, offload_optimizer: true, offload_params: true })
        );
    }

    #[test]
    fn trainer_key_reads_paths_mappings_and_json_strings() {
        let read = |text: &str| {
            let doc = syntax::parse(text, Language::Yaml);
            trainer_sharding(&Reader::new(doc.root_mapping().unwrap()), "deepspeed")
        };
        let inline = "deepspeed:\n  zero_optimization:\n    stage: 2\n";
        let s = read(inline).unwrap();
        assert!(matches!(s.value, Sharding::Zero { stage: 2, .. }));
        assert_eq!(spanned(inline, &s), "2");
        let json = read("deepspeed: '{\"zero_optimization\": {\"stage\": 3}}'\n").unwrap();
        assert!(matches!(json.value, Sharding::Zero { stage: 3, .. }));
        let unknown = read("deepspeed: configs/ds.json\n").unwrap();
        assert!(matches!(unknown.origin, Origin::Unknown { .. }));
        assert!(read("deepspeed:\n").is_none());
    }

    /// Every DeepSpeed JSON in the shared corpus builds a plan with a sharding.
    #[test]
    fn corpus_files_build_plans() {
        each_corpus_file("deepspeed", Language::Json, |path, text, reader| {
            let p = plan(reader);
            let sharding = p.sharding.as_ref().unwrap();
            assert_eq!(sharding.is_from_file(), text.contains("\"stage\""), "{}", path.display());
            // What a trainer config infers from this file's path must match its content.
            let local = path.to_string_lossy().to_string();
            let Some(named) = sharding_from_name(&Sourced::derived(local.clone(), "test")) else { return };
            let (Sharding::Zero { stage, .. }, Sharding::Zero { stage: named_stage, .. }) =
                (sharding.value, named.value)
            else {
                panic!("{local}: not ZeRO")
            };
            assert_eq!(stage, named_stage, "{local}");
            if !local.contains("/tests/") {
                assert_eq!(sharding.value, named.value, "{local}: offloads differ from what the name says");
            }
        });
    }
}
