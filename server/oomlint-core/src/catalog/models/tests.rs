use super::*;

/// Every catalog entry.
fn all_models() -> &'static [Architecture] {
    &index().models
}

fn model(name: &str) -> &'static Architecture {
    match resolve_model(name) {
        Ok(arch) => arch,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn catalog_has_the_promised_breadth() {
    let models = all_models();
    assert!(models.len() >= 150, "{} architectures", models.len());
    for family in ["llama-3.2", "qwen3-moe", "gemma-3", "granite-4.0-h", "gpt-oss", "smollm2", "deepseek-r1-distill"] {
        assert!(models.iter().any(|m| m.family == family), "no {family} entry");
    }
}

/// `(name, reference)` of every catalog row, the reference being the published total the
/// row records (`None` where the file leaves `parameters` out and the shapes give it).
fn references() -> Vec<(String, Option<u64>)> {
    let rows: Vec<serde_json::Value> = serde_json::from_str(CATALOG_JSON).unwrap_or_default();
    rows.iter().map(|row| (row["name"].as_str().unwrap_or_default().to_string(), row["parameters"].as_u64())).collect()
}

#[test]
// Test-only output: the worst error and the rows without a reference, for the reviewer.
#[allow(clippy::disallowed_macros)]
fn shapes_reproduce_the_reference_parameter_count_within_one_percent() {
    let mut worst = (0.0f64, String::new());
    let mut unreferenced = Vec::new();
    for (name, reference) in references() {
        let computed = model(&name).parameter_count() as f64;
        let Some(reference) = reference else {
            unreferenced.push(name);
            continue;
        };
        let error = (computed - reference as f64).abs() / reference as f64;
        assert!(error < 0.01, "{name}: shapes give {computed}, the reference is {reference}");
        if error >= worst.0 {
            worst = (error, name);
        }
    }
    eprintln!("worst |error| {:.4} % ({})", worst.0 * 100.0, worst.1);
    eprintln!("{} rows without a reference count (shapes only): {}", unreferenced.len(), unreferenced.join(", "));
    assert_eq!(references().len(), all_models().len());
}

#[test]
fn published_counts_are_met_exactly_where_the_source_is_a_checkpoint() {
    // Totals printed by training runs (ground-truth rows 196 and 220) and HF safetensors totals.
    let anchors = [
        ("granite-4.0-h-micro", 3_191_396_096),
        ("Gemma-3-270m", 268_098_176),
        ("meta-llama/Llama-2-7b-hf", 6_738_415_616),
        ("meta-llama/Meta-Llama-3-8B", 8_030_261_248),
        ("Qwen/Qwen2.5-0.5B", 494_032_768),
        ("microsoft/phi-2", 2_779_683_840),
        ("mistralai/Mixtral-8x7B-v0.1", 46_702_792_704),
        ("EleutherAI/pythia-70m", 70_426_624),
        // keras-hub preset parameter counts.
        // The Hub checkpoint holds the vision tower: the vision+text preset.
        ("google/gemma-3-4b-it", 4_299_915_632),
        ("Qwen/Qwen3-30B-A3B", 30_532_122_624),
        ("mistralai/Magistral-Small-2506", 23_572_403_200),
        ("microsoft/Phi-3-mini-128k-instruct", 3_821_079_552),
    ];
    for (name, expected) in anchors {
        assert_eq!(model(name).parameter_count(), expected, "{name}");
    }
}

#[test]
fn active_parameters_match_the_published_moe_figures() {
    // Parameters one token passes through: the routed experts count `n_expert_per_token`
    // times instead of `n_expert` times (the estimator's activations read the same field).
    let active = |m: &Architecture| m.count(m.n_expert_per_token);
    let within = |got: u64, want: f64, tol: f64| ((got as f64 - want).abs() / want) < tol;
    // Mistral: 12.9B active; Qwen3 model cards: 3.3B and 22B activated.
    assert!(within(active(model("Mixtral-8x7B-v0.1")), 12.9e9, 0.01));
    assert!(within(active(model("Qwen3-30B-A3B")), 3.3e9, 0.02));
    assert!(within(active(model("Qwen3-235B-A22B")), 22.0e9, 0.02));
    // OpenAI counts 3.61B active for gpt-oss-20b without the input embedding.
    let oss = model("openai/gpt-oss-20b");
    let embedding = oss.padded_vocab_size * oss.n_embd;
    assert!(within(active(oss) - embedding, 3.61e9, 0.01));
    let dense = model("Qwen3-8B");
    assert_eq!(active(dense), dense.parameter_count());
}

#[test]
fn sliding_window_layers_follow_the_pattern() {
    assert_eq!(model("google/gemma-3-1b-it").sliding_window_layer_count(), 22);
    assert_eq!(model("gemma-2-9b").sliding_window_layer_count(), 21);
    assert_eq!(model("Mistral-7B-v0.1").sliding_window_layer_count(), 32);
    assert_eq!(model("gpt-oss-20b").sliding_window_layer_count(), 12);
    assert_eq!(model("Llama-3.1-8B").sliding_window_layer_count(), 0);
    for m in all_models() {
        if let Some(pattern) = &m.sliding_window_layers {
            assert_eq!(pattern.len() as u64, m.n_layer, "{}", m.name);
            assert!(pattern.bytes().all(|b| b == b'0' || b == b'1'), "{}", m.name);
        }
    }
}

#[test]
fn entries_are_internally_consistent() {
    for m in all_models() {
        assert!(m.n_head % m.n_query_groups.max(1) == 0, "{}: groups", m.name);
        assert!(m.padded_vocab_size >= m.vocab_size, "{}: vocab", m.name);
        assert_eq!(m.mlp == MlpKind::Moe, m.n_expert > 0, "{}: experts", m.name);
        assert_eq!(m.n_mamba_layers > 0, m.mamba.is_some(), "{}: mamba", m.name);
        assert!(!m.source.is_empty() && m.source.contains("parameters:"), "{}: source", m.name);
    }
}

#[test]
fn no_spelling_names_two_entries() {
    let mut owner: HashMap<String, &str> = HashMap::default();
    for m in all_models() {
        for key in model_keys(m) {
            let lower = key.to_lowercase();
            let bare = lower.rsplit('/').next().unwrap_or_default().to_string();
            for k in [lower, bare] {
                let previous = owner.insert(k.clone(), &m.name);
                assert!(previous.is_none_or(|p| p == m.name), "`{k}` names {previous:?} and {}", m.name);
            }
        }
    }
}

#[test]
fn resolution_table() {
    let table = [
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B"),
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B"),
        ("LLAMA-3.1-8B", "Llama-3.1-8B"),
        ("checkpoints/meta-llama/Llama-3.2-1B", "Llama-3.2-1B"),
        ("https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/", "Qwen2.5-7B"),
        ("unsloth/Llama-3.2-1B-Instruct-bnb-4bit", "Llama-3.2-1B"),
        ("unsloth/Meta-Llama-3.1-8B-Instruct-unsloth-bnb-4bit", "Llama-3.1-8B"),
        ("unsloth/llama-3-8b-bnb-4bit", "Llama-3-8B"),
        ("unsloth/mistral-7b-v0.3-bnb-4bit", "Mistral-7B-v0.3"),
        ("unsloth/mistral-7b-instruct-v0.3-bnb-4bit", "Mistral-7B-v0.3"),
        ("unsloth/tinyllama-bnb-4bit", "tiny-llama-1.1b"),
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tiny-llama-1.1b"),
        ("unsloth/gemma-3-1b-it", "Gemma-3-1b-it"),
        ("google/gemma-3-270m", "Gemma-3-270m"),
        ("unsloth/gemma-2-9b-it-bnb-4bit", "Gemma-2-9b"),
        ("unsloth/Qwen3-30B-A3B", "Qwen3-30B-A3B"),
        ("Qwen/Qwen3-4B-Base", "Qwen3-4B"),
        ("Qwen/Qwen2.5-Coder-14B-Instruct", "Qwen2.5-Coder-14B"),
        ("unsloth/Phi-3.5-mini-instruct", "Phi-3.5-mini-instruct"),
        ("microsoft/Phi-4-mini-instruct", "Phi-4-mini-instruct"),
        ("phi-1.5", "phi-1_5"),
        ("HuggingFaceTB/SmolLM2-360M-Instruct", "SmolLM2-360M"),
        ("ibm-granite/granite-4.0-h-micro", "granite-4.0-h-micro"),
        ("unsloth/granite-4.0-h-tiny", "granite-4.0-h-tiny"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "DeepSeek-R1-Distill-Qwen-1.5B"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "R1-Distill-Llama-8B"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),
        ("unsloth/gpt-oss-120b-BF16", "gpt-oss-120b"),
        ("tiiuae/falcon-7b-instruct", "falcon-7b"),
        ("EleutherAI/pythia-1b-deduped", "pythia-1b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "Mixtral-8x7B-v0.1"),
        ("NousResearch/Llama-2-7b-hf", "Llama-2-7b-hf"),
        ("someone/Llama-2-13b-chat-hf", "Llama-2-13b-hf"),
        ("  stabilityai/stablelm-zephyr-3b  ", "stablelm-3b-4e1t"),
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen2.5-72B"),
        ("unsloth/Magistral-Small-2506-unsloth-bnb-4bit", "Magistral-Small-2506"),
        ("unsloth/functiongemma-270m-it", "Gemma-3-270m"),
        ("unsloth/Phi-3-medium-4k-instruct", "Phi-3-medium-4k-instruct"),
        ("unsloth/Mistral-Nemo-Base-2407", "Mistral-Nemo-Base-2407"),
        ("unsloth/Qwen2-7B", "Qwen2-7B"),
        ("bigscience/bloomz-7b1", "bloom-7b1"),
        ("axolotl-ai-co/gpt-oss-120b-dequantized", "gpt-oss-120b"),
        ("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16", "Llama-4-Scout-17B-16E"),
    ];
    for (query, expected) in table {
        assert_eq!(model(query).name, expected, "{query}");
    }
}

#[test]
fn never_resolves_across_sizes() {
    for query in ["Llama-3.1-9B", "Qwen2.5-8B", "Qwen3-30B", "gemma-3-2b-it", "pythia-100m", "gpt-oss", "a100"] {
        assert!(resolve_model(query).is_err(), "{query} resolved");
    }
}

#[test]
fn unknown_models_carry_similar_names() {
    let err = resolve_model("meta-llama/Llama-3.1-8C-Instruct").err();
    let suggestions = err.map(|e| e.suggestions()).unwrap_or_default();
    assert!(!suggestions.is_empty() && suggestions.len() <= 3, "{suggestions:?}");
    assert!(suggestions.iter().any(|s| model(s).name == "Llama-3.1-8B"), "{suggestions:?}");

    let err = resolve_model("qwen2.5-8b").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("unknown model `qwen2.5-8b`; did you mean `"), "{err}");

    let nothing_alike = resolve_model("zzzz").err().map(|e| e.suggestions()).unwrap_or_default();
    assert!(nothing_alike.is_empty(), "{nothing_alike:?}");
}

/// Every spelling scored with `strsim`, most similar first (a stable sort), one per model.
fn suggestions_by_brute_force(name: &str) -> Vec<String> {
    let query = bare_lower(name);
    let spellings = &index().spellings;
    let mut scored: Vec<(f64, &Spelling)> = spellings
        .iter()
        .map(|s| (strsim::jaro_winkler(&query, &bare_lower(&s.text)), s))
        .filter(|(score, _)| *score >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    for (_, spelling) in scored {
        if !seen.contains(&spelling.model) && out.len() < 3 {
            seen.push(spelling.model);
            out.push(spelling.text.clone());
        }
    }
    out
}

#[test]
fn suggestions_equal_scoring_every_spelling() {
    // Corpus names the catalog lacks, and every catalog spelling with one character changed,
    // dropped or doubled (close calls between sizes and versions).
    let mut queries: Vec<String> = [
        "google/gemma-4-12B-it",
        "Qwen/Qwen3.6-27B",
        "zai-org/GLM-4.7-Flash",
        "openlm-research/open_llama_3b_v2",
        "mistralai/Voxtral-Mini-3B-2507",
        "axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16",
        "a",
        "",
        "größe-7b",
    ]
    .map(str::to_string)
    .to_vec();
    for spelling in &index().spellings {
        let chars: Vec<char> = spelling.text.chars().collect();
        let at = chars.len() / 2;
        let edit = |f: &dyn Fn(&mut Vec<char>)| {
            let mut c = chars.clone();
            f(&mut c);
            c.into_iter().collect::<String>()
        };
        queries.push(edit(&|c| c.truncate(at)));
        queries.push(edit(&|c| {
            if at < c.len() {
                c[at] = 'x'
            }
        }));
        queries.push(edit(&|c| {
            if at < c.len() {
                c.insert(at, c[at])
            }
        }));
    }
    for query in &queries {
        assert_eq!(suggest(query), suggestions_by_brute_force(query), "{query}");
    }
}

#[test]
fn odd_queries_do_not_panic() {
    for query in ["", "/", "//", " ", "a/b/c/d/e", "-bnb-4bit", "-instruct", "ö/ü", "\u{0}"] {
        let _ = resolve_model(query);
    }
}

#[test]
// Test-only I/O: reads ../shared/ground-truth and says so on stderr when it is absent.
#[allow(clippy::disallowed_methods, clippy::disallowed_macros)]
fn ground_truth_architectures_resolve_to_the_same_facts() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/ground-truth/architectures.json");
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("notice: {path} absent, skipping");
        return;
    };
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(entries.len(), 51);
    for entry in entries {
        let hf_id = entry["hf_id"].as_str().unwrap_or_default();
        let hf_id = hf_id.split_whitespace().next().unwrap_or_default();
        let arch = model(hf_id);
        for (key, ours) in [
            ("n_layer", arch.n_layer),
            ("n_embd", arch.n_embd),
            ("n_head", arch.n_head),
            ("n_query_groups", arch.n_query_groups),
            ("head_size", arch.head_size),
            ("intermediate_size", arch.intermediate_size),
            ("vocab_size", arch.vocab_size),
            ("padded_vocab_size", arch.padded_vocab_size),
            ("block_size", arch.block_size),
            ("n_mamba_layers", arch.n_mamba_layers),
        ] {
            if let Some(theirs) = entry[key].as_u64() {
                assert_eq!(ours, theirs, "{hf_id}: {key}");
            }
        }
        if let Some(tied) = entry["hf_tie_word_embeddings"].as_bool() {
            assert_eq!(arch.tie_word_embeddings, tied, "{hf_id}: tie");
        }
        if let Some(pattern) = entry["sliding_window_indices"].as_str() {
            let ours = arch.sliding_window_layers.clone().unwrap_or_else(|| "1".repeat(arch.n_layer as usize));
            assert_eq!(ours, pattern, "{hf_id}: sliding window layers");
        }
    }
}

/// `|got − want| / want < tol`.
fn within(got: u64, want: f64, tol: f64) -> bool {
    ((got as f64 - want).abs() / want) < tol
}

#[test]
fn latent_attention_and_dense_layers_reproduce_deepseek() {
    // DeepSeek-V2 paper: V2-Lite 15.7B total, 2.4B activated; V2 236B and 21B. DeepSeek-V3
    // model card: 671B main model, 37B activated.
    for (name, total, active) in
        [("DeepSeek-V2-Lite", 15.7e9, 2.4e9), ("DeepSeek-V2", 236e9, 21e9), ("DeepSeek-V3", 671e9, 37e9)]
    {
        let m = model(name);
        assert!(within(m.parameter_count(), total, 0.01), "{name}: {}", m.parameter_count());
        // DeepSeek counts activated parameters without the input embedding.
        let active_without_embedding = m.active_parameter_count() - m.padded_vocab_size * m.n_embd;
        assert!(within(active_without_embedding, active, 0.025), "{name}: {active_without_embedding}");
    }
    // Without the latent projections the same heads would take full-rank q/k/v (3 × 16 × 192
    // columns and a 16 × 128-row output): the latent layout is what brings V2-Lite to 15.7B.
    let lite = model("DeepSeek-V2-Lite");
    let mut plain = lite.clone();
    plain.mla = None;
    assert!(plain.parameter_count() > lite.parameter_count());
    // The leading dense layer is a 10944-wide SwiGLU, not 64 experts.
    let mut all_moe = lite.clone();
    all_moe.n_dense_layers = 0;
    assert!(all_moe.parameter_count() > lite.parameter_count());
}

#[test]
fn interleaved_dense_layers_and_shared_experts_reproduce_llama_4() {
    // Llama 4 model card: Scout 109B total, Maverick 400B total, both 17B active.
    for (name, total) in [("Llama-4-Scout-17B-16E", 109e9), ("Llama-4-Maverick-17B-128E", 400e9)] {
        let m = model(name);
        assert!(within(m.parameter_count(), total, 0.01), "{name}: {}", m.parameter_count());
        assert!(within(m.active_parameter_count(), 17e9, 0.03), "{name}: {}", m.active_parameter_count());
    }
}

#[test]
fn gated_delta_net_layers_reproduce_qwen3_next() {
    // Qwen3-Next-80B-A3B model card: 80B total, 3B activated; Qwen3.5-397B-A17B: 397B and 17B.
    let next = model("Qwen/Qwen3-Next-80B-A3B-Instruct");
    assert_eq!((next.n_mamba_layers, next.attention_layer_count()), (36, 12));
    assert!(within(next.parameter_count(), 80e9, 0.01), "{}", next.parameter_count());
    // "3B activated" is rounded; the decoder without embedding and head is 3.25B.
    let embedding = next.padded_vocab_size * next.n_embd;
    assert!(within(next.active_parameter_count() - 2 * embedding, 3e9, 0.1), "{}", next.active_parameter_count());
    let big = model("Qwen/Qwen3.5-397B-A17B");
    assert!(within(big.parameter_count(), 397e9, 0.01), "{}", big.parameter_count());
    assert!(within(big.active_parameter_count(), 17e9, 0.05), "{}", big.active_parameter_count());
    // One Gated DeltaNet layer of Qwen3-Next: in_proj_qkvz 2048 → 2·16·128 + 2·32·128,
    // in_proj_ba 2048 → 2·32, conv over 2·16·128 + 32·128 channels × 4, dt_bias and A_log,
    // a 128-wide norm, out_proj 32·128 → 2048.
    let mixer = next.mamba.map(|m| m.parameters(next.n_embd));
    let expected = 2048 * (4096 + 8192) + 2048 * 64 + 8192 * 4 + 2 * 32 + 128 + 4096 * 2048;
    assert_eq!(mixer, Some(expected));
}

#[test]
fn shared_expert_gate_and_towers_are_counted() {
    // Qwen1.5-MoE-A2.7B model card: 14.3B total.
    let moe = model("Qwen1.5-MoE-A2.7B");
    assert!(within(moe.parameter_count(), 14.3e9, 0.01), "{}", moe.parameter_count());
    let mut ungated = moe.clone();
    ungated.shared_expert_gate = false;
    assert_eq!(moe.parameter_count() - ungated.parameter_count(), moe.n_layer * moe.n_embd);
    // A recorded vision tower adds to the total and to no per-token count of the decoder.
    let vl = model("Qwen/Qwen3-VL-2B-Instruct");
    let mut text = vl.clone();
    text.tower_parameters = 0;
    assert_eq!(vl.parameter_count() - text.parameter_count(), vl.tower_parameters);
    assert_eq!(text.parameter_count(), model("Qwen3-1.7B").parameter_count());
}

#[test]
fn moss_vl_cross_attention_layers_count_as_attention_layers() {
    // MossVLCrossAttentionDecoderLayer holds q/k/v/o and q/k norms of a self-attention layer's
    // shapes (k/v read the 4096-wide vision features), an MLP and two norms: 48 equal layers.
    let m = model("OpenMOSS-Team/MOSS-VL-Instruct-0708");
    let attention = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 2 * 128;
    let layer = attention + 3 * 4096 * 12288 + 2 * 4096;
    let text = 2 * 151_936 * 4096 + 48 * layer + 4096;
    assert_eq!(m.parameter_count() - m.tower_parameters, text);
    // The MOSS-VL realtime demo measured about 21.3 GiB resident after loading the bf16
    // checkpoint (weights and load-time tensors): the weights alone sit just under it.
    let gib = (2 * m.parameter_count()) as f64 / f64::from(1u32 << 30);
    assert!((20.5..21.3).contains(&gib), "{gib}");
}

#[test]
fn short_convolution_layers_reproduce_lfm2() {
    // The LFM2 model card's count for LFM2-1.2B, to the parameter.
    let m = model("LiquidAI/LFM2-1.2B");
    assert_eq!(m.parameter_count(), 1_170_340_608);
    // One short-convolution layer: in_proj 2048 → 3·2048, a 3-tap depthwise kernel, out_proj.
    assert_eq!(m.mamba.map(|d| d.parameters(m.n_embd)), Some(2048 * 6144 + 2048 * 3 + 2048 * 2048));
}

/// LoRA parameters at rank `r` on every q/k/v/o and gate/up/down projection of the text decoder,
/// layer by layer from the catalog's shapes (what PEFT adds for those target modules).
fn lora_on_attention_and_mlp(m: &Architecture, r: u64) -> u64 {
    let pattern = m.sliding_window_layers.clone().unwrap_or_default();
    let wide_from = m.n_layer - m.double_wide_mlp_layer_count();
    (0..m.n_layer)
        .map(|i| {
            let global = pattern.as_bytes().get(i as usize) == Some(&b'0');
            let (head, groups, v) = m.attention_shape(global);
            let (h, q, kv) = (m.n_embd, m.n_head * head, groups * head);
            let width = if i >= wide_from { 2 * m.intermediate_size } else { m.intermediate_size };
            let kv_modules = if v { 2 } else { 1 };
            r * (2 * (h + q) + kv_modules * (h + kv) + 3 * (h + width))
        })
        .sum()
}

#[test]
fn gemma_4_and_3n_shapes_reproduce_the_lora_counts_unsloth_prints() {
    // Trainable parameters printed by Unsloth's Gemma notebooks (ground-truth rows 204, 201,
    // 205, 238 and 213): r = 8 on the language model's attention and MLP projections. The
    // KV-shared layers carry their own k_proj and v_proj in the checkpoint, so they count.
    for (name, trainable) in [
        ("gemma-4-E2B-it", 12_668_928),
        ("gemma-4-E4B-it", 18_350_080),
        ("gemma-4-31B-it", 61_214_720),
        ("gemma-4-26B-A4B-it", 9_292_800),
        ("gemma-3n-E4B-it", 19_210_240),
    ] {
        assert_eq!(lora_on_attention_and_mlp(model(name), 8), trainable, "{name}");
    }
}

#[test]
fn per_layer_embeddings_and_altup_are_counted() {
    let e2b = model("google/gemma-4-E2B-it");
    // embed_tokens_per_layer: 262144 rows of 35 layers × 256.
    assert_eq!(e2b.per_layer_embedding_parameters(), 262_144 * 35 * 256);
    let mut plain = e2b.clone();
    plain.per_layer_input = None;
    plain.double_wide_mlp = false;
    plain.global_attention = None;
    // Per-layer inputs add the table, the 1536 → 35·256 projection, each layer's gate,
    // projection and norm, and the projection norm.
    let per_layer = 262_144 * 35 * 256 + 1536 * 35 * 256 + 35 * (2 * 1536 * 256 + 1536) + 256;
    // The 20 KV-shared layers' MLP is 6144 wider; the 7 full-attention layers have 512-wide heads.
    let wide = 20 * 3 * 1536 * 6144;
    let global = 7 * (1536 * (8 * 256 + 2 * 256) + 8 * 256 * 1536 + 2 * 256);
    assert_eq!(e2b.parameter_count() - plain.parameter_count(), per_layer + wide + global);
    // Gemma 3n: two 2048×2048 projections per extra AltUp stream and, per layer, the router
    // (2048 → 4), the 4×4 and 4→16 coefficient maps, a rank-64 LAuReL pair and three vectors.
    let n = model("google/gemma-3n-E2B-it");
    let mut without = n.clone();
    without.altup = None;
    let layer = 2048 * 4 + 16 + 64 + 2 * 2048 * 64 + 3 * 2048;
    assert_eq!(n.parameter_count() - without.parameter_count(), 6 * 2048 * 2048 + 30 * layer);
}

#[test]
fn nemotron_h_blocks_hold_one_mixer_or_one_mlp_each() {
    // Nemotron 3 Nano 30B-A3B: 23 Mamba-2, 6 attention and 23 expert blocks; the model card
    // gives 31.6B in all and 3.6B active with the embeddings.
    let nano = resolve_model("unsloth/Nemotron-3-Nano-30B-A3B").expect("catalog row");
    assert_eq!(
        (nano.n_layer, nano.n_mamba_layers, nano.attention_layer_count(), nano.mlp_layer_count()),
        (52, 23, 6, 23)
    );
    let total = nano.parameter_count() as f64;
    assert!((total / 31.6e9 - 1.0).abs() < 0.01, "{total}");
    let active = nano.active_parameter_count() as f64;
    assert!((active / 3.6e9 - 1.0).abs() < 0.02, "{active}");
    // Every layer an attention-plus-MLP layer would count 29 more MLPs and 23 more attentions.
    let mut layered = nano.clone();
    layered.layer_pattern = None;
    assert!(layered.parameter_count() > nano.parameter_count() * 2);
    // Its experts are up/down MLPs: a gated expert would add a third matrix.
    let mut gated = nano.clone();
    gated.ungated_experts = false;
    let experts = 23 * (128 * 2688 * 1856 + 2688 * 3712);
    assert_eq!(gated.parameter_count() - nano.parameter_count(), experts);
}
