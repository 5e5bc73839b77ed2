//! The frameworks' defaults, one row each: the key, the value, the releases it holds for,
//! and the framework source it mirrors. Only the plan builders of `format/` read this
//! table; rules and the estimator read the plan they build (a test in this module fails
//! when a rule or the estimator defaults one of these keys on its own).

/// One default of one framework.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fact {
    pub framework: Framework,
    pub key: &'static str,
    pub value: f64,
    /// The releases the value holds for.
    pub releases: &'static str,
    /// File and symbol in the framework's repository.
    pub source: &'static str,
}

/// Whose default a fact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framework {
    Transformers,
    TrlSft,
    TrlDpo,
    TrlGrpo,
    TrlModel,
    LitgptFinetune,
    LitgptPretrain,
    Axolotl,
}

const fn fact(
    framework: Framework,
    key: &'static str,
    value: f64,
    releases: &'static str,
    source: &'static str,
) -> Fact {
    Fact { framework, key, value, releases, source }
}

use Framework::*;

/// Every default a plan builder applies to a number.
pub(crate) const FACTS: &[Fact] = &[
    fact(
        Transformers,
        "per_device_train_batch_size",
        8.0,
        "all",
        "transformers/training_args.py TrainingArguments.per_device_train_batch_size",
    ),
    fact(
        Transformers,
        "gradient_accumulation_steps",
        1.0,
        "all",
        "transformers/training_args.py TrainingArguments.gradient_accumulation_steps",
    ),
    fact(TrlSft, "max_length", 1024.0, ">= 0.20", "trl/trainer/sft_config.py SFTConfig.max_length"),
    fact(TrlDpo, "max_length", 1024.0, ">= 0.20", "trl/trainer/dpo_config.py DPOConfig.max_length"),
    fact(TrlGrpo, "num_generations", 8.0, ">= 0.14", "trl/trainer/grpo_config.py GRPOConfig.num_generations"),
    fact(
        TrlGrpo,
        "max_completion_length",
        512.0,
        ">= 1.10 (256 up to 1.9)",
        "trl/trainer/grpo_config.py GRPOConfig.max_completion_length",
    ),
    fact(
        TrlGrpo,
        "max_prompt_length",
        512.0,
        "< 0.28 (removed since)",
        "trl/trainer/grpo_config.py GRPOConfig.max_prompt_length",
    ),
    fact(TrlModel, "lora_r", 16.0, "all", "trl/trainer/model_config.py ModelConfig.lora_r"),
    fact(TrlModel, "lora_alpha", 32.0, "all", "trl/trainer/model_config.py ModelConfig.lora_alpha"),
    fact(TrlModel, "lora_dropout", 0.05, "all", "trl/trainer/model_config.py ModelConfig.lora_dropout"),
    fact(
        Axolotl,
        "micro_batch_size",
        1.0,
        ">= 0.5",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.micro_batch_size",
    ),
    fact(
        Axolotl,
        "gradient_accumulation_steps",
        1.0,
        ">= 0.5",
        "axolotl/utils/schemas/config.py AxolotlInputConfig.gradient_accumulation_steps",
    ),
    fact(
        LitgptFinetune,
        "train.micro_batch_size",
        1.0,
        "0.5",
        "litgpt/finetune/lora.py setup(train=TrainArgs(micro_batch_size=1))",
    ),
    fact(
        LitgptFinetune,
        "train.global_batch_size",
        16.0,
        "0.5",
        "litgpt/finetune/lora.py setup(train=TrainArgs(global_batch_size=16))",
    ),
    fact(
        LitgptPretrain,
        "train.micro_batch_size",
        4.0,
        "0.5",
        "litgpt/pretrain.py setup(train=TrainArgs(micro_batch_size=4))",
    ),
    fact(
        LitgptPretrain,
        "train.global_batch_size",
        512.0,
        "0.5",
        "litgpt/pretrain.py setup(train=TrainArgs(global_batch_size=512))",
    ),
    fact(LitgptFinetune, "lora_r", 8.0, "0.5", "litgpt/finetune/lora.py setup(lora_r=8)"),
    fact(LitgptFinetune, "lora_alpha", 16.0, "0.5", "litgpt/finetune/lora.py setup(lora_alpha=16)"),
    fact(LitgptFinetune, "lora_dropout", 0.05, "0.5", "litgpt/finetune/lora.py setup(lora_dropout=0.05)"),
];

/// The row for `key` of `framework`.
///
/// # Panics
/// When the table has no such row: a plan builder asked for a default nobody wrote down.
pub(crate) fn get(framework: Framework, key: &str) -> &'static Fact {
    FACTS
        .iter()
        .find(|f| f.framework == framework && f.key == key)
        .unwrap_or_else(|| panic!("no default for {framework:?} {key} in format::facts"))
}

/// A count default (batch sizes, lengths, ranks).
pub(crate) fn count(framework: Framework, key: &str) -> u64 {
    get(framework, key).value as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source of every rule, their shared helpers and the estimator.
    fn readers_of_the_plan() -> Vec<(&'static str, &'static str)> {
        let mut sources: Vec<(&str, &str)> = crate::rules::RULES.iter().map(|r| (r.name, r.source)).collect();
        sources.extend([
            ("rules/support.rs", include_str!("../rules/support.rs")),
            ("estimate/setup.rs", include_str!("../estimate/setup.rs")),
            ("estimate/activations.rs", include_str!("../estimate/activations.rs")),
            ("estimate/generation.rs", include_str!("../estimate/generation.rs")),
            ("estimate/levers.rs", include_str!("../estimate/levers.rs")),
            ("estimate/mod.rs", include_str!("../estimate/mod.rs")),
        ]);
        sources
    }

    #[test]
    fn rules_and_the_estimator_apply_no_default_of_their_own() {
        // A key read from the file and defaulted to a literal on the same line:
        // `set("per_device_train_batch_size").unwrap_or(8)`.
        let mut offenders = Vec::new();
        for (file, source) in readers_of_the_plan() {
            for (n, line) in source.lines().enumerate() {
                let defaults = ["unwrap_or(", "map_or("]
                    .iter()
                    .any(|d| line.split(d).skip(1).any(|rest| rest.starts_with(|c: char| c.is_ascii_digit())));
                if !defaults {
                    continue;
                }
                let reads_a_fact_key = FACTS.iter().any(|fact| {
                    let leaf = fact.key.rsplit('.').next().unwrap_or(fact.key);
                    [fact.key, leaf].iter().any(|key| reads_key(line, key))
                });
                if reads_a_fact_key {
                    offenders.push(format!("{file}:{}: {}", n + 1, line.trim()));
                }
            }
        }
        assert!(offenders.is_empty(), "read these defaults from the plan (format::facts):\n{}", offenders.join("\n"));
    }

    /// Whether `line` reads `key` from the file (not as an argument to this table's lookups).
    fn reads_key(line: &str, key: &str) -> bool {
        let quoted = format!("\"{key}\"");
        line.match_indices(&quoted).any(|(at, _)| !line[..at].trim_end().ends_with(','))
    }

    #[test]
    fn the_check_above_can_fail() {
        assert!(reads_key(
            "per_device: set(\"per_device_train_batch_size\").unwrap_or(8),",
            "per_device_train_batch_size"
        ));
        assert!(!reads_key("x.map_or(facts::count(TrlGrpo, \"num_generations\"), |v| v)", "num_generations"));
    }

    #[test]
    fn each_key_has_one_row_per_framework_and_a_source() {
        for (i, a) in FACTS.iter().enumerate() {
            assert!(a.source.contains('/') && !a.releases.is_empty(), "{a:?}");
            assert!(!FACTS[i + 1..].iter().any(|b| b.framework == a.framework && b.key == a.key), "{a:?} twice");
        }
    }
}
