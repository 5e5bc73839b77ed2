use super::*;
use crate::catalog::local::safetensors::MAX_HEADER_BYTES;
use crate::catalog::{resolve_model, MlpKind};
use serde_json::{json, Value};
use std::fs;

fn model_dir(files: &[(&str, Value)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, value) in files {
        fs::write(dir.path().join(name), value.to_string()).expect("write");
    }
    dir
}

/// A safetensors file: length prefix, header, then `data_bytes` zero bytes.
fn write_safetensors(path: &Path, header: &Value, data_bytes: usize) {
    let header = header.to_string().into_bytes();
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    bytes.resize(bytes.len() + data_bytes, 0);
    fs::write(path, bytes).expect("write safetensors");
}

fn read(dir: &tempfile::TempDir) -> Architecture {
    match from_local_dir(dir.path()) {
        Ok(arch) => arch,
        Err(e) => panic!("{e}"),
    }
}

/// The local reading reproduces the catalog entry's shapes and parameter count.
fn assert_matches_catalog(local: &Architecture, catalog_name: &str) {
    let known = resolve_model(catalog_name).expect("catalog entry");
    let shape = |a: &Architecture| {
        (a.n_layer, a.n_embd, a.n_head, a.n_query_groups, a.head_size, a.intermediate_size, a.n_expert, a.mlp)
    };
    assert_eq!(shape(local), shape(known), "{catalog_name}: shapes");
    assert_eq!(local.tie_word_embeddings, known.tie_word_embeddings, "{catalog_name}: tie");
    assert_eq!(local.sliding_window_layer_count(), known.sliding_window_layer_count(), "{catalog_name}: sliding");
    assert_eq!(local.parameter_count(), known.parameter_count(), "{catalog_name}: parameters");
    assert_eq!(local.attention_logit_softcapping, known.attention_logit_softcapping, "{catalog_name}: softcap");
    assert_eq!(local.final_logit_softcapping, known.final_logit_softcapping, "{catalog_name}: final softcap");
    assert_eq!(local.hf_projections, known.hf_projections, "{catalog_name}: HF module layout");
}

#[test]
fn llama_config_reads_like_the_catalog() {
    let dir = model_dir(&[(
        "config.json",
        json!({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
               "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256,
               "max_position_embeddings": 131072, "tie_word_embeddings": true, "attention_bias": false,
               "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16"}),
    )]);
    let arch = read(&dir);
    assert_matches_catalog(&arch, "Llama-3.2-1B");
    assert_eq!(arch.parameters, 1_235_814_400);
    assert_eq!(arch.block_size, 131_072);
    assert!(arch.source.contains("config.json (model_type llama)"), "{}", arch.source);
}

#[test]
fn families_read_like_the_catalog() {
    let cases = [
        (
            "Phi-3-mini-4k-instruct",
            json!({"model_type": "phi3", "hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32,
                   "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 32064,
                   "max_position_embeddings": 4096, "sliding_window": 2047, "tie_word_embeddings": false}),
        ),
        (
            "Qwen3-0.6B",
            json!({"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
                   "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936,
                   "tie_word_embeddings": true, "use_sliding_window": false, "sliding_window": 32768}),
        ),
        (
            "Qwen2.5-7B",
            json!({"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
                   "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
                   "tie_word_embeddings": false, "use_sliding_window": false, "sliding_window": 131072}),
        ),
        (
            "Gemma-3-1b-it",
            json!({"model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4,
                   "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
                   "sliding_window": 512, "sliding_window_pattern": 6}),
        ),
        (
            "Gemma-2-2b",
            json!({"model_type": "gemma2", "hidden_size": 2304, "num_hidden_layers": 26, "num_attention_heads": 8,
                   "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 9216, "vocab_size": 256000,
                   "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0}),
        ),
        (
            "Mixtral-8x7B-v0.1",
            json!({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                   "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
                   "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": null}),
        ),
        (
            "Qwen3-30B-A3B",
            json!({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
                   "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
                   "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936, "tie_word_embeddings": false}),
        ),
        (
            "phi-2",
            json!({"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
                   "intermediate_size": 10240, "vocab_size": 51200, "partial_rotary_factor": 0.4,
                   "tie_word_embeddings": false}),
        ),
        (
            "pythia-70m",
            json!({"model_type": "gpt_neox", "hidden_size": 512, "num_hidden_layers": 6, "num_attention_heads": 8,
                   "intermediate_size": 2048, "vocab_size": 50304, "use_parallel_residual": true}),
        ),
        (
            // The original RW config: no tie key (transformers defaults to tied), multi-query.
            "falcon-7b",
            json!({"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
                   "vocab_size": 65024, "multi_query": true, "parallel_attn": true, "bias": false}),
        ),
        (
            "falcon-40b",
            json!({"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128,
                   "num_kv_heads": 8, "new_decoder_architecture": true, "vocab_size": 65024, "parallel_attn": true}),
        ),
        (
            "granite-4.0-h-micro",
            json!({"model_type": "granitemoehybrid", "hidden_size": 2048, "num_hidden_layers": 40,
                   "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
                   "shared_intermediate_size": 8192, "num_local_experts": 0, "vocab_size": 100352,
                   "tie_word_embeddings": true, "mamba_d_state": 128, "mamba_n_heads": 64, "mamba_d_head": 64,
                   "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_conv_bias": true,
                   "mamba_proj_bias": false, "layer_types": granite_layers()}),
        ),
        (
            "granite-4.0-h-tiny",
            json!({"model_type": "granitemoehybrid", "hidden_size": 1536, "num_hidden_layers": 40,
                   "num_attention_heads": 12, "num_key_value_heads": 4, "intermediate_size": 512,
                   "shared_intermediate_size": 1024, "num_local_experts": 64, "num_experts_per_tok": 6,
                   "vocab_size": 100352, "tie_word_embeddings": true, "mamba_n_heads": 48, "mamba_d_head": 64,
                   "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2,
                   "layer_types": granite_layers()}),
        ),
        (
            "gpt-oss-20b",
            json!({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
                   "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "num_local_experts": 32,
                   "num_experts_per_tok": 4, "vocab_size": 201088, "tie_word_embeddings": false,
                   "attention_bias": true, "sliding_window": 128,
                   "layer_types": (0..24).map(|i| if i % 2 == 0 { "sliding_attention" } else { "full_attention" })
                       .collect::<Vec<_>>(),
                   "quantization_config": {"quant_method": "mxfp4"}}),
        ),
    ];
    for (catalog_name, config) in cases {
        let dir = model_dir(&[("config.json", config)]);
        assert_matches_catalog(&read(&dir), catalog_name);
    }
}

fn granite_layers() -> Vec<&'static str> {
    (0..40).map(|i| if i % 10 == 5 { "attention" } else { "mamba" }).collect()
}

#[test]
fn granite_hybrid_defaults_follow_transformers() {
    // GraniteMoeHybridConfig: no layer_types = all Mamba, 8 experts (top-2), shared MLP 1024,
    // 128 Mamba heads of width expand·hidden/heads, state 256, untied.
    let dir = model_dir(&[(
        "config.json",
        json!({"model_type": "granitemoehybrid", "hidden_size": 512, "num_hidden_layers": 4,
               "num_attention_heads": 8, "intermediate_size": 256, "vocab_size": 1000}),
    )]);
    let arch = read(&dir);
    assert_eq!(arch.n_mamba_layers, 4);
    assert_eq!((arch.n_expert, arch.n_expert_per_token, arch.expert_intermediate_size()), (8, 2, 256));
    assert_eq!(arch.shared_expert_intermediate_size, Some(1024));
    let mamba = arch.mamba.unwrap_or_default();
    assert_eq!((mamba.n_heads, mamba.head_dim, mamba.d_state), (128, 8, 256));
    assert!(!arch.tie_word_embeddings);
}

#[test]
fn multimodal_gemma3_reads_its_text_config() {
    let dir = model_dir(&[(
        "config.json",
        json!({"model_type": "gemma3", "vision_config": {"hidden_size": 1152},
               "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34,
                               "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                               "intermediate_size": 10240, "vocab_size": 262208, "sliding_window": 1024,
                               "sliding_window_pattern": 6}}),
    )]);
    let arch = read(&dir);
    assert_eq!((arch.n_layer, arch.n_embd, arch.padded_vocab_size), (34, 2560, 262_208));
    assert!(arch.tie_word_embeddings && arch.norm_qk && arch.post_mlp_norm);
    assert_eq!(arch.sliding_window_layer_count(), 29);
}

#[test]
fn quantization_method_is_recorded() {
    let dir = model_dir(&[(
        "config.json",
        json!({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
               "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32768,
               "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true}}),
    )]);
    let arch = read(&dir);
    assert_eq!(arch.checkpoint_quantization.as_deref(), Some("bitsandbytes"));
    assert_eq!(arch.parameters, resolve_model("Mistral-7B-v0.3").map(|a| a.parameters).unwrap_or(0));
}

fn tiny_llama_config(tie: Option<bool>) -> Value {
    let mut config = json!({"model_type": "llama", "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2,
                            "intermediate_size": 8, "vocab_size": 10});
    if let Some(tie) = tie {
        config["tie_word_embeddings"] = json!(tie);
    }
    config
}

#[test]
fn safetensors_headers_give_exact_counts_and_dtype() {
    let dir = model_dir(&[("config.json", tiny_llama_config(None))]);
    let header = json!({
        "__metadata__": {"format": "pt"},
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [10, 4], "data_offsets": [0, 80]},
        "model.layers.0.self_attn.q_proj.weight": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [80, 112]},
        "model.norm.weight": {"dtype": "F32", "shape": [4], "data_offsets": [112, 128]},
        "rotary.scalar": {"dtype": "F32", "shape": [], "data_offsets": [128, 132]}
    });
    write_safetensors(&dir.path().join("model.safetensors"), &header, 132);
    let arch = read(&dir);
    assert_eq!(arch.parameters, 40 + 16 + 4 + 1);
    assert_eq!(arch.checkpoint_dtype.as_deref(), Some("BF16"));
    // No lm_head tensor and no tie key: the head is the embedding.
    assert!(arch.tie_word_embeddings);
    assert!(arch.source.contains("1 safetensors header(s), 4 tensors"), "{}", arch.source);
}

#[test]
fn a_stated_tie_wins_over_the_tensor_list() {
    let dir = model_dir(&[("config.json", tiny_llama_config(Some(false)))]);
    let header = json!({"model.embed_tokens.weight": {"dtype": "F16", "shape": [10, 4], "data_offsets": [0, 80]}});
    write_safetensors(&dir.path().join("model.safetensors"), &header, 80);
    assert!(!read(&dir).tie_word_embeddings);

    let dir = model_dir(&[("config.json", tiny_llama_config(None))]);
    let header = json!({"lm_head.weight": {"dtype": "F16", "shape": [10, 4], "data_offsets": [0, 80]}});
    write_safetensors(&dir.path().join("model.safetensors"), &header, 80);
    assert!(!read(&dir).tie_word_embeddings);
}

#[test]
fn sharded_checkpoints_sum_every_shard_once() {
    let dir = model_dir(&[
        ("config.json", tiny_llama_config(Some(true))),
        (
            "model.safetensors.index.json",
            json!({"metadata": {"total_size": 0},
                   "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
                                  "c": "model-00002-of-00002.safetensors"}}),
        ),
    ]);
    let shard = |n: u64| json!({format!("t{n}"): {"dtype": "BF16", "shape": [n, 3], "data_offsets": [0, 6 * n]}});
    write_safetensors(&dir.path().join("model-00001-of-00002.safetensors"), &shard(5), 30);
    write_safetensors(&dir.path().join("model-00002-of-00002.safetensors"), &shard(7), 42);
    // A stray file not in the index is ignored.
    write_safetensors(&dir.path().join("extra.safetensors"), &shard(100), 600);
    let arch = read(&dir);
    assert_eq!(arch.parameters, 15 + 21);
    assert!(arch.source.contains("2 safetensors header(s)"), "{}", arch.source);
}

#[test]
fn a_partial_download_is_not_counted() {
    let dir = model_dir(&[
        ("config.json", tiny_llama_config(Some(true))),
        (
            "model.safetensors.index.json",
            json!({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}),
        ),
    ]);
    let header = json!({"t": {"dtype": "BF16", "shape": [5, 3], "data_offsets": [0, 30]}});
    write_safetensors(&dir.path().join("model-00001-of-00002.safetensors"), &header, 30);
    let arch = read(&dir);
    assert_eq!(arch.parameters, arch.parameter_count());
    assert_eq!(arch.checkpoint_dtype, None);
}

#[test]
fn packed_quantized_tensors_keep_the_shape_count() {
    let dir = model_dir(&[("config.json", tiny_llama_config(Some(true)))]);
    let header = json!({
        "model.layers.0.mlp.down_proj.weight": {"dtype": "U8", "shape": [16, 1], "data_offsets": [0, 16]},
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [10, 4], "data_offsets": [16, 96]}
    });
    write_safetensors(&dir.path().join("model.safetensors"), &header, 96);
    let arch = read(&dir);
    assert_eq!(arch.parameters, arch.parameter_count());
}

#[test]
fn malformed_safetensors_are_errors_not_panics() {
    let oversized = {
        let mut bytes = (MAX_HEADER_BYTES + 1).to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        bytes
    };
    let beyond_file = {
        let mut bytes = 1000u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        bytes
    };
    let not_json = {
        let mut bytes = 4u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"nope");
        bytes
    };
    let no_shape = {
        let header = br#"{"w": {"dtype": "F16"}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes
    };
    for (bytes, expect_malformed) in
        [(oversized, true), (beyond_file, true), (not_json, true), (no_shape, true), (b"abc".to_vec(), false)]
    {
        let dir = model_dir(&[("config.json", tiny_llama_config(None))]);
        fs::write(dir.path().join("model.safetensors"), &bytes).expect("write");
        let err = from_local_dir(dir.path()).err();
        assert!(err.is_some());
        assert_eq!(matches!(err, Some(LocalModelError::Malformed { .. })), expect_malformed, "{err:?}");
    }
}

#[test]
fn index_entries_cannot_leave_the_directory() {
    let dir = model_dir(&[
        ("config.json", tiny_llama_config(None)),
        ("model.safetensors.index.json", json!({"weight_map": {"a": "../outside.safetensors"}})),
    ]);
    let err = from_local_dir(dir.path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("is not a file name"), "{err}");
}

#[test]
fn litgpt_model_config_yaml() {
    let dir = tempfile::tempdir().expect("temp dir");
    let yaml = "\
name: pythia-70m
hf_config:
  name: pythia-70m
  org: EleutherAI
block_size: 2048
n_layer: 6
n_embd: 512
n_head: 8
n_query_groups: 8
head_size: 64
vocab_size: 50254
padding_multiple: 128
padded_vocab_size: null
bias: true
norm_class_name: LayerNorm
mlp_class_name: GptNeoxMLP
parallel_residual: true
rotary_percentage: 0.25
rope_adjustments: null
sliding_window_size: null
";
    fs::write(dir.path().join("model_config.yaml"), yaml).expect("write");
    let arch = read(&dir);
    assert_eq!(arch.hf_id.as_deref(), Some("EleutherAI/pythia-70m"));
    assert_eq!(arch.padded_vocab_size, 50304);
    assert_eq!(arch.mlp, MlpKind::Gelu);
    // LitGPT builds a separate head: the count is the untied HF one.
    assert_eq!(arch.parameter_count(), 70_426_624);
    assert!(arch.source.contains("model_config.yaml (LitGPT)"), "{}", arch.source);
}

#[test]
fn litgpt_sliding_window_indices() {
    let dir = tempfile::tempdir().expect("temp dir");
    let yaml = "n_layer: 4\nn_embd: 64\nn_head: 4\nmlp_class_name: GemmaMLP\nintermediate_size: 128\n\
                norm_class_name: RMSNorm\nsliding_window_size: 512\nsliding_window_indices: [1, 1, 1, 0]\n\
                attention_logit_softcapping: 50.0\n";
    fs::write(dir.path().join("model_config.yaml"), yaml).expect("write");
    let arch = read(&dir);
    assert_eq!(arch.attention_logit_softcapping, Some(50.0));
    assert_eq!(arch.sliding_window_layers.as_deref(), Some("1110"));
    assert_eq!(arch.sliding_window_layer_count(), 3);
}

#[test]
fn config_errors() {
    let empty = tempfile::tempdir().expect("temp dir");
    assert!(matches!(from_local_dir(empty.path()), Err(LocalModelError::NoConfig { .. })));

    let unsupported = model_dir(&[("config.json", json!({"model_type": "t5", "d_model": 512}))]);
    let err = from_local_dir(unsupported.path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.ends_with("unsupported model_type `t5`"), "{err}");

    let missing = model_dir(&[("config.json", json!({"model_type": "llama", "hidden_size": 64}))]);
    assert!(matches!(
        from_local_dir(missing.path()),
        Err(LocalModelError::MissingField { field, .. }) if field == "num_attention_heads"
    ));

    let negative = model_dir(&[(
        "config.json",
        json!({"model_type": "llama", "hidden_size": -1, "num_attention_heads": 2, "num_hidden_layers": 1,
               "vocab_size": 10}),
    )]);
    assert!(matches!(from_local_dir(negative.path()), Err(LocalModelError::MissingField { .. })));

    let huge = model_dir(&[(
        "config.json",
        json!({"model_type": "llama", "hidden_size": i64::MAX, "num_attention_heads": 1, "num_hidden_layers": i64::MAX,
               "vocab_size": i64::MAX}),
    )]);
    assert_eq!(from_local_dir(huge.path()).map(|a| a.parameters).ok(), Some(u64::MAX));

    let broken = tempfile::tempdir().expect("temp dir");
    fs::write(broken.path().join("config.json"), "{\"model_type\": ").expect("write");
    assert!(matches!(from_local_dir(broken.path()), Err(LocalModelError::Malformed { .. })));

    let list = tempfile::tempdir().expect("temp dir");
    fs::write(list.path().join("model_config.yaml"), "- 1\n- 2\n").expect("write");
    assert!(matches!(from_local_dir(list.path()), Err(LocalModelError::Malformed { .. })));
}
