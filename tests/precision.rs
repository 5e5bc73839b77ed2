//! Error findings are promises that the framework fails. These cases need the files
//! around a config (dependency pins, the repository's own package), so they run the
//! binary in a temporary project: each pair shows the same text as an error where the
//! framework fails and as a warning (or nothing) where it does not.

mod common;

use common::oomlint;
use serde_json::Value;
use std::path::Path;

/// (rule, severity) of each finding `oomlint check` reports for `file`.
fn findings(file: &Path) -> Vec<(String, String)> {
    let out = oomlint(&["check", file.to_str().unwrap(), "--output-format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    report["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["rule"].as_str().unwrap().to_string(), d["severity"].as_str().unwrap().to_string()))
        .collect()
}

fn severity_of(file: &Path, rule: &str) -> Option<String> {
    findings(file).into_iter().find(|(r, _)| r == rule).map(|(_, s)| s)
}

/// A project directory holding `files` (path → text); returns it and the path of `config`.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

const GRPO_WITH_EXTRA_KEY: &str = "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/tldr\nnum_generations: 4\nper_device_train_batch_size: 4\noutput_dir: out\nsystem_prompt: \"Think first.\"\n";

#[test]
fn an_unknown_trl_key_fails_only_where_trl_rejects_it() {
    let plain = project(&[("recipes/grpo.yaml", GRPO_WITH_EXTRA_KEY)]);
    assert_eq!(severity_of(&plain.path().join("recipes/grpo.yaml"), "unknown-key").as_deref(), Some("error"));

    // TRL 0.13 to 0.18 drop unknown config keys.
    let old = project(&[("requirements.txt", "trl==0.16.0\n"), ("recipes/grpo.yaml", GRPO_WITH_EXTRA_KEY)]);
    assert_eq!(severity_of(&old.path().join("recipes/grpo.yaml"), "unknown-key").as_deref(), Some("warning"));

    // A repository that builds its own package on TRL reads its configs with its own classes.
    let setup = "setup(\n    name=\"my-r1\",\n    install_requires=[\"trl>=0.20\", \"torch\"],\n)\n";
    let own = project(&[("setup.py", setup), ("recipes/grpo.yaml", GRPO_WITH_EXTRA_KEY)]);
    assert_eq!(severity_of(&own.path().join("recipes/grpo.yaml"), "unknown-key").as_deref(), Some("warning"));

    // A package that does not train with TRL is no such evidence.
    let unrelated = "[project]\nname = \"docs-site\"\ndependencies = [\"mkdocs\"]\n";
    let docs = project(&[("pyproject.toml", unrelated), ("recipes/grpo.yaml", GRPO_WITH_EXTRA_KEY)]);
    assert_eq!(severity_of(&docs.path().join("recipes/grpo.yaml"), "unknown-key").as_deref(), Some("error"));
}

#[test]
fn a_notebook_is_judged_by_the_versions_it_installs() {
    let notebook = |install: &str| {
        let cells = serde_json::json!({
            "cells": [
                {"cell_type": "code", "source": install},
                {"cell_type": "code", "source": "from trl import SFTConfig, SFTTrainer\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(\"Qwen/Qwen2.5-0.5B\")\nargs = SFTConfig(output_dir=\"out\", warmup_ratio=0.1, per_device_train_batch_size=2)\ntrainer = SFTTrainer(model=model, args=args, train_dataset=None)\ntrainer.train()\n"}
            ],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5
        });
        cells.to_string()
    };
    let pinned =
        project(&[("nb.ipynb", &notebook("!pip install transformers==4.56.2\n!pip install --no-deps trl==0.22.2"))]);
    assert_eq!(severity_of(&pinned.path().join("nb.ipynb"), "removed-key"), None, "warmup_ratio exists in 4.56");
    // The repository's requirements say 5.15, but the notebook installs its own.
    let both = project(&[
        ("requirements.txt", "transformers==5.15.0\n"),
        ("nb.ipynb", &notebook("!pip install transformers==4.56.2")),
    ]);
    assert_eq!(severity_of(&both.path().join("nb.ipynb"), "removed-key"), None);
    let unpinned = project(&[("nb.ipynb", &notebook("!pip install trl"))]);
    assert_eq!(severity_of(&unpinned.path().join("nb.ipynb"), "removed-key").as_deref(), Some("error"));
}

#[test]
fn setup_py_dependency_tables_pin_the_release() {
    let setup = "_deps = [\n    \"langdetect\",  # for LightEval's tasks\n    \"trl[vllm]==0.16.0\",\n]\ndeps = {}\ninstall_requires = [deps[\"trl\"]]\nsetup(name=\"x\", install_requires=install_requires)\n";
    let removed = "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/tldr\ntorch_dtype: bfloat16\noutput_dir: out\n";
    let dir = project(&[("setup.py", setup), ("sft.yaml", removed)]);
    assert_eq!(severity_of(&dir.path().join("sft.yaml"), "removed-key"), None, "torch_dtype works in TRL 0.16");
    let newest = project(&[("sft.yaml", removed)]);
    assert_eq!(severity_of(&newest.path().join("sft.yaml"), "removed-key").as_deref(), Some("error"));
}

const SFT_RECIPE_WITH_SCRIPT_KEYS: &str = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_id_or_path: data/train.jsonl\ntokenizer_name_or_path: Qwen/Qwen2.5-0.5B\nlearning_rate: 2.0e-5\nlr_scheduler_type: cosine\nmax_length: 1024\npacking: true\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 4\nnum_train_epochs: 1\nbf16: true\nlogging_steps: 10\nuse_peft: true\nlora_r: 16\noutput_dir: out\nsystem_prompt: \"Think first.\"\n";

const SFT_SCRIPT: &str = "from dataclasses import dataclass\nfrom trl import ModelConfig, SFTConfig, TrlParser\n\n\n@dataclass\nclass ScriptArguments:\n    \"\"\"Arguments of this script.\n\n    note: not a field\n    \"\"\"\n\n    dataset_id_or_path: str\n    tokenizer_name_or_path: str = None\n\n\ndef main():\n    parser = TrlParser((ModelConfig, ScriptArguments, SFTConfig))\n    model_args, script_args, training_args = parser.parse_args_and_config()\n";

#[test]
fn keys_of_the_repositorys_own_argument_dataclasses_are_known() {
    // The recipe's keys of the script's `ScriptArguments` are not reported; another
    // unknown key is a warning: which script reads the recipe is not known.
    let own = project(&[("scripts/run_sft.py", SFT_SCRIPT), ("recipes/sft.yaml", SFT_RECIPE_WITH_SCRIPT_KEYS)]);
    let found = findings(&own.path().join("recipes/sft.yaml"));
    let unknown: Vec<&String> = found.iter().filter(|(rule, _)| rule == "unknown-key").map(|(_, s)| s).collect();
    assert_eq!(unknown, ["warning"], "only `system_prompt`, as a warning: {found:?}");

    // Without the script, the same keys are errors.
    let bare = project(&[("recipes/sft.yaml", SFT_RECIPE_WITH_SCRIPT_KEYS)]);
    let found = findings(&bare.path().join("recipes/sft.yaml"));
    assert_eq!(found.iter().filter(|(rule, s)| rule == "unknown-key" && s == "error").count(), 3, "{found:?}");

    // A script that parses with TRL's own classes only adds nothing.
    let framework = "from trl import ScriptArguments, SFTConfig, ModelConfig, TrlParser\nparser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))\n";
    let plain = project(&[("scripts/sft.py", framework), ("recipes/sft.yaml", SFT_RECIPE_WITH_SCRIPT_KEYS)]);
    let found = findings(&plain.path().join("recipes/sft.yaml"));
    assert_eq!(found.iter().filter(|(rule, s)| rule == "unknown-key" && s == "error").count(), 3, "{found:?}");
}
