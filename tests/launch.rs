//! Launch scripts read into the plan of the program they run: `fixtures/launch/`, and every
//! launch script of `../shared/corpus-wild` that runs a program oomlint reads.

use oomlint::analysis::{analyze_bytes, analyze_text, Options};
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

/// Whether a script runs a program oomlint reads, by the commands it writes.
fn runs_a_supported_program(text: &str) -> bool {
    let programs = [
        "trl sft",
        "trl dpo",
        "trl grpo",
        "llamafactory-cli train",
        "axolotl train",
        "axolotl.cli.train",
        "verl.trainer.main_ppo",
        "verl.trainer.fsdp_sft_trainer",
    ];
    let litgpt = ["litgpt finetune", "litgpt pretrain"];
    // open-instruct's scripts run its own trainer (`open_instruct/*.py`), whose dataclasses
    // are a format oomlint does not read, although some flags share transformers' names.
    let hf_script =
        text.contains(".py") && text.contains("--per_device_train_batch_size") && !text.contains("open_instruct/");
    programs.iter().chain(&litgpt).any(|p| text.contains(p)) || hf_script
}

#[test]
fn corpus_launch_scripts_of_supported_programs_get_a_plan() {
    let Some(dir) = corpus_wild() else { return };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("manifest");
    let (mut supported, mut planned, mut missing) = (0, 0, Vec::new());
    for line in manifest.lines().skip(1) {
        let path = line.split('\t').next().unwrap_or_default();
        if !path.ends_with(".sh") && !path.ends_with(".slurm") && !path.ends_with(".sbatch") {
            continue;
        }
        let bytes = std::fs::read(dir.join(path)).expect("corpus file");
        let analysis = analyze_bytes(Path::new(path), &bytes, &Options::default());
        planned += usize::from(analysis.format != Format::Env && analysis.plan.is_some());
        if runs_a_supported_program(&String::from_utf8_lossy(&bytes)) {
            supported += 1;
            if analysis.plan.is_none() || analysis.format == Format::Env {
                missing.push(path.to_string());
            }
        }
    }
    eprintln!("corpus-wild launch scripts: {supported} run a supported program, {planned} get a plan");
    assert!(missing.is_empty(), "no plan for:\n{}", missing.join("\n"));
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
    // The DeepSpeed file read by content: both offloads, so no optimizer on the device.
    let estimate = analysis.estimate.expect("estimate");
    assert!(estimate.components.iter().all(|c| c.name != "optimizer"), "{:?}", estimate.components);
}
