//! The rule registry: one file per rule, one explicit list.
//!
//! Each rule file starts with a `//!` doc comment (what it does, why it matters, an
//! example, the fix and its safety, the framework source it mirrors). That comment is
//! the rule's documentation for `oomlint rule CODE`, hovers and SARIF: the registry
//! embeds the file with `include_str!` and reads the comment back, so code and docs
//! cannot drift apart.

mod accelerate_cpu_ram_efficient_loading;
mod accelerate_deepspeed_file_conflicts;
mod accelerate_fsdp2_local_state_dict;
mod accelerate_fsdp2_reshard_not_bool;
mod accelerate_missing_distributed_type;
mod accelerate_mixed_precision_mismatch;
mod accelerate_num_processes_unset;
mod accelerate_parallelism_size_mismatch;
mod alloc_conf_both_variables;
mod alloc_conf_ineffective;
mod alloc_conf_invalid;
mod alloc_conf_legacy_variable;
mod axolotl_activation_offloading_requires_checkpointing;
mod axolotl_attention_legacy_flags;
mod axolotl_batch_keys;
mod axolotl_beta_mismatch;
mod axolotl_deepspeed_and_fsdp;
mod axolotl_fsdp2_8bit_optimizer;
mod axolotl_max_memory_exclusive;
mod axolotl_qlora_requires_4bit;
mod axolotl_sample_packing_with_rl;
mod bf16_unsupported_gpu;
mod conflicting_quantization;
mod deepspeed_batch_arithmetic;
mod deepspeed_hf_mismatch;
mod deepspeed_offload_param_stage;
mod deepspeed_partial_offload_stage;
mod dpo_loss_weights_length;
mod duplicate_key;
mod exceeds_gpu_memory;
mod expandable_segments_with_vllm_sleep;
mod fp16_and_bf16;
mod grpo_auto_find_batch_size;
mod grpo_eval_batch_divisibility;
mod grpo_generation_batch_and_steps;
mod grpo_generation_batch_divisibility;
mod grpo_min_generations;
mod grpo_sync_ref_without_beta;
mod invalid_value;
mod launch_processes_exceed_gpus;
mod litgpt_batch_arithmetic;
mod litgpt_batch_rounding;
mod litgpt_devices_invalid;
mod litgpt_quantize_mixed_precision;
mod litgpt_quantize_multi_device;
mod litgpt_quantize_optimizer;
mod litgpt_quantize_precision_unsupported;
mod litgpt_validate_args;
mod litgpt_warmup_fraction_and_steps;
mod litgpt_warmup_zero;
mod load_best_model_strategy_mismatch;
mod low_memory_headroom;
mod memory;
mod openrlhf_async_with_sleep;
mod openrlhf_colocate_vllm_gpus;
mod openrlhf_colocated_group_sizes;
mod openrlhf_dynamic_filtering;
mod openrlhf_eval_dataset_reward;
mod openrlhf_group_estimator_samples;
mod openrlhf_packing_without_vllm;
mod openrlhf_requires_async;
mod openrlhf_sample_batches;
mod openrlhf_vlm_constraints;
mod quantized_without_adapter;
mod reduce_lr_on_plateau_without_eval;
mod removed_key;
mod seq_longer_than_context;
mod support;
mod tensor_parallel_divides_heads;
mod transformers_prefetch_without_workers;
mod trl_dtype_unset_fp32;
mod trl_packing_without_max_length;
mod trl_padding_free_without_packing;
mod trl_unknown_keys;
mod trl_vllm_8bit;
mod unknown_key;
mod unknown_model;
pub(crate) mod unreadable_input;
mod unrecognized_file;
mod unsloth_precision_conflict;
mod unused_suppression;
mod verl_batch_divisibility;
mod verl_layered_summon_preload;
mod verl_micro_batch_below_gpus;
mod verl_micro_batch_keys;
mod verl_mini_batch_normalization;
mod verl_sequence_parallel;
mod verl_train_batch_below_mini;
mod verl_val_sampling_temperature;
mod vllm_memory_overcommit;
mod vllm_tp_divides_world;
mod yaml_syntax;

use crate::catalog::Gpu;
use crate::diagnostic::{Diagnostic, Fix, Related, Severity};
use crate::estimate::Estimate;
use crate::format::Format;
use crate::model::ModelLookup;
use crate::own_arguments::OwnArguments;
use crate::plan::Plan;
use crate::schema;
use crate::span::Span;
use crate::suppression::Suppression;
use crate::syntax::Document;
use crate::versions::Versions;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The file cannot be read as its language.
    Syntax,
    /// Keys and values against the framework's schema.
    Schema,
    /// A start-up error the framework itself would raise.
    Framework,
    /// Predicted GPU memory.
    Memory,
    /// PyTorch allocator and device variables.
    Allocator,
    /// oomlint's own comments and settings.
    Meta,
}

/// Whether a rule offers fixes, and how safe they are at best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixAvailability {
    None,
    Sometimes,
    Always,
}

/// Everything a rule may look at for one file.
pub(crate) struct Context<'a> {
    pub(crate) text: &'a str,
    pub(crate) document: &'a Document,
    pub(crate) format: Format,
    pub(crate) plan: Option<&'a Plan>,
    /// The model the plan trains, when it names one.
    pub(crate) model: Option<&'a ModelLookup>,
    /// The target GPU, when known.
    pub(crate) gpu: Option<&'a Gpu>,
    /// The memory estimate, when the model is known.
    pub(crate) estimate: Option<&'a Estimate>,
    /// Why the raw bytes were not parsed (see `unreadable_input::accept`).
    pub(crate) rejected: Option<&'a (usize, String)>,
    /// Framework versions pinned near the file (see `crate::versions`).
    pub(crate) versions: &'a Versions,
    /// What schema validation found (see `crate::schema`).
    pub(crate) schema: &'a schema::Findings,
    /// The argument dataclasses of the repository's own scripts, when the leaf found some
    /// (asked only for TRL and transformers config files with unknown or removed keys).
    pub(crate) own_arguments: Option<&'a OwnArguments>,
    /// Why the file was not taken for a format oomlint reads, when the user named it.
    pub(crate) unrecognized: Option<&'a str>,
    /// The file's suppression comments, once every other rule has run
    /// (for `unused-suppression`; None in the first pass).
    pub(crate) suppressions: Option<&'a [Suppression]>,
}

impl Context<'_> {
    /// The text at `span`: the analysed file's, or at a linked place the text of the file the
    /// analysed one is read with (the config a launch names); empty where there is none.
    pub(crate) fn source(&self, span: Span) -> &str {
        match span.as_linked() {
            Some((file, local)) => self
                .plan
                .and_then(|p| p.linked_files.get(file))
                .and_then(|l| l.text.get(local.start..local.end))
                .unwrap_or_default(),
            None => self.text.get(span.start..span.end).unwrap_or_default(),
        }
    }
}

pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub fix: FixAvailability,
    /// The rule's source file; its leading `//!` comment is the documentation.
    pub(crate) source: &'static str,
    pub(crate) check: fn(&Context, &mut Reporter),
}

impl Rule {
    /// The rule's documentation (Markdown), read from its file's `//!` comment.
    pub fn doc(&self) -> String {
        self.source
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| l.strip_prefix("//! ").unwrap_or(l.trim_start_matches("//!")))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first sentence of the documentation's first paragraph.
    pub fn summary(&self) -> String {
        let doc = self.doc();
        let paragraph: Vec<&str> = doc
            .lines()
            .skip_while(|l| l.trim().is_empty() || l.starts_with('#'))
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect();
        let text = paragraph.join(" ");
        match text.find(". ") {
            Some(end) => text[..=end].to_string(),
            None => text,
        }
    }
}

/// Collects one rule's findings with its code, name and severity filled in.
pub(crate) struct Reporter<'r> {
    rule: &'r Rule,
    out: &'r mut Vec<Diagnostic>,
}

impl Reporter<'_> {
    pub(crate) fn report(&mut self, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        self.out.push(Diagnostic {
            code: self.rule.code,
            rule: self.rule.name,
            severity: self.rule.severity,
            message: message.into(),
            span,
            related: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
        });
        self.out.last_mut().expect("just pushed")
    }
}

impl Diagnostic {
    /// Offers `fix` (nothing for None: a fix the file's language cannot write).
    pub(crate) fn with_fix(&mut self, fix: impl Into<Option<Fix>>) -> &mut Self {
        self.fixes.extend(fix.into());
        self
    }

    pub(crate) fn with_related(&mut self, span: Span, message: impl Into<String>) -> &mut Self {
        self.related.push(Related { span, message: message.into() });
        self
    }

    pub(crate) fn with_note(&mut self, note: impl Into<String>) -> &mut Self {
        self.notes.push(note.into());
        self
    }
}

macro_rules! rule {
    ($module:ident, $code:literal, $name:literal, $category:ident, $severity:ident, $fix:ident) => {
        Rule {
            code: $code,
            name: $name,
            category: Category::$category,
            severity: Severity::$severity,
            fix: FixAvailability::$fix,
            source: include_str!(concat!(stringify!($module), ".rs")),
            check: $module::check,
        }
    };
}

/// Every rule, in code order.
pub static RULES: &[Rule] = &[
    rule!(yaml_syntax, "OOM001", "yaml-syntax", Syntax, Error, None),
    rule!(duplicate_key, "OOM002", "duplicate-key", Syntax, Warning, None),
    rule!(unknown_key, "OOM003", "unknown-key", Schema, Error, Sometimes),
    rule!(invalid_value, "OOM004", "invalid-value", Schema, Error, Sometimes),
    rule!(removed_key, "OOM005", "removed-key", Schema, Error, Sometimes),
    rule!(unreadable_input, "OOM006", "unreadable-input", Syntax, Error, None),
    rule!(unused_suppression, "OOM007", "unused-suppression", Meta, Warning, Always),
    rule!(unrecognized_file, "OOM008", "unrecognized-file", Meta, Info, None),
    rule!(litgpt_quantize_mixed_precision, "OOM101", "litgpt-quantize-mixed-precision", Framework, Error, Always),
    rule!(litgpt_quantize_multi_device, "OOM102", "litgpt-quantize-multi-device", Framework, Error, Always),
    rule!(litgpt_quantize_optimizer, "OOM103", "litgpt-quantize-optimizer", Framework, Error, Sometimes),
    rule!(litgpt_batch_arithmetic, "OOM104", "litgpt-batch-arithmetic", Framework, Error, None),
    rule!(litgpt_batch_rounding, "OOM105", "litgpt-batch-rounding", Framework, Warning, Always),
    rule!(litgpt_validate_args, "OOM106", "litgpt-validate-args", Framework, Error, Sometimes),
    rule!(litgpt_warmup_zero, "OOM107", "litgpt-warmup-zero", Framework, Error, Always),
    rule!(litgpt_warmup_fraction_and_steps, "OOM108", "litgpt-warmup-fraction-and-steps", Framework, Error, Sometimes),
    rule!(litgpt_devices_invalid, "OOM109", "litgpt-devices-invalid", Framework, Error, None),
    rule!(
        litgpt_quantize_precision_unsupported,
        "OOM110",
        "litgpt-quantize-precision-unsupported",
        Framework,
        Error,
        Sometimes
    ),
    rule!(fp16_and_bf16, "OOM201", "fp16-and-bf16", Framework, Error, Always),
    rule!(conflicting_quantization, "OOM202", "conflicting-quantization", Framework, Error, None),
    rule!(quantized_without_adapter, "OOM203", "quantized-without-adapter", Framework, Error, Sometimes),
    rule!(trl_padding_free_without_packing, "OOM204", "trl-padding-free-without-packing", Framework, Error, Sometimes),
    rule!(trl_packing_without_max_length, "OOM205", "trl-packing-without-max-length", Framework, Error, Always),
    rule!(trl_dtype_unset_fp32, "OOM206", "trl-dtype-unset-fp32", Framework, Warning, Sometimes),
    rule!(
        grpo_generation_batch_divisibility,
        "OOM207",
        "grpo-generation-batch-divisibility",
        Framework,
        Error,
        Sometimes
    ),
    rule!(grpo_min_generations, "OOM208", "grpo-min-generations", Framework, Error, Always),
    rule!(grpo_generation_batch_and_steps, "OOM209", "grpo-generation-batch-and-steps", Framework, Error, None),
    rule!(grpo_auto_find_batch_size, "OOM210", "grpo-auto-find-batch-size", Framework, Error, Always),
    rule!(grpo_eval_batch_divisibility, "OOM211", "grpo-eval-batch-divisibility", Framework, Error, Sometimes),
    rule!(grpo_sync_ref_without_beta, "OOM212", "grpo-sync-ref-without-beta", Framework, Error, Always),
    rule!(vllm_tp_divides_world, "OOM213", "vllm-tp-divides-world", Framework, Error, None),
    rule!(trl_vllm_8bit, "OOM214", "trl-vllm-8bit", Framework, Error, None),
    rule!(dpo_loss_weights_length, "OOM215", "dpo-loss-weights-length", Framework, Error, None),
    rule!(
        transformers_prefetch_without_workers,
        "OOM216",
        "transformers-prefetch-without-workers",
        Framework,
        Error,
        None
    ),
    rule!(load_best_model_strategy_mismatch, "OOM217", "load-best-model-strategy-mismatch", Framework, Error, None),
    rule!(reduce_lr_on_plateau_without_eval, "OOM218", "reduce-lr-on-plateau-without-eval", Framework, Error, None),
    rule!(unsloth_precision_conflict, "OOM219", "unsloth-precision-conflict", Framework, Error, None),
    rule!(axolotl_batch_keys, "OOM301", "axolotl-batch-keys", Framework, Error, None),
    rule!(axolotl_qlora_requires_4bit, "OOM302", "axolotl-qlora-requires-4bit", Framework, Error, Sometimes),
    rule!(axolotl_deepspeed_and_fsdp, "OOM303", "axolotl-deepspeed-and-fsdp", Framework, Error, None),
    rule!(axolotl_sample_packing_with_rl, "OOM304", "axolotl-sample-packing-with-rl", Framework, Error, Always),
    rule!(
        axolotl_activation_offloading_requires_checkpointing,
        "OOM305",
        "axolotl-activation-offloading-requires-checkpointing",
        Framework,
        Error,
        Sometimes
    ),
    rule!(axolotl_attention_legacy_flags, "OOM306", "axolotl-attention-legacy-flags", Framework, Error, Sometimes),
    rule!(axolotl_fsdp2_8bit_optimizer, "OOM307", "axolotl-fsdp2-8bit-optimizer", Framework, Error, Always),
    rule!(axolotl_beta_mismatch, "OOM308", "axolotl-beta-mismatch", Framework, Error, None),
    rule!(axolotl_max_memory_exclusive, "OOM309", "axolotl-max-memory-exclusive", Framework, Error, None),
    rule!(accelerate_missing_distributed_type, "OOM401", "accelerate-missing-distributed-type", Framework, Error, None),
    rule!(accelerate_num_processes_unset, "OOM402", "accelerate-num-processes-unset", Framework, Warning, None),
    rule!(accelerate_deepspeed_file_conflicts, "OOM403", "accelerate-deepspeed-file-conflicts", Framework, Error, None),
    rule!(
        accelerate_fsdp2_reshard_not_bool,
        "OOM404",
        "accelerate-fsdp2-reshard-not-bool",
        Framework,
        Error,
        Sometimes
    ),
    rule!(
        accelerate_cpu_ram_efficient_loading,
        "OOM405",
        "accelerate-cpu-ram-efficient-loading",
        Framework,
        Error,
        Always
    ),
    rule!(accelerate_fsdp2_local_state_dict, "OOM406", "accelerate-fsdp2-local-state-dict", Framework, Error, Always),
    rule!(
        accelerate_parallelism_size_mismatch,
        "OOM407",
        "accelerate-parallelism-size-mismatch",
        Framework,
        Error,
        None
    ),
    rule!(deepspeed_batch_arithmetic, "OOM411", "deepspeed-batch-arithmetic", Framework, Error, Sometimes),
    rule!(deepspeed_offload_param_stage, "OOM412", "deepspeed-offload-param-stage", Framework, Warning, None),
    rule!(deepspeed_partial_offload_stage, "OOM413", "deepspeed-partial-offload-stage", Framework, Error, None),
    rule!(deepspeed_hf_mismatch, "OOM414", "deepspeed-hf-mismatch", Framework, Error, Always),
    rule!(launch_processes_exceed_gpus, "OOM415", "launch-processes-exceed-gpus", Framework, Error, None),
    rule!(
        accelerate_mixed_precision_mismatch,
        "OOM416",
        "accelerate-mixed-precision-mismatch",
        Framework,
        Warning,
        None
    ),
    rule!(tensor_parallel_divides_heads, "OOM417", "tensor-parallel-divides-heads", Framework, Error, None),
    rule!(alloc_conf_invalid, "OOM501", "alloc-conf-invalid", Allocator, Error, Sometimes),
    rule!(alloc_conf_ineffective, "OOM502", "alloc-conf-ineffective", Allocator, Warning, None),
    rule!(alloc_conf_both_variables, "OOM503", "alloc-conf-both-variables", Allocator, Warning, None),
    rule!(alloc_conf_legacy_variable, "OOM504", "alloc-conf-legacy-variable", Allocator, Info, Sometimes),
    rule!(expandable_segments_with_vllm_sleep, "OOM505", "expandable-segments-with-vllm-sleep", Allocator, Error, None),
    rule!(exceeds_gpu_memory, "OOM601", "exceeds-gpu-memory", Memory, Error, Sometimes),
    rule!(low_memory_headroom, "OOM602", "low-memory-headroom", Memory, Warning, Sometimes),
    rule!(unknown_model, "OOM603", "unknown-model", Memory, Warning, None),
    rule!(vllm_memory_overcommit, "OOM604", "vllm-memory-overcommit", Memory, Error, Sometimes),
    rule!(seq_longer_than_context, "OOM701", "seq-longer-than-context", Framework, Warning, Always),
    rule!(bf16_unsupported_gpu, "OOM702", "bf16-unsupported-gpu", Framework, Error, Sometimes),
    rule!(verl_micro_batch_keys, "OOM801", "verl-micro-batch-keys", Framework, Error, None),
    rule!(verl_train_batch_below_mini, "OOM802", "verl-train-batch-below-mini", Framework, Error, None),
    rule!(verl_batch_divisibility, "OOM803", "verl-batch-divisibility", Framework, Error, None),
    rule!(verl_mini_batch_normalization, "OOM804", "verl-mini-batch-normalization", Framework, Error, None),
    rule!(verl_sequence_parallel, "OOM805", "verl-sequence-parallel", Framework, Error, None),
    rule!(verl_micro_batch_below_gpus, "OOM806", "verl-micro-batch-below-gpus", Framework, Error, None),
    rule!(verl_val_sampling_temperature, "OOM807", "verl-val-sampling-temperature", Framework, Error, None),
    rule!(verl_layered_summon_preload, "OOM808", "verl-layered-summon-preload", Framework, Error, Sometimes),
    rule!(openrlhf_colocate_vllm_gpus, "OOM811", "openrlhf-colocate-vllm-gpus", Framework, Error, None),
    rule!(openrlhf_sample_batches, "OOM812", "openrlhf-sample-batches", Framework, Error, None),
    rule!(openrlhf_group_estimator_samples, "OOM813", "openrlhf-group-estimator-samples", Framework, Error, None),
    rule!(openrlhf_packing_without_vllm, "OOM814", "openrlhf-packing-without-vllm", Framework, Error, None),
    rule!(openrlhf_async_with_sleep, "OOM815", "openrlhf-async-with-sleep", Framework, Error, None),
    rule!(openrlhf_requires_async, "OOM816", "openrlhf-requires-async", Framework, Error, None),
    rule!(openrlhf_eval_dataset_reward, "OOM817", "openrlhf-eval-dataset-reward", Framework, Error, None),
    rule!(openrlhf_dynamic_filtering, "OOM818", "openrlhf-dynamic-filtering", Framework, Error, None),
    rule!(openrlhf_vlm_constraints, "OOM819", "openrlhf-vlm-constraints", Framework, Error, None),
    rule!(openrlhf_colocated_group_sizes, "OOM820", "openrlhf-colocated-group-sizes", Framework, Error, None),
];

/// Finds a rule by code (`OOM101`, case-insensitive) or name (`yaml-syntax`).
pub fn find(key: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code.eq_ignore_ascii_case(key) || r.name == key)
}

/// Runs the rules called `names` (codes or names) on one file.
pub(crate) fn check_only(names: &[&str], ctx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in names.iter().filter_map(|n| find(n)) {
        let mut reporter = Reporter { rule, out: &mut out };
        (rule.check)(ctx, &mut reporter);
    }
    out
}

/// Runs every rule on one file.
pub(crate) fn check(ctx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in RULES {
        let mut reporter = Reporter { rule, out: &mut out };
        (rule.check)(ctx, &mut reporter);
    }
    out.sort_by_key(|d| (d.span.start, d.code));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_well_formed() {
        let mut codes = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for rule in RULES {
            assert!(codes.insert(rule.code), "duplicate code {}", rule.code);
            assert!(names.insert(rule.name), "duplicate name {}", rule.name);
            assert!(rule.code.len() == 6 && rule.code.starts_with("OOM"), "{}", rule.code);
            assert!(
                rule.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                rule.name
            );
            let doc = rule.doc();
            for section in ["## What it does", "## Why", "## Example", "## Fix", "## Source"] {
                assert!(doc.contains(section), "{} lacks `{section}` in its doc", rule.name);
            }
        }
        let sorted: Vec<_> = RULES.iter().map(|r| r.code).collect();
        let mut expected = sorted.clone();
        expected.sort();
        assert_eq!(sorted, expected, "keep the registry in code order");
    }

    /// Rules about the text itself: syntax, duplicate keys, schema findings, suppression
    /// comments and unreadable bytes. They may read the document; every other rule reads
    /// the plan (and the text only to quote a value or place an edit).
    const TEXT_RULES: &[&str] = &[
        "yaml-syntax",
        "duplicate-key",
        "unknown-key",
        "invalid-value",
        "removed-key",
        "unreadable-input",
        "unused-suppression",
    ];

    /// Rules about meaning that still read the document, and why.
    const NOT_YET_ON_THE_PLAN: &[(&str, &str)] = &[];

    /// What reading the document looks like in a rule's code.
    const DOCUMENT_ACCESS: &[&str] =
        &["ctx.document", "ctx.schema", "Reader", "root_mapping", "entry_path", "program_of", "syntax::"];

    /// A source without its comments.
    fn code(source: &str) -> String {
        source.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
    }

    /// Syntax types that are values, not the document: the typed value a fix writes and
    /// the language that spells it (the plan carries it).
    const VALUES: &[&str] = &["syntax::Literal", "syntax::Language"];

    fn reads_the_document(source: &str) -> Option<&'static str> {
        let code = VALUES.iter().fold(code(source), |code, value| code.replace(value, ""));
        DOCUMENT_ACCESS.iter().copied().find(|token| code.contains(token))
    }

    #[test]
    fn only_text_rules_read_the_document() {
        let mut offenders = Vec::new();
        let mut readers = 0;
        for rule in RULES {
            let allowed = TEXT_RULES.contains(&rule.name) || NOT_YET_ON_THE_PLAN.iter().any(|(n, _)| *n == rule.name);
            match (reads_the_document(rule.source), allowed) {
                (Some(token), false) => offenders.push(format!("{} (`{token}`)", rule.name)),
                (None, true) if !TEXT_RULES.contains(&rule.name) => {
                    offenders.push(format!("{} reads the plan now: take it off NOT_YET_ON_THE_PLAN", rule.name))
                }
                (Some(_), _) => readers += 1,
                (None, _) => {}
            }
        }
        if let Some(token) = reads_the_document(include_str!("support.rs")) {
            offenders.push(format!("rules/support.rs (`{token}`)"));
        }
        assert!(offenders.is_empty(), "rules about meaning read the plan, not the document:\n{}", offenders.join("\n"));
        assert!(readers <= TEXT_RULES.len() + NOT_YET_ON_THE_PLAN.len());
    }

    /// Without a plan (a file that does not parse) a rule about meaning has nothing to
    /// read: a partial tree would report keys as missing that follow the syntax error.
    #[test]
    fn a_file_that_does_not_parse_gets_only_syntax_findings() {
        let text = "# oomlint: format=trl-sft\nmodel_name_or_path: Qwen/Qwen2.5-0.5B\nload_in_4bit: true\noutput_dir: [out\nuse_peft: true\ndtype: bfloat16\n";
        let options = crate::analysis::Options::default();
        let analysis = crate::analysis::analyze_text(std::path::Path::new("sft.yaml"), text.to_string(), &options);
        let rules: Vec<&str> = analysis.diagnostics.iter().map(|d| d.rule).collect();
        assert_eq!(rules, ["yaml-syntax"]);
    }

    #[test]
    fn the_document_check_can_fail() {
        assert_eq!(reads_the_document("let n = 1; // not ctx.document"), None);
        assert_eq!(reads_the_document("let Some(r) = Reader::new(root) else { return };"), Some("Reader"));
        assert_eq!(reads_the_document("for p in &ctx.document.problems {}"), Some("ctx.document"));
        assert_eq!(reads_the_document("use crate::syntax::Literal;"), None);
        assert_eq!(reads_the_document("use crate::syntax::{Entry, Literal};"), Some("syntax::"));
    }
}
