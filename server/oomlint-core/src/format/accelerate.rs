//! accelerate config YAML (`accelerate launch --config_file config.yaml`), plus the FSDP
//! readers the trainer formats share (`fsdp` options and `fsdp_config` mappings).
//!
//! Keys and launcher defaults follow `accelerate/commands/config/config_args.py`,
//! `commands/launch.py`, `utils/launch.py` and `utils/dataclasses.py` at
//! huggingface/accelerate@16cb6eb8 (1.15.0.dev0).

use super::facts::{self, Framework::Accelerate};
use super::{deepspeed, Reader};
use crate::plan::{
    AccelerateSettings, Checkpointing, Dtype, Framework, ParallelismSizes, Plan, Precision, Sharding, Sourced,
    TensorParallel, TpLayout,
};
use crate::syntax::ScalarKind;

const VERSION: &str = "accelerate 1.15";

fn default<T>(value: T, what: &str) -> Sourced<T> {
    Sourced::default_of(value, format!("{VERSION} {what}"))
}

/// Reads `{prefix}fsdp_{name}`, else `{prefix}{name}` (trainer configs strip the `fsdp_` prefix).
pub(crate) fn fsdp_key<'a, T>(
    r: &Reader<'a>,
    prefix: &str,
    name: &str,
    read: impl Fn(&Reader<'a>, &str) -> Option<Sourced<T>>,
) -> Option<Sourced<T>> {
    read(r, &format!("{prefix}fsdp_{name}")).or_else(|| read(r, &format!("{prefix}{name}")))
}

/// An FSDP1 sharding strategy, by name or by its number (1–5).
pub(crate) fn fsdp1_strategy(text: &str, offload_params: bool) -> Option<Sharding> {
    let full_shard = match text.trim().to_ascii_uppercase().as_str() {
        "FULL_SHARD" | "1" | "HYBRID_SHARD" | "4" => true,
        "SHARD_GRAD_OP" | "2" | "HYBRID_SHARD_ZERO2" | "5" => false,
        "NO_SHARD" | "3" => return Some(Sharding::None),
        _ => return None,
    };
    Some(Sharding::Fsdp { full_shard, offload_params })
}

/// The TrainingArguments-style `fsdp` key: `true`, a space-separated option string
/// (`"full_shard auto_wrap offload"`) or a list. None when absent, empty or false.
pub(crate) fn trainer_fsdp_options(r: &Reader, key: &str) -> Option<Sourced<Sharding>> {
    if let Some(on) = r.bool(key) {
        return on.value.then(|| on.map(|_| Sharding::Fsdp { full_shard: true, offload_params: false }));
    }
    let options = r.strings(key, false)?;
    let words: Vec<String> =
        options.value.iter().flat_map(|o| o.split_whitespace()).map(|w| w.to_ascii_lowercase()).collect();
    let offload_params = words.iter().any(|w| w == "offload");
    let sharding = words.iter().find_map(|w| fsdp1_strategy(w, offload_params))?;
    Some(options.map(|_| sharding))
}

/// FSDP sharding from an `fsdp_config` mapping at `prefix` (`"fsdp_config."`): FSDP2 reads
/// `reshard_after_forward` (default true), FSDP1 `sharding_strategy` (default FULL_SHARD).
/// `defaults` names whose defaults apply, e.g. "accelerate 1.15 launcher".
pub(crate) fn fsdp_sharding(r: &Reader, prefix: &str, version: u64, defaults: &str) -> Sourced<Sharding> {
    let offload_params = fsdp_key(r, prefix, "offload_params", Reader::bool).is_some_and(|b| b.value);
    let fsdp = |full_shard| Sharding::Fsdp { full_shard, offload_params };
    if version >= 2 {
        return match fsdp_key(r, prefix, "reshard_after_forward", Reader::bool) {
            Some(reshard) => reshard.map(fsdp),
            None => Sourced::default_of(fsdp(true), format!("{defaults} reshard_after_forward=true (FSDP2)")),
        };
    }
    let strategy = fsdp_key(r, prefix, "sharding_strategy", Reader::str)
        .and_then(|s| fsdp1_strategy(&s.value, offload_params).map(|v| Sourced { value: v, origin: s.origin }));
    strategy.unwrap_or_else(|| Sourced::default_of(fsdp(true), format!("{defaults} sharding_strategy=FULL_SHARD")))
}

/// `fsdp_activation_checkpointing` / `activation_checkpointing` in an `fsdp_config` mapping.
pub(crate) fn fsdp_checkpointing(r: &Reader, prefix: &str) -> Option<Sourced<Checkpointing>> {
    fsdp_key(r, prefix, "activation_checkpointing", Reader::bool)
        .map(|c| c.map(|on| if on { Checkpointing::Full } else { Checkpointing::None }))
}

/// `mixed_precision: no|fp16|bf16|fp8` (YAML 1.1 reads a bare `no` as false).
fn mixed_precision(r: &Reader) -> Option<Sourced<Precision>> {
    if let Some(fp16) = r.bool("fp16").filter(|b| b.value) {
        return Some(fp16.map(|_| Precision::Mixed(Dtype::F16)));
    }
    let mode = r.str("mixed_precision")?;
    let value = match mode.value.to_ascii_lowercase().as_str() {
        "bf16" => Precision::Mixed(Dtype::Bf16),
        "fp16" => Precision::Mixed(Dtype::F16),
        "no" | "false" => Precision::True(Dtype::F32),
        "fp8" => {
            return Some(Sourced::derived(
                Precision::Mixed(Dtype::Bf16),
                "mixed_precision: fp8 (FP8 matmuls with bf16 autocast elsewhere; counted as bf16-mixed)",
            ))
        }
        _ => return None,
    };
    Some(mode.map(|_| value))
}

fn devices(r: &Reader, single: bool, machines: u64) -> Sourced<u64> {
    match r.i64("num_processes") {
        Some(n) if n.value > 0 && machines > 1 => Sourced::derived(
            (n.value as u64 / machines).max(1),
            "num_processes (counted over all machines) / num_machines",
        ),
        Some(n) if n.value > 0 => n.map(|v| v as u64),
        Some(_) => Sourced::unknown(1, "num_processes: -1 leaves the count to `accelerate launch --num_processes`"),
        None if single => default(1, "num_processes=1 with distributed_type NO"),
        None => Sourced::unknown(1, "num_processes is not set; `accelerate launch --num_processes` decides"),
    }
}

/// ZeRO settings of the `deepspeed_config` mapping (launcher default stage 2), or of the
/// JSON file it names.
fn deepspeed_sharding(r: &Reader) -> Sourced<Sharding> {
    if let Some(file) = r.str("deepspeed_config.deepspeed_config_file") {
        return deepspeed::sharding_from_name(&file).unwrap_or_else(|| {
            Sourced::unknown(
                Sharding::Zero { stage: 0, offload_optimizer: false, offload_params: false },
                format!("the ZeRO stage is set inside `{}`, which is not read", file.value),
            )
        });
    }
    let offloads = |key: &str| {
        r.str(&format!("deepspeed_config.{key}"))
            .is_some_and(|d| matches!(d.value.to_ascii_lowercase().as_str(), "cpu" | "nvme"))
    };
    let offload_optimizer = offloads("offload_optimizer_device");
    let offload_params = offloads("offload_param_device");
    let zero = |stage: u64| Sharding::Zero { stage: stage.min(3) as u8, offload_optimizer, offload_params };
    match r.u64("deepspeed_config.zero_stage") {
        Some(stage) => stage.map(zero),
        None => default(zero(2), "launcher zero_stage=2"),
    }
}

pub(crate) fn plan(r: &Reader) -> Plan {
    let mut plan = Plan::new(Framework::Accelerate);
    plan.command = Some("launch".to_string());
    let distributed = r.str("distributed_type");
    let kind = distributed.as_ref().map(|d| d.value.to_ascii_uppercase());
    let single = matches!(kind.as_deref(), Some("NO" | "FALSE"));

    let machines = r.u64("num_machines").filter(|m| m.value > 0);
    let machine_count = machines.as_ref().map_or(1, |m| m.value);
    plan.num_nodes = Some(
        machines
            .unwrap_or_else(|| facts::count_as(Accelerate, "num_machines", |v| format!("{VERSION} num_machines={v}"))),
    );
    plan.devices = Some(devices(r, single, machine_count));
    plan.precision = Some(mixed_precision(r).unwrap_or_else(|| {
        if r.has("deepspeed_config.deepspeed_config_file") {
            Sourced::unknown(Precision::Mixed(Dtype::Bf16), "fp16/bf16 are set in the DeepSpeed config file")
        } else {
            default(Precision::True(Dtype::F32), "mixed_precision=no")
        }
    }));

    plan.sharding = match (kind.as_deref(), distributed) {
        (Some("FSDP"), _) => {
            let version = fsdp_key(r, "fsdp_config.", "version", Reader::u64).map_or(1, |v| v.value);
            plan.gradient_checkpointing = fsdp_checkpointing(r, "fsdp_config.");
            Some(fsdp_sharding(r, "fsdp_config.", version, &format!("{VERSION} launcher")))
        }
        (Some("DEEPSPEED"), _) => {
            plan.gradient_accumulation = r.u64("deepspeed_config.gradient_accumulation_steps");
            Some(deepspeed_sharding(r))
        }
        (Some("MEGATRON_LM"), Some(d)) => {
            Some(Sourced::unknown(Sharding::None, format!("{} parallelism is not modelled", d.value)))
        }
        (_, Some(d)) => Some(d.map(|_| Sharding::None)),
        (_, None) => None,
    };
    let settings = settings(r);
    if let Some(sizes) = settings.parallelism.as_ref().filter(|_| parallelism_applies(kind.as_deref())) {
        plan.tensor_parallel = tensor_parallel(sizes);
        plan.sequence_parallel = sequence_parallel(sizes);
        if kind.as_deref() == Some("FSDP") {
            plan.shard_group = shard_group(sizes);
        }
    }
    plan.accelerate = Some(settings);
    plan
}

/// Whether the launcher hands a `parallelism_config` to the processes: `accelerate launch`
/// sets `use_parallelism_config` when the block is not empty (`commands/launch.py`
/// `_validate_launch_command`), and `prepare_multi_gpu_env` (MULTI_GPU and FSDP) and, from
/// 1.12, `prepare_deepspeed_cmd_env` export it as `PARALLELISM_CONFIG_*` for
/// `Accelerator` to read (`utils/launch.py`); a single process (`NO`) gets none.
fn parallelism_applies(distributed_type: Option<&str>) -> bool {
    matches!(distributed_type, Some("FSDP" | "DEEPSPEED")) || distributed_type.is_some_and(|d| d.starts_with("MULTI_"))
}

/// `parallelism_config_tp_size` above 1: the model is loaded with transformers' TP plan
/// (`Accelerator.prepare_model` refuses a model without one: "Model should undergo tensor
/// parallel before passing it to accelerate.") over `tp_size` ranks.
fn tensor_parallel(sizes: &ParallelismSizes) -> Option<Sourced<TensorParallel>> {
    let tp = Some(sizes.tp.clone()).filter(|n| n.value > 1)?;
    Some(tp.map(|n| TensorParallel { size: Some(n as u64), layout: TpLayout::Transformers }))
}

/// `parallelism_config_cp_size` (context parallelism, FSDP2) or `parallelism_config_sp_size`
/// (DeepSpeed's ALST/Ulysses) above 1: each rank holds its share of every sequence.
fn sequence_parallel(sizes: &ParallelismSizes) -> Option<Sourced<u64>> {
    [&sizes.cp, &sizes.sp].into_iter().find(|n| n.value > 1).cloned().map(|n| n.map(|v| v as u64))
}

/// A written `parallelism_config_dp_shard_size`: FSDP2 shards over the `dp_shard_cp` mesh,
/// `dp_shard_size × cp_size` ranks (`parallelism_config.py` `ParallelismConfig.fsdp_dim_names`,
/// with `dp_replicate` holding replicas of it: hybrid sharding).
fn shard_group(sizes: &ParallelismSizes) -> Option<Sourced<u64>> {
    let shard = Some(sizes.dp_shard.clone()).filter(|n| n.is_from_file() && n.value > 0)?;
    let cp = sizes.cp.value.max(1);
    Some(Sourced::derived(
        (shard.value * cp) as u64,
        "parallelism_config_dp_shard_size × parallelism_config_cp_size (FSDP's dp_shard_cp mesh)",
    ))
}

/// The `parallelism_config` block's sizes, each as written or the launcher's default of 1.
fn parallelism_sizes(r: &Reader) -> Option<ParallelismSizes> {
    let block = r.entry("parallelism_config")?;
    if block.value.as_mapping().is_none_or(|m| m.entries.is_empty()) {
        return None;
    }
    let size = |name: &str| {
        let key = format!("parallelism_config_{name}");
        r.i64(&format!("parallelism_config.{key}"))
            .unwrap_or_else(|| facts::default(Accelerate, &key, facts::number(Accelerate, &key) as i64))
    };
    let backend = "parallelism_config_sp_backend";
    Some(ParallelismSizes {
        key: block.key_span,
        dp_replicate: size("dp_replicate_size"),
        dp_shard: size("dp_shard_size"),
        tp: size("tp_size"),
        cp: size("cp_size"),
        sp: size("sp_size"),
        sp_backend: r
            .str(&format!("parallelism_config.{backend}"))
            .unwrap_or_else(|| facts::default(Accelerate, backend, facts::text(Accelerate, backend).to_string())),
    })
}

/// The `deepspeed_config` keys accelerate ignores next to a `deepspeed_config_file`
/// (`utils/dataclasses.py` `DeepSpeedPlugin._deepspeed_config_checks`, without `mixed_precision`,
/// which is a top-level key).
const OWNED_BY_DEEPSPEED_FILE: [&str; 8] = [
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_stage",
    "offload_optimizer_device",
    "offload_param_device",
    "offload_param_nvme_path",
    "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
];

fn settings(r: &Reader) -> AccelerateSettings {
    let reshard = "fsdp_config.fsdp_reshard_after_forward";
    let deepspeed_file = "deepspeed_config.deepspeed_config_file";
    AccelerateSettings {
        first_key: r.root.entries.first().map(|e| e.key_span),
        distributed_type: r.nullable("distributed_type", |r, k| r.str(k)),
        num_processes: r.nullable("num_processes", |r, k| r.i64(k)).unwrap_or_else(|| {
            facts::default(Accelerate, "num_processes", Some(facts::number(Accelerate, "num_processes") as i64))
        }),
        mixed_precision: r.str("mixed_precision"),
        deepspeed_config_file: r.str(deepspeed_file),
        deepspeed_keys_owned_by_file: OWNED_BY_DEEPSPEED_FILE
            .into_iter()
            .filter_map(|k| {
                let entry = r.entry(&format!("deepspeed_config.{k}"))?;
                Some(Sourced::file(k, entry.key_span, entry.value.span))
            })
            .collect(),
        fsdp_version: r.str("fsdp_config.fsdp_version"),
        fsdp_cpu_ram_efficient_loading: r
            .flag("fsdp_config.fsdp_cpu_ram_efficient_loading")
            .unwrap_or_else(|| default(false, "fsdp_cpu_ram_efficient_loading=False")),
        fsdp_sync_module_states: r.bool("fsdp_config.fsdp_sync_module_states"),
        fsdp_state_dict_type: r.str("fsdp_config.fsdp_state_dict_type"),
        fsdp_reshard_after_forward: r
            .entry(reshard)
            .filter(|e| e.value.as_scalar().is_some_and(|s| !matches!(s.kind, ScalarKind::Bool(_) | ScalarKind::Null)))
            .and_then(|_| r.str(reshard)),
        parallelism: parallelism_sizes(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::test_support::{each_corpus_file, plan_with, spanned};
    use crate::plan::Origin;
    use crate::syntax::{self, Language};

    fn plan_of(text: &str) -> Plan {
        plan_with(text, Language::Yaml, plan)
    }

    #[test]
    fn fsdp2_config() {
        let text = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_offload_params: true\n  fsdp_reshard_after_forward: false\n  fsdp_activation_checkpointing: true\nmixed_precision: bf16  # or fp16\nnum_machines: 1\nnum_processes: 8\n";
        let p = plan_of(text);
        let sharding = p.sharding.as_ref().unwrap();
        assert_eq!(sharding.value, Sharding::Fsdp { full_shard: false, offload_params: true });
        assert_eq!(spanned(text, sharding), "false");
        let devices = p.devices.as_ref().unwrap();
        assert_eq!(devices.value, 8);
        assert_eq!(spanned(text, devices), "8");
        let precision = p.precision.as_ref().unwrap();
        assert_eq!(precision.value, Precision::Mixed(Dtype::Bf16));
        assert_eq!(spanned(text, precision), "bf16");
        assert_eq!(p.gradient_checkpointing.as_ref().unwrap().value, Checkpointing::Full);
        assert_eq!(p.world_size(), 8);
    }

    #[test]
    fn fsdp1_uses_the_sharding_strategy_and_multi_node_counts_split() {
        let text = "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\nnum_machines: 2\nnum_processes: 16\nmixed_precision: 'no'\n";
        let p = plan_of(text);
        let sharding = p.sharding.as_ref().unwrap();
        assert_eq!(sharding.value, Sharding::Fsdp { full_shard: false, offload_params: false });
        assert_eq!(spanned(text, sharding), "SHARD_GRAD_OP");
        assert_eq!(p.devices.as_ref().unwrap().value, 8);
        assert_eq!(p.num_nodes.as_ref().unwrap().value, 2);
        assert_eq!(p.world_size(), 16);
        assert_eq!(p.precision.unwrap().value, Precision::True(Dtype::F32));
    }

    #[test]
    fn deepspeed_plugin_defaults_to_stage_two() {
        let text = "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n  offload_optimizer_device: cpu\n  offload_param_device: none\nnum_processes: -1\n";
        let p = plan_of(text);
        let sharding = p.sharding.unwrap();
        assert_eq!(sharding.value, Sharding::Zero { stage: 2, offload_optimizer: true, offload_params: false });
        assert!(matches!(sharding.origin, Origin::Default { .. }));
        assert_eq!(spanned(text, p.gradient_accumulation.as_ref().unwrap()), "4");
        assert!(matches!(p.devices.unwrap().origin, Origin::Unknown { .. }));
    }

    #[test]
    fn deepspeed_config_file_name_and_bare_no() {
        let p =
            plan_of("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds/zero3_offload.json\n");
        assert_eq!(
            p.sharding.unwrap().value,
            Sharding::Zero { stage: 3, offload_optimizer: true, offload_params: true }
        );
        assert!(matches!(p.precision.unwrap().origin, Origin::Unknown { .. }));
        let single = plan_of("distributed_type: NO\nmixed_precision: no\n");
        assert_eq!(single.devices.unwrap().value, 1);
        assert_eq!(single.sharding.unwrap().value, Sharding::None);
        assert_eq!(single.precision.unwrap().value, Precision::True(Dtype::F32));
    }

    #[test]
    fn the_parallelism_config_block_sets_tensor_and_context_parallelism() {
        let text = "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\nnum_processes: 8\nparallelism_config:\n  parallelism_config_dp_shard_size: 2\n  parallelism_config_tp_size: 2\n  parallelism_config_cp_size: 2\n";
        let p = plan_of(text);
        let tp = p.tensor_parallel.as_ref().expect("tensor parallel");
        assert_eq!(tp.value, TensorParallel { size: Some(2), layout: TpLayout::Transformers });
        assert_eq!(spanned(text, tp), "2");
        assert_eq!(p.sequence_parallel.as_ref().map(|n| n.value), Some(2));
        assert_eq!(p.shard_group.as_ref().map(|n| n.value), Some(4));
        let sizes = p.accelerate.as_ref().and_then(|a| a.parallelism.clone()).expect("sizes");
        assert_eq!((sizes.dp_shard.value, sizes.tp.value, sizes.cp.value, sizes.sp.value), (2, 2, 2, 1));
        assert!(matches!(sizes.dp_replicate.origin, Origin::Default { .. }));
        // A single process gets no parallelism config; an empty block is none.
        let single = plan_of("distributed_type: 'NO'\nparallelism_config:\n  parallelism_config_tp_size: 2\n");
        assert!(single.tensor_parallel.is_none());
        let empty = plan_of("distributed_type: MULTI_GPU\nparallelism_config: {}\n");
        assert!(empty.accelerate.unwrap().parallelism.is_none());
    }

    #[test]
    fn trainer_fsdp_option_forms() {
        let read = |text: &str| {
            let doc = syntax::parse(text, Language::Yaml);
            trainer_fsdp_options(&Reader::new(doc.root_mapping().unwrap()), "fsdp").map(|s| s.value)
        };
        assert_eq!(
            read("fsdp: full_shard auto_wrap offload\n"),
            Some(Sharding::Fsdp { full_shard: true, offload_params: true })
        );
        assert_eq!(
            read("fsdp:\n  - shard_grad_op\n  - auto_wrap\n"),
            Some(Sharding::Fsdp { full_shard: false, offload_params: false })
        );
        assert_eq!(read("fsdp: true\n"), Some(Sharding::Fsdp { full_shard: true, offload_params: false }));
        assert_eq!(read("fsdp: false\n"), None);
        assert_eq!(read("fsdp:\n"), None);
    }

    /// Every accelerate config in the shared corpus builds a plan; each names its world size
    /// or says why not.
    #[test]
    fn corpus_files_build_plans() {
        each_corpus_file("accelerate", Language::Yaml, |path, _, reader| {
            let p = plan(reader);
            assert!(p.sharding.is_some(), "{}: no sharding", path.display());
            let stated = reader.i64("num_processes").is_some_and(|n| n.value > 0);
            let origin = &p.devices.as_ref().unwrap().origin;
            let read = matches!(origin, Origin::File { .. } | Origin::Derived { .. });
            assert_eq!(read, stated, "{}: devices {origin:?}", path.display());
        });
    }

    #[test]
    fn the_world_size_is_stated_by_num_processes_or_distributed_type_no() {
        let world = |text: &str| plan_of(text).stated_world_size();
        assert_eq!(world("distributed_type: MULTI_GPU\nnum_processes: 8\n"), Some(8));
        assert_eq!(world("distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\n"), Some(16));
        assert_eq!(world("distributed_type: NO\n"), Some(1));
        assert_eq!(world("distributed_type: MULTI_GPU\n"), None);
        assert_eq!(world("distributed_type: MULTI_GPU\nnum_processes: -1\n"), None);
    }
}
