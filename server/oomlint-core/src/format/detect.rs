//! Format detection from modelines, file names and keys.

use super::Format;
use crate::syntax::{Document, Language, Mapping};
use std::path::Path;

/// The syntax to parse a file with, from its name.
pub fn language_of(path: &Path) -> Option<Language> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "yaml" | "yml" => Some(Language::Yaml),
        "json" => Some(Language::Json),
        "toml" => Some(Language::Toml),
        "sh" | "bash" | "zsh" | "slurm" | "sbatch" => Some(Language::Shell),
        "py" => Some(Language::Python),
        "ipynb" => Some(Language::Notebook),
        _ if name == ".env" || name.starts_with(".env.") || ext == "env" => Some(Language::Env),
        _ => None,
    }
}

/// The `#` comments of the first 20 lines (text after `#`, trimmed), where modelines are
/// read. Most files have none: when the text holds none of `markers`, there are none to
/// look at, found with one scan and no line split.
pub(crate) fn modeline_comments<'t>(text: &'t str, markers: &[&str]) -> impl Iterator<Item = &'t str> {
    let lines = if markers.iter().any(|m| text.contains(m)) { 20 } else { 0 };
    text.lines().take(lines).filter_map(|line| line.trim_start().strip_prefix('#').map(str::trim))
}

/// A `# oomlint: format=<name>` or `# yaml-language-server: $schema=<…/name.json>`
/// modeline in the first lines of the file.
pub(crate) fn modeline_format(text: &str) -> Option<Format> {
    for comment in modeline_comments(text, &["oomlint:", "yaml-language-server:"]) {
        if let Some(settings) = comment.strip_prefix("oomlint:") {
            let format =
                settings.split_whitespace().find_map(|s| s.strip_prefix("format=")).and_then(Format::from_name);
            if format.is_some() {
                return format;
            }
        }
        if let Some(schema) = comment.strip_prefix("yaml-language-server:") {
            let url = schema.trim().strip_prefix("$schema=")?.trim();
            let file = url.rsplit('/').next()?.strip_suffix(".json")?;
            if let Some(format) = Format::from_name(file) {
                return Some(format);
            }
        }
    }
    None
}

/// Detects the format of a parsed document.
pub fn detect(path: &Path, text: &str, doc: &Document) -> Format {
    if let Some(format) = modeline_format(text) {
        return format;
    }
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_ascii_lowercase();
    match doc.language {
        Language::Env | Language::Shell => return Format::Env,
        Language::Toml => {
            let root = doc.root_mapping();
            return match file_name.as_str() {
                "oomlint.toml" | ".oomlint.toml" => Format::Oomlint,
                "pyproject.toml" if root.is_some_and(|m| m.entry_path("tool.oomlint").is_some()) => Format::Oomlint,
                _ => Format::Unknown,
            };
        }
        Language::Python | Language::Notebook => {
            return super::python::script(doc).map_or(Format::Unknown, |s| super::python::detect(&s));
        }
        Language::Json | Language::Yaml => {}
    }
    let Some(root) = doc.root_mapping() else {
        // A JSON file that does not parse has no keys to judge by; its name still tells
        // a DeepSpeed config (`ds_config.json`, `zero3_offload.json`), whose syntax error
        // would stop the run, so it is reported rather than skipped.
        let deepspeed_name = ["deepspeed", "ds_", "zero"].iter().any(|p| file_name.contains(p));
        return if doc.language == Language::Json && doc.is_incomplete() && deepspeed_name {
            Format::Deepspeed
        } else {
            Format::Unknown
        };
    };
    let path_text = path.to_string_lossy().to_ascii_lowercase().replace('\\', "/");
    if doc.language == Language::Json {
        return if is_deepspeed(root) { Format::Deepspeed } else { Format::Unknown };
    }
    yaml_format(root, &path_text, &file_name)
}

fn has_any(m: &Mapping, keys: &[&str]) -> bool {
    keys.iter().any(|k| m.contains(k))
}

fn count(m: &Mapping, keys: &[&str]) -> usize {
    keys.iter().filter(|k| m.contains(k)).count()
}

fn is_deepspeed(root: &Mapping) -> bool {
    let own = [
        "zero_optimization",
        "train_micro_batch_size_per_gpu",
        "train_batch_size",
        "zero_allow_untested_optimizer",
        "gradient_clipping",
    ];
    if has_any(root, &own) {
        return true;
    }
    // `fp16`/`bf16` alone are shared: DeepSpeed's are blocks (`"fp16": {"enabled": …}`),
    // while an `HfArgumentParser` arguments file (`parse_json_file`) holds the Trainer's flags,
    // `"fp16": true`, beside keys DeepSpeed never has at the top.
    let trainer_arguments =
        ["output_dir", "per_device_train_batch_size", "num_train_epochs", "learning_rate", "model_name_or_path"];
    has_any(root, &["fp16", "bf16"]) && !has_any(root, &trainer_arguments)
}

fn yaml_format(root: &Mapping, path: &str, file_name: &str) -> Format {
    if has_any(root, &["distributed_type", "compute_environment"]) {
        return Format::Accelerate;
    }
    let litgpt_train = root.get("train").and_then(|n| n.as_mapping()).is_some_and(|t| {
        has_any(t, &["micro_batch_size", "global_batch_size", "max_seq_length", "epochs", "max_tokens"])
    });
    if litgpt_train
        || root.contains("checkpoint_dir")
        || count(root, &["precision", "out_dir", "logger_name", "quantize"]) >= 2
    {
        return litgpt_script(root, path, file_name);
    }
    let llamafactory_keys = [
        "finetuning_type",
        "cutoff_len",
        "stage",
        "model_class",
        "dist_config",
        "template",
        "adapter_name_or_path",
        "export_dir",
    ];
    if has_any(root, &llamafactory_keys) {
        return Format::Llamafactory;
    }
    if has_any(root, &["base_model", "sequence_len", "datasets", "lora_target_linear", "num_epochs"]) {
        return Format::Axolotl;
    }
    if root.contains("model_name_or_path")
        || has_any(root, &["dataset_name", "dataset_mixer", "dataset_mixture", "use_peft", "num_generations"])
    {
        return trl_command(root, path);
    }
    if crate::format::env::has_env_block(root) {
        return Format::Env;
    }
    if has_any(root, &["per_device_train_batch_size", "output_dir"])
        && has_any(root, &["learning_rate", "num_train_epochs", "max_steps"])
    {
        return Format::Transformers;
    }
    Format::Unknown
}

fn litgpt_script(root: &Mapping, path: &str, file_name: &str) -> Format {
    let stem = file_name.rsplit_once('.').map_or(file_name, |(s, _)| s);
    match stem {
        "lora" | "qlora" => return Format::LitgptLora,
        "full" => return Format::LitgptFull,
        "adapter" => return Format::LitgptAdapter,
        "adapter_v2" | "adapter-v2" => return Format::LitgptAdapterV2,
        _ => {}
    }
    let has_train_key = |k: &str| {
        root.entry_path(&format!("train.{k}")).is_some_and(|e| !e.value.as_scalar().is_some_and(|s| s.is_null()))
    };
    if path.contains("pretrain")
        || root.contains("model_name") && !root.contains("checkpoint_dir")
        || has_train_key("max_tokens")
    {
        return Format::LitgptPretrain;
    }
    if root.entries.iter().any(|e| e.key.starts_with("lora_")) || stem.contains("lora") {
        return Format::LitgptLora;
    }
    if stem.contains("adapter_v2") || stem.contains("adapter-v2") {
        return Format::LitgptAdapterV2;
    }
    if stem.contains("adapter") {
        return Format::LitgptAdapter;
    }
    Format::LitgptFull
}

fn trl_command(root: &Mapping, path: &str) -> Format {
    let grpo_keys = [
        "num_generations",
        "use_vllm",
        "vllm_mode",
        "reward_funcs",
        "vllm_gpu_memory_utilization",
        "steps_per_generation",
    ];
    if has_any(root, &grpo_keys) || path.contains("grpo") {
        return Format::TrlGrpo;
    }
    let dpo_keys = ["beta", "precompute_ref_log_probs", "ref_model_init_kwargs", "rpo_alpha", "max_prompt_length"];
    let dpo_path = ["dpo", "orpo", "kto", "/apo"].iter().any(|p| path.contains(p));
    if has_any(root, &dpo_keys) || dpo_path {
        return Format::TrlDpo;
    }
    Format::TrlSft
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    fn detect_yaml(path: &str, text: &str) -> Format {
        detect(Path::new(path), text, &syntax::parse(text, Language::Yaml))
    }

    #[test]
    fn broken_deepspeed_json_is_still_deepspeed() {
        let text = "{\"zero_optimization\": {\"stage\": 3,}}";
        let doc = syntax::parse(text, Language::Json);
        assert_eq!(detect(Path::new("configs/ds_zero3.json"), text, &doc), Format::Deepspeed);
        assert_eq!(detect(Path::new("package.json"), text, &doc), Format::Unknown);
    }

    #[test]
    fn trainer_arguments_json_is_not_deepspeed() {
        let json = |text: &str| detect(Path::new("train_args/sft.json"), text, &syntax::parse(text, Language::Json));
        let arguments =
            r#"{"output_dir": "out", "per_device_train_batch_size": 1, "learning_rate": 1e-4, "fp16": true}"#;
        assert_eq!(json(arguments), Format::Unknown);
        assert_eq!(json(r#"{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}"#), Format::Deepspeed);
        assert_eq!(json(r#"{"fp16": true}"#), Format::Deepspeed, "a broken DeepSpeed block is still reported");
    }

    #[test]
    fn modelines_win() {
        assert_eq!(detect_yaml("x.yaml", "# oomlint: format=trl-grpo\nfoo: 1\n"), Format::TrlGrpo);
        assert_eq!(
            detect_yaml("x.yaml", "# yaml-language-server: $schema=https://oomlint.dev/schema/axolotl.json\nfoo: 1\n"),
            Format::Axolotl
        );
    }

    #[test]
    fn by_keys_and_names() {
        assert_eq!(detect_yaml("a/qlora.yaml", "checkpoint_dir: x\nquantize: bnb.nf4\n"), Format::LitgptLora);
        assert_eq!(
            detect_yaml("pretrain/tiny.yaml", "model_name: x\ntrain:\n  micro_batch_size: 4\n"),
            Format::LitgptPretrain
        );
        assert_eq!(detect_yaml("c.yaml", "distributed_type: NO\n"), Format::Accelerate);
        assert_eq!(detect_yaml("c.yaml", "base_model: x\nsequence_len: 2048\n"), Format::Axolotl);
        assert_eq!(
            detect_yaml("c.yaml", "model_name_or_path: x\nstage: sft\nfinetuning_type: lora\n"),
            Format::Llamafactory
        );
        assert_eq!(detect_yaml("dpo/c.yaml", "model_name_or_path: x\n"), Format::TrlDpo);
        assert_eq!(detect_yaml("c.yaml", "model_name_or_path: x\nnum_generations: 4\n"), Format::TrlGrpo);
        assert_eq!(detect_yaml("c.yaml", "model_name_or_path: x\n"), Format::TrlSft);
        assert_eq!(detect_yaml("c.yaml", "gpu: h100\ngpu_count: 1\n"), Format::Unknown);
        assert_eq!(detect_yaml("c.yaml", "env:\n  PYTORCH_CUDA_ALLOC_CONF: x\njobs: {}\n"), Format::Env);
    }
}
