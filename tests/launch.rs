//! Launch scripts read into the plan of the program they run: `fixtures/launch/`, and every
//! launch script of `../shared/corpus-wild` that runs a program oomlint reads.

mod common;

use oomlint::analysis::{analyze_text, Options};
use oomlint::format::Format;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> oomlint::analysis::Analysis {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch").join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    analyze_text(&path, text, &Options::default())
}

#[test]
fn launchers_set_the_world_size_and_programs_read_their_flags() {
    // (script, program format, world size, micro batch)
    let cases = [
        ("accelerate_trl_sft.sh", Format::TrlSft, Some(8), 4),
        ("torchrun_trl.sh", Format::TrlSft, Some(8), 2),
        ("deepspeed_module.slurm", Format::TrlSft, Some(16), 1),
        ("litgpt_lora.sh", Format::LitgptLora, Some(2), 4),
        ("trl_cli_dpo.sh", Format::TrlDpo, None, 8),
        ("llamafactory.sh", Format::Llamafactory, None, 2),
        ("verl_grpo.sh", Format::Verl, Some(8), 4),
        ("uv_torchrun_args.sh", Format::TrlSft, Some(8), 2),
        ("slurm_nodes.slurm", Format::TrlSft, Some(16), 1),
        ("openrlhf_ppo.sh", Format::Openrlhf, Some(8), 4),
        ("openrlhf_sft_heredoc.sh", Format::Openrlhf, Some(4), 2),
        ("bash_c_verl.sh", Format::Verl, Some(4), 8),
        ("verl_arithmetic.sh", Format::Verl, Some(4), 4),
    ];
    for (name, format, world, micro) in cases {
        let analysis = fixture(name);
        assert_eq!(analysis.format, format, "{name}");
        let plan = analysis.plan.as_ref().unwrap_or_else(|| panic!("{name}: no plan"));
        assert_eq!(plan.stated_world_size(), world, "{name}");
        assert_eq!(plan.micro_batch_size.as_ref().map(|m| m.value), Some(micro), "{name}");
    }
}

#[test]
fn a_verl_launch_reads_its_hydra_overrides() {
    let analysis = fixture("verl_grpo.sh");
    let plan = serde_json::to_value(analysis.plan.as_ref().expect("plan")).expect("json");
    let rl = &plan["rl"];
    assert_eq!(rl["num_generations"]["value"], 8);
    assert_eq!(rl["max_completion_length"]["value"], 2048);
    assert_eq!(rl["vllm"]["gpu_memory_utilization"]["value"], 0.6);
    assert_eq!(rl["vllm"]["enable_sleep_mode"]["value"], true, "free_cache_engine defaults to true");
    assert_eq!(plan["model"]["value"]["name"], "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(plan["max_seq_length"]["value"], 3072);
    let estimate = analysis.estimate.as_ref().expect("the model is in the catalog");
    use oomlint::estimate::Phase;
    let component = |name: &str| estimate.components.iter().find(|c| c.name == name);
    // optimizer_offload: `update_actor` loads the optimizer state for the whole update, not for
    // generation or the log-prob passes.
    let optimizer = component("optimizer").expect("optimizer state");
    assert_eq!(optimizer.live_in, [Phase::Forward, Phase::Backward, Phase::BackwardEnd, Phase::OptimizerStep]);
    // The reference (param_offload) is on the GPU for its log-prob pass only, beside that pass's logits.
    assert_eq!(component("reference-model").expect("reference").live_in, [Phase::LogProbs]);
    let pass = component("log-prob-forward").expect("the no-grad log-prob pass");
    assert!(pass.formula.starts_with("24576 tokens"), "8 sequences × 3072 tokens: {}", pass.formula);
    // verl's log-probs keep the 16-bit logits of every token, their gradient in place: β·V + 8 per token.
    let logits = component("logits-loss").expect("logits");
    assert!(logits.formula.contains("gradient written in place"), "{}", logits.formula);
    // FSDP's MixedPrecision casts the gathered units: no autocast copies of the whole model.
    assert!(component("autocast-weight-copies").is_none());
    assert!(estimate.missing_inputs.iter().any(|m| m.contains("use_remove_padding")), "{:?}", estimate.missing_inputs);
    // 64 × 8 sequences per mini batch over 8 GPUs, 4 per micro batch.
    assert_eq!(analysis.plan.as_ref().and_then(|p| p.gradient_accumulation.as_ref()).map(|g| g.value), Some(16));
}

#[test]
fn shell_arithmetic_in_a_launch_is_evaluated() {
    let analysis = fixture("verl_arithmetic.sh");
    let plan = serde_json::to_value(analysis.plan.as_ref().expect("plan")).expect("json");
    // 1536 = 512 + $(( 2 * 512 )); 32 prompts × 5 sequences per mini batch over 4 GPUs, 4 per micro batch.
    assert_eq!(plan["rl"]["max_completion_length"]["value"], 1024);
    assert_eq!(plan["max_seq_length"]["value"], 1536);
    assert_eq!(analysis.plan.as_ref().and_then(|p| p.gradient_accumulation.as_ref()).map(|g| g.value), Some(10));
}

#[test]
fn an_openrlhf_launch_reads_its_flags_and_is_estimated_on_an_actor_gpu() {
    let analysis = fixture("openrlhf_ppo.sh");
    let plan = serde_json::to_value(analysis.plan.as_ref().expect("plan")).expect("json");
    assert_eq!(plan["model"]["value"]["name"], "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(plan["rl"]["num_generations"]["value"], 8);
    assert_eq!(plan["rl"]["max_completion_length"]["value"], 2048);
    assert_eq!(plan["rl"]["vllm"]["mode"]["value"], "colocate");
    assert_eq!(plan["rl"]["vllm"]["gpu_memory_utilization"]["value"], 0.6);
    assert_eq!(plan["sharding"]["value"]["zero"]["stage"], 3, "{plan:#}");
    assert_eq!(plan["sharding"]["value"]["zero"]["offload_optimizer"], true);
    assert_eq!(plan["micro_batch_size"]["origin"]["kind"], "file");
    // Defaults name their release and flag.
    let default = plan["attention"]["origin"]["of"].as_str().unwrap_or_default();
    assert!(default.contains("attn_implementation"), "{default}");
    // 128 ÷ 4 per micro batch ÷ 8 actor GPUs.
    assert_eq!(plan["gradient_accumulation"]["value"], 4);
    let estimate = analysis.estimate.as_ref().expect("the model is in the catalog");
    let names: Vec<_> = estimate.components.iter().map(|c| c.name).collect();
    // ZeRO-3 with the optimizer on the CPU; the reference colocated.
    assert!(!names.contains(&"optimizer"), "{names:?}");
    assert!(names.contains(&"reference-model"), "{names:?}");
    // One GPU of the actor's group: said, not hidden.
    let missing = &estimate.missing_inputs;
    assert!(missing.iter().any(|m| m.starts_with("OpenRLHF: one GPU")), "{missing:?}");
    let sft = fixture("openrlhf_sft_heredoc.sh");
    let plan = sft.plan.as_ref().expect("plan");
    assert_eq!(plan.max_seq_length.as_ref().map(|m| m.value), Some(4096));
}

#[test]
fn a_zero3_offload_launch_is_estimated_per_rank() {
    let analysis = fixture("deepspeed_module.slurm");
    let estimate = analysis.estimate.expect("estimate");
    // The DeepSpeed file's name states both offloads; 16 ranks are set by the launch.
    assert!(estimate.per_world_size.is_empty());
    assert!(estimate.components.iter().all(|c| c.name != "master-weights" && c.name != "optimizer"));
    assert!(estimate.peak.allocated_bytes < 40 << 30, "{}", estimate.peak.allocated_bytes);
}

fn corpus_wild() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus-wild");
    if dir.join("MANIFEST.tsv").is_file() {
        Some(dir)
    } else {
        eprintln!("notice: ../shared/corpus-wild is absent; skipping the launch-script corpus test");
        None
    }
}

/// The corpus's launch scripts that get no plan, by path prefix, with a word of the script
/// that shows why and the reason. Every other launch script gets one.
const NO_PLAN: [(&str, &str, &str); 15] = [
    (
        "ms-swift/examples/train/flash_attention_3/",
        "megatron sft",
        "ms-swift's `megatron` CLI, a program oomlint does not read",
    ),
    ("ms-swift/", "swift ", "ms-swift's `swift` CLI, a program oomlint does not read"),
    (
        "openrlhf/examples/scripts/train_nonrl_slurm.sh",
        "-m ${training_commands}",
        "the command is built at run time (`training_commands` is not set in the script), by OpenRLHF's trainers",
    ),
    (
        "open-instruct/",
        "open_instruct/",
        "open-instruct's own trainers (`open_instruct/*.py`), a program oomlint does not read",
    ),
    (
        "open-r1/slurm/train.slurm",
        "bash -c \"$LAUNCHER $CMD\"",
        "the command is built at run time from the script's arguments (model, task, config)",
    ),
    ("open-r1/slurm/e2b_router.slurm", "e2b_router.py", "serves a code-execution router, no training"),
    ("open-r1/slurm/evaluate.slurm", "lighteval", "evaluation, no training"),
    ("open-r1/slurm/experimental/serve_r1_vllm.slurm", "vllm", "serving, no training"),
    ("open-r1/slurm/generate.slurm", "generate", "generation, no training"),
    ("open-r1/slurm/piston/launch_piston_workers.sh", "piston", "code-execution workers, no training"),
    ("open-r1/slurm/piston/launch_single_piston.sh", "piston", "a code-execution worker, no training"),
    ("open-r1/slurm/serve_r1.slurm", "sglang.launch_server", "serving, no training"),
    ("open-r1/slurm/serve_router.slurm", "sglang_router", "serving, no training"),
    // Listed so that a script added to the corpus under an unknown prefix fails the test.
    ("verl/", "", ""),
    ("openrlhf/", "", ""),
];

/// Every launch script of the corpus, analysed as `oomlint check` does (the project's
/// resolver reads the files a launch names), gets a plan of the program it runs, except
/// those [`NO_PLAN`] lists with the reason.
#[test]
fn corpus_launch_scripts_of_supported_programs_get_a_plan() {
    let Some(dir) = corpus_wild() else { return };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("manifest");
    let project = std::sync::Arc::new(oomlint::project::Project::default());
    let (mut scripts, mut planned, mut wrong) = (0, Vec::new(), Vec::new());
    for line in manifest.lines().skip(1) {
        let path = line.split('\t').next().unwrap_or_default();
        if !path.ends_with(".sh") && !path.ends_with(".slurm") && !path.ends_with(".sbatch") {
            continue;
        }
        scripts += 1;
        let full = dir.join(path);
        let text = std::fs::read_to_string(&full).expect("corpus file");
        let options = project.options(&full, None).expect("options");
        let analysis = analyze_text(&full, text.clone(), &options);
        let has_plan = analysis.format != Format::Env && analysis.plan.is_some();
        let listed = NO_PLAN.iter().find(|(prefix, _, reason)| path.starts_with(prefix) && !reason.is_empty());
        match (has_plan, listed) {
            (true, None) => planned.push(format!("{path}: {}", analysis.format.name())),
            (false, Some((_, word, reason))) if text.contains(word) => eprintln!("no plan, {reason}: {path}"),
            (false, Some((_, word, _))) => wrong.push(format!("{path}: the script has no `{word}`")),
            (true, Some(_)) => wrong.push(format!("{path}: gets a plan now; remove it from NO_PLAN")),
            (false, None) => wrong.push(format!("{path}: no plan")),
        }
    }
    eprintln!("corpus-wild launch scripts: {scripts}, {} with a plan:\n{}", planned.len(), planned.join("\n"));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!((scripts, planned.len()), (43, 21));
}

#[test]
fn named_config_files_are_read_and_merged_under_the_flags() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/accelerate_config_files.sh");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let resolver: std::sync::Arc<dyn oomlint::model::Resolver> =
        std::sync::Arc::new(oomlint::project::Project::default());
    let analysis = analyze_text(&path, text, &Options { resolver: Some(resolver), ..Options::default() });
    let plan = analysis.plan.as_ref().expect("a plan");
    // The flag overrides the TRL config; the accumulation comes from the config.
    assert_eq!(plan.micro_batch_size.as_ref().map(|m| m.value), Some(2));
    assert_eq!(plan.gradient_accumulation.as_ref().map(|m| m.value), Some(4));
    assert_eq!(plan.max_seq_length.as_ref().map(|m| m.value), Some(2048));
    // The accelerate config's processes are the world size.
    assert_eq!(plan.stated_world_size(), Some(4));
    let json = serde_json::to_value(plan).expect("json");
    assert_eq!(json["gradient_accumulation"]["origin"]["kind"], "linked", "{json:#}");
    assert_eq!(json["linked_files"].as_array().map(Vec::len), Some(3), "{json:#}");
    // `oomlint plan` places it in the config: line 3 of configs/sft.yaml.
    let out = common::oomlint(&["plan", path.to_str().unwrap()]);
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("plan json");
    let origin = &printed["plan"]["gradient_accumulation"]["origin"];
    assert_eq!(origin["line"], 3, "{origin:#}");
    assert_eq!(
        origin["value"],
        serde_json::json!({"start": {"line": 3, "column": 30}, "end": {"line": 3, "column": 31}})
    );
    // The DeepSpeed file read by content: both offloads, so no optimizer on the device.
    let estimate = analysis.estimate.expect("estimate");
    assert!(estimate.components.iter().all(|c| c.name != "optimizer"), "{:?}", estimate.components);
}

#[test]
fn an_accelerate_parallelism_config_splits_the_program_over_tensor_and_data_parallel_ranks() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/accelerate_tensor_parallel.sh");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let resolver: std::sync::Arc<dyn oomlint::model::Resolver> =
        std::sync::Arc::new(oomlint::project::Project::default());
    let analysis = analyze_text(&path, text, &Options { resolver: Some(resolver), ..Options::default() });
    let plan = analysis.plan.as_ref().expect("a plan");
    assert_eq!(plan.stated_world_size(), Some(8));
    let json = serde_json::to_value(plan).expect("json");
    assert_eq!(json["tensor_parallel"]["value"]["size"], 2, "{json:#}");
    assert_eq!(json["tensor_parallel"]["value"]["layout"], "transformers", "{json:#}");
    assert_eq!(json["tensor_parallel"]["origin"]["kind"], "linked", "{json:#}");
    let estimate = analysis.estimate.expect("estimate");
    let note = &estimate.notes[0];
    assert!(note.contains("tensor parallelism over 2 ranks × 4 data-parallel"), "{note}");
    assert!(note.contains("an equal 1/4 shard of the parameters"), "{note}");
    // The whole model's parameters are reported; each rank holds a quarter of its slice.
    let weights = estimate.components.iter().find(|c| c.name == "weights").expect("weights");
    assert!(weights.formula.ends_with("/ 4 ranks"), "{}", weights.formula);
    assert!(estimate.parameters > 7_000_000_000, "{}", estimate.parameters);
}

#[test]
fn accelerate_launch_flags_set_the_config_keys_they_stand_for() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch");
    let resolver: std::sync::Arc<dyn oomlint::model::Resolver> =
        std::sync::Arc::new(oomlint::project::Project::default());
    let options = Options { resolver: Some(resolver), ..Options::default() };
    let tensor_parallel = |script: &str| {
        let analysis = analyze_text(&dir.join("flags.sh"), script.to_string(), &options);
        let plan = analysis.plan.as_ref().unwrap_or_else(|| panic!("no plan: {script}"));
        assert_eq!(analysis.format, Format::TrlSft, "{script}");
        let json = serde_json::to_value(plan).expect("json");
        (json["tensor_parallel"]["value"]["size"].as_u64(), json["sharding"]["value"].clone())
    };
    let text = std::fs::read_to_string(dir.join("accelerate_parallelism_flags.sh")).expect("fixture");
    let (tp, sharding) = tensor_parallel(&text);
    assert_eq!(tp, Some(2));
    assert_eq!(sharding["fsdp"]["full_shard"], true, "--use_fsdp shards the program's model: {sharding}");
    // Without --use_parallelism_config the launcher exports no PARALLELISM_CONFIG_*.
    let ignored = text.replace("--use_parallelism_config", "");
    assert_eq!(tensor_parallel(&ignored).0, None);
    // A flag wins over the config file's key.
    let config = "accelerate launch --config_file configs/accelerate_fsdp_tp.yaml --parallelism_config_tp_size 4 \\\n    --parallelism_config_dp_shard_size 2 train.py --config configs/sft.yaml\n";
    assert_eq!(tensor_parallel(config).0, Some(4));
    // A mode flag makes the launcher skip the config's distributed_type and its parallelism block.
    let mode = "accelerate launch --config_file configs/accelerate_fsdp_tp.yaml --multi_gpu train.py --config configs/sft.yaml\n";
    assert_eq!(tensor_parallel(mode).0, None);
}

#[test]
fn a_config_opened_alone_is_read_with_the_launch_beside_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/beside/sft.yaml");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let project = std::sync::Arc::new(oomlint::project::Project::default());
    let options = project.options(&path, None).expect("options");
    let analysis = analyze_text(&path, text.clone(), &options);
    assert_eq!(analysis.format, Format::TrlSft);
    let plan = analysis.plan.as_ref().expect("a plan");
    // train.sh runs it on 8 processes with its micro batch; other.sh names another file.
    assert_eq!(plan.stated_world_size(), Some(8));
    assert_eq!(plan.micro_batch_size.as_ref().map(|m| m.value), Some(4));
    assert_eq!(plan.gradient_accumulation.as_ref().map(|m| m.value), Some(2));
    let json = serde_json::to_value(plan).expect("json");
    assert_eq!(json["micro_batch_size"]["origin"]["kind"], "linked", "{json:#}");
    assert_eq!(json["gradient_accumulation"]["origin"]["kind"], "file", "{json:#}");
    assert!(json["linked_files"][0]["path"].as_str().is_some_and(|p| p.ends_with("train.sh")), "{json:#}");
    let estimate = analysis.estimate.as_ref().expect("estimate");
    assert_eq!(estimate.notes.len(), 2, "{:?}", estimate.notes);
    assert!(estimate.notes[0].starts_with("per rank: each of the 8 ranks holds"), "{:?}", estimate.notes);
    assert_eq!(estimate.notes[1], "analysed with the launch in train.sh (8 processes)");
    // Without a resolver (no directory to look in) the config is read alone.
    let alone = analyze_text(&path, text, &Options::default());
    assert_eq!(alone.plan.as_ref().and_then(|p| p.stated_world_size()), None);
    assert!(alone.estimate.expect("estimate").notes.is_empty());
}

/// A launch inside a `bash -lc '…'` string is read as if the script ran it, its words found
/// where the string writes them: findings and hovers land on the override.
#[test]
fn a_launch_inside_a_bash_c_string_is_read_where_it_is_written() {
    let analysis = fixture("bash_c_verl.sh");
    let plan = serde_json::to_value(analysis.plan.as_ref().expect("plan")).expect("json");
    let origin = &plan["micro_batch_size"]["origin"];
    assert_eq!(origin["kind"], "file", "{origin}");
    let start = origin["value"]["start"].as_u64().unwrap() as usize;
    let end = origin["value"]["end"].as_u64().unwrap() as usize;
    assert_eq!(&analysis.text[start..end], "8");
    let line = analysis.text[..start].matches('\n').count();
    assert_eq!(
        analysis.text.lines().nth(line).unwrap().trim(),
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \\"
    );
    assert!(analysis.estimate.is_some(), "Qwen2.5-3B is in the catalog");
}

/// A config whose launch sets the world size, opened alone: the user states it (`--gpus`, a
/// `# oomlint: gpus=` modeline, `gpus` in oomlint.toml, in that order) and the estimate
/// shards over it, saying so; without it, one GPU is assumed and said.
#[test]
fn a_stated_world_size_shards_a_config_opened_alone() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/axolotl/fft-llama3.1-8b-fsdp2.yaml");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let gpu = oomlint::catalog::resolve_gpu("A100-80GB").ok().cloned();
    let peak = |text: &str, options: Options| {
        let analysis = analyze_text(&path, text.to_string(), &Options { gpu: gpu.clone(), ..options });
        let estimate = analysis.estimate.expect("an estimate");
        (estimate.peak.device_bytes, estimate.notes.join(" "), estimate.missing_inputs.join(" "))
    };
    let (alone, notes, missing) = peak(&text, Options::default());
    assert!(missing.contains("assumed one GPU") && notes.is_empty(), "{missing}");
    let (flag, notes, missing) = peak(&text, Options { gpus: Some(8), ..Options::default() });
    assert!(flag * 3 < alone, "8 FSDP ranks shard the state: {flag} vs {alone}");
    assert!(notes.contains("world size 8, as `--gpus 8` states") && !missing.contains("assumed one GPU"), "{notes}");

    let modeline = format!("# oomlint: gpus=8\n{text}");
    let (from_modeline, notes, _) = peak(&modeline, Options::default());
    assert_eq!(from_modeline, flag);
    assert!(notes.contains("`# oomlint: gpus=8`"), "{notes}");
    let settings = std::sync::Arc::new(oomlint::settings::Settings::from_toml("gpus = 8\n").expect("settings"));
    let (from_settings, notes, _) = peak(&text, Options { settings: settings.clone(), ..Options::default() });
    assert_eq!(from_settings, flag);
    assert!(notes.contains("in the project's settings"), "{notes}");
    // The flag wins over the modeline, which wins over the settings.
    let (flag_wins, ..) = peak(&modeline, Options { gpus: Some(2), settings, ..Options::default() });
    assert!(flag_wins > flag, "2 GPUs hold more per rank than 8");

    // A launch in the file wins over the stated world size.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/accelerate_trl_sft.sh");
    let text = std::fs::read_to_string(&script).expect("fixture");
    let analysis = analyze_text(&script, text, &Options { gpus: Some(2), ..Options::default() });
    assert_eq!(analysis.plan.as_ref().and_then(|p| p.stated_world_size()), Some(8));
}

/// `--gpus` on the command line reaches the estimate.
#[test]
fn the_gpus_flag_states_the_world_size() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_oomlint"))
            .args(["estimate", "fixtures/axolotl/fft-llama3.1-8b-fsdp2.yaml", "--gpu", "A100-80GB", "--format", "json"])
            .args(extra)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("oomlint runs");
        // 1 when the estimate exceeds the card (one GPU holding a full fp32 fine-tune of 8B).
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    let (alone, eight) = (run(&[]), run(&["--gpus", "8"]));
    assert_eq!(alone["per_world_size"].as_array().map(Vec::len), Some(3));
    assert!(eight["per_world_size"].as_array().is_none_or(Vec::is_empty));
    assert!(eight["peak"]["device_bytes"].as_u64() < alone["peak"]["device_bytes"].as_u64());
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_oomlint"))
        .args(["estimate", "fixtures/axolotl/fft-llama3.1-8b-fsdp2.yaml", "--gpus", "0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("oomlint runs");
    assert_eq!(refused.status.code(), Some(2), "0 GPUs is a usage error");
}

#[test]
fn a_verl_megatron_launch_is_estimated_per_pipeline_stage() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules/tensor-parallel-divides-heads");
    let text = std::fs::read_to_string(dir.join("pass_verl_megatron.sh")).expect("fixture");
    let staged = text.replace(
        "megatron.tensor_model_parallel_size=4",
        "megatron.tensor_model_parallel_size=2 actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2",
    );
    let analysis = analyze_text(&dir.join("megatron.sh"), staged, &Options::default());
    let plan = serde_json::to_value(analysis.plan.as_ref().expect("plan")).expect("json");
    assert_eq!(plan["sharding"]["value"]["megatron"]["distributed_optimizer"], true, "{plan:#}");
    assert_eq!(plan["pipeline_parallel"]["value"], 2, "{plan:#}");
    // 64 × rollout.n 1 over 8 GPUs ÷ (TP 2 × PP 2) = 2 data-parallel ranks: 32 sequences per rank
    // in micro batches of 4.
    assert_eq!(plan["gradient_accumulation"]["value"], 8, "{plan:#}");
    let estimate = analysis.estimate.expect("the model is in the catalog");
    // The last stage, with one micro batch in flight but the logits of its 4 sequences over the
    // vocabulary, peaks above the first with two micro batches in flight.
    assert!(estimate.notes[0].starts_with("per rank: the last of 2 pipeline stages"), "{:?}", estimate.notes);
    assert!(estimate.components.iter().any(|c| c.name == "logits-loss"), "{:?}", estimate.components);
    let gradients = estimate.components.iter().find(|c| c.name == "gradients").expect("gradients");
    assert!(gradients.formula.contains("Megatron's fp32 gradient buffer"), "{}", gradients.formula);
}

#[test]
fn a_lever_edits_each_setting_where_the_launch_or_its_config_sets_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/accelerate_config_files.sh");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let resolver: std::sync::Arc<dyn oomlint::model::Resolver> =
        std::sync::Arc::new(oomlint::project::Project::default());
    let options = Options { resolver: Some(resolver), ..Options::default() };
    let analysis = analyze_text(&path, text.clone(), &options);
    let levers = &analysis.estimate.as_ref().expect("estimate").levers;
    let halve = levers.iter().find(|l| l.title.starts_with("Halve the micro batch")).expect("the lever");
    // The micro batch is the script's flag, halved there; the accumulation is set in
    // configs/sft.yaml (4), so it is doubled in that file, where it is set.
    let files = analysis.edits_by_file(&halve.fixes[0].edits).expect("edits of files the analysis read");
    let in_file = |edits: &[oomlint::diagnostic::Edit], text: &str| {
        common::apply(text, &oomlint::diagnostic::Fix { edits: edits.to_vec(), ..halve.fixes[0].clone() })
    };
    let fixed = in_file(&files[0].edits, &text);
    assert!(fixed.ends_with("--per_device_train_batch_size 1\n"), "{fixed}");
    let [_, config] = &files[..] else { panic!("one other file edited: {files:?}") };
    let linked = config.linked.expect("the config");
    assert!(linked.path.ends_with("configs/sft.yaml"), "{}", linked.path);
    let config_fixed = in_file(&config.edits, &linked.text);
    assert_eq!(config_fixed, linked.text.replace("gradient_accumulation_steps: 4", "gradient_accumulation_steps: 8"));
    // Read with the fixed config, the launch runs the halved batch and doubled accumulation.
    let dir = tempfile::tempdir().unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/configs");
    std::fs::create_dir(dir.path().join("configs")).unwrap();
    for entry in std::fs::read_dir(&configs).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join("configs").join(entry.file_name())).unwrap();
    }
    std::fs::write(dir.path().join("configs/sft.yaml"), config_fixed).unwrap();
    let after = analyze_text(&dir.path().join("accelerate_config_files.sh"), fixed, &options);
    let plan = after.plan.as_ref().expect("a plan");
    assert_eq!(plan.micro_batch_size.as_ref().map(|m| m.value), Some(1));
    assert_eq!(plan.gradient_accumulation.as_ref().map(|m| m.value), Some(8));
    // A repository's own script that takes none of those flags gets no flag added (its parser
    // may not know them): its levers edit the values its config file sets, in that file.
    let own = "torchrun --nproc_per_node 4 train.py --config configs/sft.yaml\n";
    let analysis = analyze_text(&path, own.to_string(), &options);
    let levers = &analysis.estimate.as_ref().expect("estimate").levers;
    let fixes: Vec<_> = levers.iter().flat_map(|l| &l.fixes).collect();
    assert!(!fixes.is_empty(), "{levers:?}");
    for fix in fixes {
        let files = analysis.edits_by_file(&fix.edits).expect("edits of files the analysis read");
        assert!(files[0].edits.is_empty(), "the script is not edited: {files:?}");
        assert!(files[1..].iter().all(|f| f.linked.is_some_and(|l| l.path.ends_with("configs/sft.yaml"))), "{files:?}");
    }

    // LLaMA-Factory reads `key=value` overrides after its config file.
    let factory = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launch/factory.sh");
    let text = "llamafactory-cli train missing.yaml model_name_or_path=Qwen/Qwen2.5-7B-Instruct \\\n    \
                stage=sft finetuning_type=lora per_device_train_batch_size=2 learning_rate=1e-4\n";
    let analysis = analyze_text(&factory, text.to_string(), &Options::default());
    let levers = &analysis.estimate.as_ref().expect("estimate").levers;
    let halve = levers.iter().find(|l| l.title.starts_with("Halve the micro batch")).expect("the lever");
    let fixed = common::apply(text, &halve.fixes[0]);
    assert!(
        fixed.contains("per_device_train_batch_size=1 learning_rate=1e-4 gradient_accumulation_steps=2\n"),
        "{fixed}"
    );
}

#[test]
fn a_finding_across_a_launch_and_its_config_is_reported_in_both_and_fixed_where_set() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sft.yaml"), "model_name_or_path: Qwen/Qwen2.5-0.5B\nfp16: true\n").unwrap();
    let script = "accelerate launch --num_processes 2 -m trl.scripts.sft --config sft.yaml --bf16 true\n";
    std::fs::write(dir.path().join("train.sh"), script).unwrap();
    let resolver: std::sync::Arc<dyn oomlint::model::Resolver> =
        std::sync::Arc::new(oomlint::project::Project::default());
    let options = Options { resolver: Some(resolver), ..Options::default() };
    let found = |name: &str| {
        let path = dir.path().join(name);
        let analysis = analyze_text(&path, std::fs::read_to_string(&path).unwrap(), &options);
        let d = analysis.diagnostics.iter().find(|d| d.rule == "fp16-and-bf16").expect("fp16-and-bf16").clone();
        let fix = analysis.edits_by_file(&d.fixes[0].edits).expect("edits of files read");
        let edited: Vec<String> = fix
            .iter()
            .filter(|g| !g.edits.is_empty())
            .map(|g| g.linked.map_or(name.into(), |l| l.path.clone()))
            .collect();
        (analysis.text.get(d.span.start..d.span.end).unwrap_or_default().to_string(), d, edited)
    };
    // In the script: on the word naming the config, bf16's flag related, fp16 edited in the config.
    let (at, d, edited) = found("train.sh");
    assert_eq!(at, "sft.yaml");
    assert!(d.message.ends_with("line 2)"), "{}", d.message);
    assert_eq!(d.related.len(), 1);
    assert!(edited.len() == 1 && edited[0].ends_with("sft.yaml"), "{edited:?}");
    // In the config, read with the launch beside it: on fp16, with where bf16 is set as a note.
    let (at, d, edited) = found("sft.yaml");
    assert_eq!(at, "fp16: true");
    assert!(
        d.related.is_empty()
            && d.notes.iter().any(|n| n.starts_with("bf16 set in `") && n.ends_with("train.sh` line 1")),
        "{:?}",
        d.notes
    );
    assert_eq!(edited, ["sft.yaml"]);
    // A finding wholly in the config fails the launch too: the script reports it on the word
    // naming the config, with where each value is set.
    std::fs::write(dir.path().join("sft.yaml"), "model_name_or_path: Qwen/Qwen2.5-0.5B\nfp16: true\nbf16: true\n")
        .unwrap();
    std::fs::write(dir.path().join("train.sh"), script.replace(" --bf16 true", "")).unwrap();
    let (at, d, edited) = found("train.sh");
    assert_eq!(at, "sft.yaml");
    let noted = d.notes.iter().any(|n| n.starts_with("bf16 set in `") && n.ends_with("line 3"));
    assert!(d.message.ends_with("line 2)") && noted, "{d:?}");
    assert!(edited.len() == 1 && edited[0].ends_with("sft.yaml"), "{edited:?}");
}

#[test]
fn verl_hands_lora_weights_to_its_rollout_engine_whole_or_a_layer_at_a_time() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/verl/published/qwen2.5-7b-grpo-lora-8gpu.sh");
    let layered = std::fs::read_to_string(&path).expect("fixture");
    assert!(layered.contains("actor_rollout_ref.rollout.layered_summon=True"));
    let options = Options { gpu: Some(oomlint::catalog::resolve_gpu("H100").unwrap().clone()), ..Options::default() };
    let sync = |text: String| {
        let estimate = analyze_text(&path, text, &options).estimate.expect("estimate");
        let gather =
            estimate.components.iter().find(|c| c.name == "weight-sync-gather").expect("a weight-sync gather").clone();
        (estimate, gather)
    };
    // FSDP1 without layered_summon: FSDP.summon_full_params unshards every fp32 parameter at once,
    // the peak of the step (Qwen2.5-7B: 7.62 B parameters x 4 B).
    let (whole, gather) = sync(layered.replace("actor_rollout_ref.rollout.layered_summon=True", ""));
    assert_eq!(gather.bytes, whole.parameters * 4, "{}", gather.formula);
    assert_eq!(whole.peak.phase.as_str(), "weight-sync");
    assert!(whole.timeline().iter().any(|p| p.phase.as_str() == "weight-sync" && p.peak));
    // With it: one top-level module at a time (the 152064 x 3584 embedding is the largest), not the peak.
    let (summoned, gather) = sync(layered.clone());
    assert_eq!(gather.bytes, 152_064 * 3_584 * 4, "{}", gather.formula);
    assert_ne!(summoned.peak.phase.as_str(), "weight-sync");
    // FSDP2 is not FSDP1's to summon: its tensors are gathered one at a time.
    let fsdp2 =
        layered.replace("actor_rollout_ref.rollout.layered_summon=True", "actor_rollout_ref.actor.strategy=fsdp2");
    let (_, gather) = sync(fsdp2);
    assert_eq!(gather.bytes, 152_064 * 3_584 * 4, "{}", gather.formula);
}

#[test]
fn verl_levers_offload_the_actor_and_hand_lora_weights_over_a_module_at_a_time() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/verl/published");
    let gpu =
        |name: &str| Options { gpu: Some(oomlint::catalog::resolve_gpu(name).unwrap().clone()), ..Options::default() };
    let lever_fix = |path: &Path, text: &str, options: &Options, starts: &str| {
        let estimate = analyze_text(path, text.to_string(), options).estimate.expect("estimate");
        let lever = estimate
            .levers
            .iter()
            .find(|l| l.title.starts_with(starts))
            .unwrap_or_else(|| panic!("{starts}: {:?}", estimate.levers));
        (lever.saves_bytes, lever.fixes[0].clone(), estimate.peak.device_bytes)
    };
    // Full fine-tuning on A100-80GB: the offloads set the values the script writes.
    let gpg = dir.join("qwen2-7b-gpg-8gpu.sh");
    let text = std::fs::read_to_string(&gpg).unwrap();
    let options = gpu("A100-80GB");
    for (starts, key) in [
        ("Offload the actor's optimizer state", "actor_rollout_ref.actor.fsdp_config.optimizer_offload=False"),
        ("Offload the actor's parameters", "actor_rollout_ref.actor.fsdp_config.param_offload=False"),
    ] {
        let (saves, fix, peak) = lever_fix(&gpg, &text, &options, starts);
        assert_eq!(fix.applicability, oomlint::diagnostic::Applicability::Safe);
        let fixed = common::apply(&text, &fix);
        assert!(fixed.contains(&key.replace("False", "true")), "{starts}");
        let after = analyze_text(&gpg, fixed, &options).estimate.expect("estimate");
        assert_eq!(after.peak.device_bytes, peak - saves, "{starts}");
    }
    // LoRA without layered_summon on A100-40GB: the hand-over's whole-model gather is the peak;
    // the lever adds layered_summon and, over the default dummy load format, safetensors.
    let lora = dir.join("qwen2.5-7b-grpo-lora-8gpu.sh");
    let text = std::fs::read_to_string(&lora)
        .unwrap()
        .replace("actor_rollout_ref.rollout.layered_summon=True", "")
        .replace("actor_rollout_ref.rollout.load_format=safetensors", "");
    let options = gpu("A100-40GB");
    let (_, fix, _) = lever_fix(&lora, &text, &options, "Hand the LoRA weights to the rollout engine");
    let added: Vec<&str> = fix.edits.iter().map(|e| e.content.as_str()).collect();
    assert_eq!(
        added,
        [" actor_rollout_ref.rollout.layered_summon=true actor_rollout_ref.rollout.load_format=safetensors"]
    );
    let after = analyze_text(&lora, common::apply(&text, &fix), &options);
    assert_ne!(after.estimate.expect("estimate").peak.phase.as_str(), "weight-sync");
    assert!(after.diagnostics.iter().all(|d| d.rule != "verl-layered-summon-preload"), "{:?}", after.diagnostics);
    // The same script as published on a 16 GB card: its update's micro batches packed to the
    // tokens the solver fits (4 of its 1536-token sequences), a budget verl reads for the update.
    let text = std::fs::read_to_string(&lora).unwrap();
    let options = gpu("A4000");
    let (saves, fix, peak) = lever_fix(&lora, &text, &options, "Pack the update's micro batches to 6144 tokens");
    let added: Vec<&str> = fix.edits.iter().map(|e| e.content.as_str()).collect();
    assert_eq!(
        added,
        [" actor_rollout_ref.actor.use_dynamic_bsz=true actor_rollout_ref.actor.ppo_max_token_len_per_gpu=6144"]
    );
    let after = analyze_text(&lora, common::apply(&text, &fix), &options);
    assert!(
        after.diagnostics.iter().all(|d| d.severity != oomlint::diagnostic::Severity::Error),
        "{:?}",
        after.diagnostics
    );
    // Read back as verl reads the new keys (its log-prob passes' budget defaults to the actor's
    // too), the run saves at least what the lever says.
    assert!(after.estimate.expect("estimate").peak.device_bytes <= peak - saves);
}
