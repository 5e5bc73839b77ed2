use super::*;

fn parsed(name: &str) -> (&'static str, NamedSize) {
    match parse(name) {
        Ok((family, size)) => (family.label, size),
        Err(miss) => panic!("{name}: {miss:?}"),
    }
}

fn dense(total: u64) -> NamedSize {
    NamedSize { total, active: None, effective: false }
}

#[test]
fn reads_family_and_size() {
    assert_eq!(parsed("unsloth/Qwen3.5-2B"), ("Qwen3.5", dense(2_000_000_000)));
    assert_eq!(parsed("Qwen/Qwen3.5-0.8B-Instruct"), ("Qwen3.5", dense(800_000_000)));
    assert_eq!(parsed("unsloth/LFM2.5-1.2B-Instruct"), ("LFM2", dense(1_200_000_000)));
    assert_eq!(parsed("unsloth/gemma-3-270m-it"), ("Gemma-3", dense(270_000_000)));
    assert_eq!(parsed("unsloth/gemma-4-31B-it"), ("Gemma-4", dense(31_000_000_000)));
    assert_eq!(parsed("unsloth/Ministral-3-3B-Instruct-2512"), ("Ministral", dense(3_000_000_000)));
    assert_eq!(parsed("unsloth/Mistral-Small-22B-Instruct-2409-bnb-4bit").0, "Mistral-Small");
    assert_eq!(parsed("meta-llama/Meta-Llama-3.1-8B-Instruct").0, "Llama-3");
    assert_eq!(parsed("unsloth/Llama-2-13b-chat-GGUF").0, "Llama-2");
    assert_eq!(parsed("allenai/OLMo-2-1124-7B"), ("OLMo", dense(7_000_000_000)));
    assert_eq!(parsed("ibm-granite/granite-3.3-8b-instruct").0, "Granite");
    assert_eq!(parsed("HuggingFaceTB/SmolLM2-360M-Instruct").0, "SmolLM");
    assert_eq!(parsed("microsoft/Phi-4-mini-14B").0, "Phi-4");
    assert_eq!(parsed("nvidia/Llama-3.1-Nemotron-Nano-8B-v1").0, "Nemotron");
    assert_eq!(parsed("zai-org/GLM-4-9B-0414").0, "GLM");
    // A fine-tune named after its base, just before the size.
    assert_eq!(parsed("Skywork/Skywork-Reward-V2-Qwen3-8B"), ("Qwen3", dense(8_000_000_000)));
    assert_eq!(parsed("neuralmagic/Sparse-Llama-3.1-8B-2of4").0, "Llama-3");
    assert_eq!(parsed("NousResearch/Hermes-3-Llama-3.1-70B").0, "Llama-3");
}

#[test]
fn reads_effective_and_moe_sizes() {
    let (family, size) = parsed("unsloth/gemma-3n-E4B-it");
    assert_eq!((family, size), ("Gemma-3n", NamedSize { total: 4_000_000_000, active: None, effective: true }));
    assert!(parsed("unsloth/gemma-4-E2B-it-unsloth-bnb-4bit").1.effective);
    let moe = |total: u64, active: u64| NamedSize { total, active: Some(active), effective: false };
    assert_eq!(parsed("unsloth/Nemotron-3-Nano-30B-A3B"), ("Nemotron", moe(30_000_000_000, 3_000_000_000)));
    assert_eq!(parsed("unsloth/gemma-4-26B-A4B-it"), ("Gemma-4", moe(26_000_000_000, 4_000_000_000)));
    assert_eq!(parsed("baidu/ERNIE-4.5-21B-A3B-PT"), ("ERNIE-4.5", moe(21_000_000_000, 3_000_000_000)));
    assert_eq!(parsed("imdatta0/tiny_qwen3_moe_2.8B_0.7B"), ("Qwen3", moe(2_800_000_000, 700_000_000)));
    // Without a `moe` token a second size is not an active count.
    assert_eq!(parsed("org/qwen3-2.8B-0.7B").1.active, None);
}

#[test]
fn names_without_a_size_or_a_known_family_stay_unknown() {
    for name in ["bert-base-uncased", "my-model", "unsloth/GLM-4.7-Flash", "unsloth/Magistral-Small-2509", "gpt2"] {
        assert_eq!(parse(name).err(), Some(NameMiss::NoSize), "{name}");
    }
    for name in ["my-model-7b", "org/bert-large-340m", "unsloth/DeepSeek-OCR-2-3B", "falcon-mamba-7b"] {
        assert_eq!(parse(name).err(), Some(NameMiss::UnknownFamily), "{name}");
    }
    // A date or a context length is no size.
    assert!(parse("mistralai/Mistral-Small-Instruct-2409").is_err());
    assert!(parse("microsoft/Phi-3-mini-4k-instruct").is_err());
    assert!(size_from_name("my-model").is_err());
}

fn within(actual: u64, named: u64, tolerance: f64) -> bool {
    ((actual as f64 / named as f64) - 1.0).abs() <= tolerance
}

#[test]
fn sized_models_have_the_named_parameter_count() {
    for name in [
        "unsloth/Qwen3.6-27B",
        "Qwen/Qwen3.5-3B",
        "LiquidAI/LFM2.5-3B-Instruct",
        "unsloth/gemma-4-12b-it",
        "ibm-granite/granite-3.3-8b-instruct",
        "HuggingFaceTB/SmolLM2-600M",
        "meta-llama/Llama-3.2-11B",
        "Qwen/Qwen3-VL-8B-Instruct",
    ] {
        assert!(!in_catalog(name), "{name} is in the catalog: pick another example");
        let (_, size) = parsed(name);
        let arch = size_from_name(name).unwrap();
        assert!(arch.sized_from_name);
        assert_eq!(arch.parameters, arch.parameter_count());
        assert!(within(arch.parameters, size.total, 0.10), "{name}: {} parameters", arch.parameters);
        assert!(arch.n_head.is_multiple_of(arch.n_query_groups), "{name}: {arch:?}");
        let pattern = arch.sliding_window_layers.as_ref().map_or(arch.n_layer, |p| p.len() as u64);
        assert_eq!(pattern, arch.n_layer, "{name}");
    }
}

#[test]
fn sized_mixtures_of_experts_have_the_named_total_and_active_counts() {
    for (name, total, active) in [
        ("unsloth/Nemotron-3-Nano-30B-A3B", 30e9, 3e9),
        ("unsloth/gemma-4-26B-A4B-it", 26e9, 4e9),
        ("baidu/ERNIE-4.5-21B-A3B-PT", 21e9, 3e9),
        ("Qwen/Qwen3-80B-A3B", 80e9, 3e9),
        ("imdatta0/tiny_qwen3_moe_2.8B_0.7B", 2.8e9, 0.7e9),
    ] {
        let arch = size_from_name(name).unwrap();
        assert_eq!(arch.mlp, MlpKind::Moe, "{name}");
        assert!(within(arch.parameter_count(), total as u64, 0.10), "{name}: {} total", arch.parameter_count());
        assert!(
            within(arch.active_parameter_count(), active as u64, 0.10),
            "{name}: {} active",
            arch.active_parameter_count()
        );
    }
}

#[test]
fn provenance_names_the_family_and_the_member() {
    let arch = size_from_name("unsloth/gemma-4-12b-it").unwrap();
    assert_eq!(arch.name, "unsloth/gemma-4-12b-it");
    assert!(
        arch.source.starts_with("sized from its name (family Gemma-4, nearest catalog member Gemma-3-12b-it, of the closest related family gemma-3"),
        "{}",
        arch.source
    );
    let own = size_from_name("Qwen/Qwen3-2B").unwrap();
    assert!(
        own.source.starts_with("sized from its name (family Qwen3, nearest catalog member Qwen3-1.7B;"),
        "{}",
        own.source
    );
}

#[test]
fn a_hybrid_family_keeps_its_mixer_layers_and_vocabulary() {
    // Qwen3.5's own members are Gated DeltaNet hybrids: a size between them scales the nearest
    // one and keeps three linear-attention layers in four, their heads and the 248,320 words.
    let arch = size_from_name("Qwen/Qwen3.5-14B").unwrap();
    let member = in_catalog_arch("Qwen/Qwen3.5-9B");
    assert!(arch.source.contains("nearest catalog member Qwen3.5-9B;"), "{}", arch.source);
    assert_eq!(arch.vocab_size, 248_320);
    assert_eq!(arch.mamba, member.mamba);
    assert_eq!(arch.n_mamba_layers * 4, arch.n_layer * 3, "{} of {}", arch.n_mamba_layers, arch.n_layer);
    assert!(within(arch.parameter_count(), 14_000_000_000, 0.05), "{}", arch.parameter_count());
    // A related family's hybrids are never drawn on: Qwen3 names stay with Qwen3's own members.
    assert_eq!(size_from_name("Qwen/Qwen3-2B").unwrap().n_mamba_layers, 0);
}

#[test]
fn a_dated_release_takes_the_catalog_release_of_the_same_name() {
    let arch = another_release("unsloth/Magistral-Small-2509-unsloth-bnb-4bit").expect("another release");
    assert!(arch.sized_from_name && arch.source.contains("another release of Magistral-Small-2506"), "{}", arch.source);
    assert_eq!(arch.parameter_count(), in_catalog_arch("Magistral-Small-2506").parameter_count());
    // Another name before the date, or more than packaging after it, is not the same model.
    assert!(another_release("unsloth/Mistral-Tiny-Instruct-2409").is_none());
    assert!(another_release("mistralai/Magistral-Small-2509-Vision-Extra").is_none());
    assert!(another_release("Magistral-Small").is_none(), "no date");
    assert!(another_release("org/model-2513").is_none(), "not a month");
}

fn in_catalog_arch(name: &str) -> Architecture {
    super::super::models::resolve_model(name).expect("in the catalog").clone()
}
