//! OpenRLHF (`python -m openrlhf.cli.train_ppo_ray --flags`, also behind `ray job submit -- …`,
//! and `deepspeed --module openrlhf.cli.train_sft|train_dpo|train_rm --flags`): the argparse
//! flags of the trainer, read into the plan.
//!
//! The flags and their defaults are `openrlhf/flags.tsv`, generated from an OpenRLHF checkout by
//! `schema/tools/openrlhf_flags.py` (the `parser.add_argument` calls of `openrlhf/cli/<program>.py`).
//! Two spellings, by release: the dotted groups of the newer releases (`--actor.model_name_or_path`,
//! `--train.micro_batch_size`, `--ds.zero_stage`; commit 3c3be62) and the underscore flags of
//! v0.8.0 and before (`--pretrain`, `--micro_train_batch_size`, `--zero_stage`). A script is read
//! in the spelling it writes: underscore flags when it writes no dotted flag and some flag of the
//! old table, the dotted ones otherwise (the newest release without a pin). A flag whose value
//! the script computes at run time leaves its field unknown, never the default.

use super::axolotl::model_ref;
use super::hf_names::lora_targets;
use crate::plan::{
    Attention, Checkpointing, Dtype, Framework, LoraPlan, LossImpl, Method, OpenrlhfFlag, OpenrlhfSettings, Optimizer,
    Origin, Plan, Precision, RlAlgorithm, RlPlan, Sharding, Sourced, VllmMode, VllmPlan,
};
use crate::span::Span;
use crate::syntax::shell::Word;
use crate::syntax::{Entry, Mapping, Node, Scalar, ScalarKind, ScalarStyle, Value};

/// OpenRLHF's flags: one `program \t field \t new flag \t default \t old flag \t default` row per
/// field (see the module doc).
const FLAGS: &str = include_str!("openrlhf/flags.tsv");

/// The key under which the module the command runs is kept.
const MODULE: &str = "-m";
/// The prefix of the key of a flag whose value the script computes at run time.
const COMPUTED: char = '?';
/// Flags that take two numbers (`nargs=2` in `train_ppo_ray.py`).
const PAIRS: [&str; 1] = ["algo.dynamic_filtering_range"];

/// The trainers oomlint reads, by module name.
pub(crate) fn is_trainer(module: &str) -> bool {
    program(module).is_some()
}

fn program(module: &str) -> Option<&'static str> {
    PROGRAMS.into_iter().find(|p| module.strip_prefix("openrlhf.cli.") == Some(*p))
}

/// The flags of an OpenRLHF command line as a flat mapping, keyed by the flag without its
/// dashes, in order: `--flag value`, `--flag=value`, and `--flag` alone (a `store_true`) as
/// `true`. A value the script computes is kept under `?flag`, a word in the place of a flag
/// that the script computes under `?*`.
pub(crate) fn flags(module: &Word, words: &[Word]) -> Mapping {
    let mut out = Mapping::default();
    let mut push = |key: String, key_span: Span, text: String, span: Span| {
        let scalar = Scalar { text, style: ScalarStyle::Plain, kind: ScalarKind::Str };
        out.entries.push(Entry { key, key_span, value: Node { span, value: Value::Scalar(scalar) } });
    };
    push(MODULE.into(), module.span, module.text.clone().unwrap_or_default(), module.span);
    let mut i = 0;
    while let Some(w) = words.get(i) {
        i += 1;
        let Some(text) = w.text.as_deref() else {
            // `${ARGS[@]}`: flags the script computes, any of them.
            push(format!("{COMPUTED}*"), w.span, String::new(), w.span);
            continue;
        };
        let Some(name) = text.strip_prefix("--") else { continue };
        if let Some((k, v)) = name.split_once('=') {
            let start = w.span.start + 2 + k.len() + 1;
            push(k.to_string(), w.span, v.to_string(), Span::new(start.min(w.span.end), w.span.end));
            continue;
        }
        match words.get(i) {
            // A two-number flag (`nargs=2`) keeps both words, space-separated, over both spans.
            Some(next) if PAIRS.contains(&name) => {
                let second = words.get(i + 1).filter(|w| !w.text.as_deref().is_some_and(|t| t.starts_with("--")));
                i += 1 + usize::from(second.is_some());
                let end = second.map_or(next.span.end, |w| w.span.end);
                match (&next.text, second.map(|w| &w.text)) {
                    (Some(a), Some(Some(b))) => {
                        push(name.to_string(), w.span, format!("{a} {b}"), Span::new(next.span.start, end))
                    }
                    _ => push(format!("{COMPUTED}{name}"), w.span, String::new(), Span::new(next.span.start, end)),
                }
            }
            Some(next) if !next.text.as_deref().is_some_and(|t| t.starts_with("--")) => {
                i += 1;
                match &next.text {
                    Some(v) => push(name.to_string(), w.span, v.clone(), next.span),
                    None => push(format!("{COMPUTED}{name}"), w.span, String::new(), next.span),
                }
            }
            _ => push(name.to_string(), w.span, "true".into(), w.span),
        }
    }
    out
}

/// The program a command line read by [`flags`] runs and whether it writes the dotted
/// spelling (as the plan reads it).
pub(crate) fn spelling(flags: &Mapping) -> Option<(&'static str, bool)> {
    Command::read(flags).map(|c| (c.program, c.dotted))
}

/// The flags of `program` in the dotted or the underscore spelling: (the field oomlint reads,
/// the flag, its argparse default as the table writes it: `None`, `False`, `2048`), in the
/// table's order.
pub(crate) fn flag_defaults(
    program: &str,
    dotted: bool,
) -> impl Iterator<Item = (&'static str, &'static str, &'static str)> + '_ {
    FLAGS.lines().filter_map(move |l| {
        let cols: Vec<&'static str> = l.strip_prefix(program)?.strip_prefix('\t')?.split('\t').collect();
        let (flag, default) = if dotted { (*cols.get(1)?, *cols.get(2)?) } else { (*cols.get(3)?, *cols.get(4)?) };
        (flag != "-").then_some((cols[0], flag, default))
    })
}

/// The programs of the table, PPO's first.
pub(crate) const PROGRAMS: [&str; 4] = ["train_ppo_ray", "train_sft", "train_dpo", "train_rm"];

/// The table's release names: (the dotted release, the underscore release).
pub(crate) fn releases() -> (&'static str, &'static str) {
    let head = FLAGS.lines().next().and_then(|l| l.strip_prefix("# OpenRLHF ")).unwrap_or("");
    let new = head.split(' ').next().unwrap_or("");
    let old = head.split(" and ").nth(1).and_then(|r| r.split(' ').next()).unwrap_or("");
    (new, old)
}

/// An OpenRLHF command line: the program, the spelling and the flags.
struct Command<'f> {
    program: &'static str,
    dotted: bool,
    flags: &'f Mapping,
    command: Span,
}

impl<'f> Command<'f> {
    fn read(flags: &'f Mapping) -> Option<Command<'f>> {
        let module = flags.entries.iter().find(|e| e.key == MODULE)?;
        let program = program(&module.value.as_scalar()?.text)?;
        let names = |k: &str| k.trim_start_matches(COMPUTED).to_string();
        let written: Vec<String> = flags.entries.iter().filter(|e| e.key != MODULE).map(|e| names(&e.key)).collect();
        let old = FLAGS
            .lines()
            .filter_map(|l| l.strip_prefix(program)?.strip_prefix('\t'))
            .filter_map(|l| l.split('\t').nth(3))
            .any(|flag| flag != "-" && written.iter().any(|w| w == flag));
        let dotted = written.iter().any(|w| w.contains('.')) || !old;
        Some(Command { program, dotted, flags, command: module.key_span })
    }

    /// The flag of `field` in this spelling and its default, if the release has it.
    fn row(&self, field: &str) -> Option<(&'static str, &'static str)> {
        let row = FLAGS
            .lines()
            .find_map(|l| l.strip_prefix(self.program)?.strip_prefix('\t')?.strip_prefix(field)?.strip_prefix('\t'))?;
        let cols: Vec<&'static str> = row.split('\t').collect();
        let (flag, default) = if self.dotted { (cols[0], cols[1]) } else { (cols[2], cols[3]) };
        (flag != "-").then_some((flag, default))
    }

    /// The value of `field` parsed as `T`: the script's flag (its last occurrence), else the
    /// default; None inside for `None` or a value that does not parse.
    fn get<T>(&self, field: &str, parse: impl Fn(&str) -> Option<T>) -> Option<OpenrlhfFlag<T>> {
        let (flag, default) = self.row(field)?;
        let computed = format!("{COMPUTED}{flag}");
        let set = self.flags.entries.iter().rev().find(|e| e.key == flag || e.key == computed);
        let value = match set {
            Some(e) if e.key == computed => {
                Sourced::unknown(None, format!("`--{flag}` is computed when the script runs"))
            }
            Some(e) => {
                let text = e.value.as_scalar().map_or("", |s| s.text.as_str());
                Sourced { value: parse(unquote(text)), origin: Origin::File { key: e.key_span, value: e.value.span } }
            }
            None if self.flags.entries.iter().any(|e| e.key == format!("{COMPUTED}*")) => {
                Sourced::unknown(None, format!("`--{flag}` may be among the flags the script computes at run time"))
            }
            None => {
                let (new, old) = releases();
                let release = if self.dotted { new } else { old };
                let of = format!("OpenRLHF {release} openrlhf/cli/{}.py --{flag} default {default}", self.program);
                Sourced::default_of((default != "None").then(|| parse(default)).flatten(), of)
            }
        };
        Some(OpenrlhfFlag { flag, value })
    }

    fn int(&self, field: &str) -> Option<OpenrlhfFlag<u64>> {
        self.get(field, |t| t.parse().ok())
    }

    fn float(&self, field: &str) -> Option<OpenrlhfFlag<f64>> {
        self.get(field, |t| t.parse().ok())
    }

    fn bool(&self, field: &str) -> Option<OpenrlhfFlag<bool>> {
        self.get(field, super::read::cli_bool)
    }

    fn string(&self, field: &str) -> Option<OpenrlhfFlag<String>> {
        self.get(field, |t| Some(t.to_string()))
    }

    /// A flag absent from the release reads as its argparse default would: missing.
    fn missing<T>(&self, field: &str) -> OpenrlhfFlag<T> {
        OpenrlhfFlag { flag: "", value: Sourced::unknown(None, format!("no {field} flag in this OpenRLHF release")) }
    }
}

fn unquote(text: &str) -> &str {
    let t = text.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    t
}

/// A value that is known (set or defaulted), not computed by the script.
fn known<T>(flag: Option<OpenrlhfFlag<T>>) -> Option<Sourced<T>> {
    let Sourced { value, origin } = flag?.value;
    value.map(|value| Sourced { value, origin })
}

/// The plan of an OpenRLHF command line, read by [`flags`].
pub(crate) fn plan(flags: &Mapping) -> Plan {
    let mut plan = Plan::new(Framework::Openrlhf);
    let Some(c) = Command::read(flags) else { return plan };
    plan.command = Some(c.program.into());
    plan.model = known(c.string("model")).map(|m| m.map(|t| model_ref(&t)));
    plan.micro_batch_size = known(c.int("micro_batch"));
    plan.global_batch_size = known(c.int("batch"));
    plan.packing = known(c.bool("packing"));
    plan.gradient_checkpointing =
        known(c.bool("checkpointing")).map(|s| s.map(|on| if on { Checkpointing::Full } else { Checkpointing::None }));
    // DeepSpeed's Adam (`FusedAdam`, `DeepSpeedCPUAdam` with `--adam_offload`):
    // `openrlhf/utils/deepspeed/deepspeed.py` `create_optimizer`.
    plan.optimizer = Some(Sourced::default_of(Optimizer::AdamW, "OpenRLHF DeepSpeed Adam"));
    plan.precision = if c.dotted {
        known(c.string("param_dtype")).and_then(|d| {
            let dtype = match d.value.as_str() {
                "bf16" => Dtype::Bf16,
                "fp16" => Dtype::F16,
                _ => return None,
            };
            Some(d.map(|_| Precision::Mixed(dtype)))
        })
    } else {
        known(c.bool("bf16")).filter(|b| b.value).map(|b| b.map(|_| Precision::Mixed(Dtype::Bf16)))
    };
    if let (Some(stage), Some(offload)) = (known(c.int("zero_stage")), known(c.bool("adam_offload"))) {
        // `get_train_ds_config` (`openrlhf/utils/deepspeed/deepspeed_utils.py`): the optimizer on
        // the CPU with `--adam_offload`, the parameters never.
        let sharding =
            Sharding::Zero { stage: stage.value.min(3) as u8, offload_optimizer: offload.value, offload_params: false };
        plan.sharding = Some(stage.map(|_| sharding));
    }
    if c.dotted {
        plan.attention =
            Some(Sourced::default_of(Attention::Flash, "OpenRLHF --ds.attn_implementation flash_attention_2"));
    }
    match known(c.int("lora_rank")).filter(|r| r.value > 0) {
        Some(rank) => {
            plan.method = Some(Sourced::derived(Method::Lora, "LoRA rank > 0"));
            let alpha = known(c.float("lora_alpha")).unwrap_or_else(|| Sourced::unknown(16.0, "LoRA alpha unknown"));
            let targets =
                Sourced::default_of(lora_targets(&["all-linear".into()]), "OpenRLHF lora target_modules all-linear");
            let dropout = Sourced::default_of(0.0, "OpenRLHF lora dropout 0");
            plan.lora = Some(LoraPlan { rank, alpha, dropout, targets });
        }
        None => plan.method = Some(Sourced::derived(Method::Full, "LoRA rank 0")),
    }
    match c.program {
        "train_ppo_ray" => ppo(&c, &mut plan),
        "train_dpo" => {
            plan.max_seq_length = known(c.int("max_len"));
            plan.algorithm = Some(Sourced::derived(RlAlgorithm::Dpo, "openrlhf.cli.train_dpo"));
            // `train_dpo.py` `train`: the reference model, on the GPU unless `--ref.offload`.
            let offload = known(c.bool("ref_offload")).is_some_and(|o| o.value);
            plan.reference_model =
                Some(Sourced::derived(!offload, "train_dpo: a reference model (unless ref offload)"));
            plan.reference_forward = Some(Sourced::derived(true, "train_dpo: the reference forward each step"));
        }
        "train_rm" => {
            plan.max_seq_length = known(c.int("max_len"));
            plan.algorithm = Some(Sourced::derived(RlAlgorithm::Reward, "openrlhf.cli.train_rm"));
        }
        _ => {
            plan.max_seq_length = known(c.int("max_len"));
            plan.algorithm = Some(Sourced::derived(RlAlgorithm::Sft, "openrlhf.cli.train_sft"));
        }
    }
    // Ring attention splits each packed sequence over `ring_attn_size` GPUs
    // (`openrlhf/models/ring_attn_utils.py`): one GPU holds its share of the tokens.
    let ring = known(c.int("ring_attn_size")).filter(|r| r.value > 1);
    if let (Some(ring), Some(seq)) = (ring, plan.max_seq_length.as_ref()) {
        let share = seq.value.div_ceil(ring.value);
        plan.max_seq_length =
            Some(Sourced::derived(share, format!("{} tokens split over ring_attn_size {}", seq.value, ring.value)));
    }
    plan
}

fn ppo(c: &Command, plan: &mut Plan) {
    let settings = OpenrlhfSettings {
        command: c.command,
        dotted: c.dotted,
        actor_nodes: c.int("actor_nodes").unwrap_or_else(|| c.missing("actor nodes")),
        actor_gpus: c.int("actor_gpus").unwrap_or_else(|| c.missing("actor GPUs")),
        vllm_engines: c.int("vllm_engines").unwrap_or_else(|| c.missing("vLLM engines")),
        vllm_tp: c.int("vllm_tp").unwrap_or_else(|| c.missing("vLLM tensor parallel")),
        colocate_all: c.bool("colocate_all").unwrap_or_else(|| c.missing("colocate all")),
        async_train: c.bool("async").unwrap_or_else(|| c.missing("async")),
        packing: c.bool("packing").unwrap_or_else(|| c.missing("packing")),
        n_samples: c.int("n_samples").unwrap_or_else(|| c.missing("samples per prompt")),
        estimator: c.string("estimator").unwrap_or_else(|| c.missing("advantage estimator")),
        rollout_batch: c.int("rollout_batch").unwrap_or_else(|| c.missing("rollout batch")),
        rollout_micro: c.int("rollout_micro").unwrap_or_else(|| c.missing("rollout micro batch")),
        ring_attn_size: c.int("ring_attn_size").unwrap_or_else(|| c.missing("ring attention")),
        ds_tp: c.dotted.then(|| c.int("ds_tp")).flatten(),
        vllm_sleep: c.bool("vllm_sleep").unwrap_or_else(|| c.missing("vLLM sleep")),
        partial_rollout: c.bool("partial_rollout").unwrap_or_else(|| c.missing("partial rollout")),
        generate_batch: c.int("generate_batch").unwrap_or_else(|| c.missing("vLLM generate batch")),
        eval_dataset: c.string("eval_dataset").unwrap_or_else(|| c.missing("eval dataset")),
        remote_rm: c.string("remote_rm").unwrap_or_else(|| c.missing("remote reward")),
        agent: c.string("agent").unwrap_or_else(|| c.missing("agent function")),
        dynamic_filtering: c.bool("dynamic_filtering").unwrap_or_else(|| c.missing("dynamic filtering")),
        max_images: c.int("max_images").unwrap_or_else(|| c.missing("images per prompt")),
        dynamic_filtering_range: c
            .get("dynamic_filtering_range", |t| {
                // Written `LOW HIGH`; argparse's default reads `(0, 1)`.
                let (low, high) = t.trim_matches(['(', ')']).split_once([' ', ','])?;
                Some((low.trim().parse().ok()?, high.trim().parse().ok()?))
            })
            .unwrap_or_else(|| c.missing("dynamic filtering range")),
        ref_nodes: c.int("ref_nodes").unwrap_or_else(|| c.missing("reference nodes")),
        ref_gpus: c.int("ref_gpus").unwrap_or_else(|| c.missing("reference GPUs")),
        critic_nodes: c.int("critic_nodes").unwrap_or_else(|| c.missing("critic nodes")),
        critic_gpus: c.int("critic_gpus").unwrap_or_else(|| c.missing("critic GPUs")),
        reward_nodes: c.int("reward_nodes").unwrap_or_else(|| c.missing("reward nodes")),
        reward_gpus: c.int("reward_gpus").unwrap_or_else(|| c.missing("reward GPUs")),
        colocate_actor_ref: c.bool("colocate_actor_ref").unwrap_or_else(|| c.missing("colocate actor and reference")),
        colocate_critic_reward: c
            .bool("colocate_critic_reward")
            .unwrap_or_else(|| c.missing("colocate critic and reward")),
        init_kl: c.float("init_kl").unwrap_or_else(|| c.missing("initial KL coefficient")),
    };
    // The estimate is for one of the actor's GPUs.
    plan.devices = known(Some(settings.actor_gpus.clone()));
    plan.num_nodes = known(Some(settings.actor_nodes.clone()));
    let world = match (plan.devices.as_ref(), plan.num_nodes.as_ref()) {
        (Some(g), Some(n)) => Some(g.value * n.value),
        _ => None,
    };
    // `DeepspeedStrategy` (`openrlhf/utils/deepspeed/deepspeed.py` `setup_distributed`):
    // `accumulated_gradient = train_batch_size * ring_attn_size * ds_tensor_parallel_size //
    // micro_train_batch_size // world_size`.
    let ring = settings.ring_attn_size.value.value.unwrap_or(1).max(1);
    let tp = settings.ds_tp.as_ref().and_then(|t| t.value.value).unwrap_or(1).max(1);
    if let (Some(batch), Some(micro), Some(world)) = (&plan.global_batch_size, &plan.micro_batch_size, world) {
        if micro.value > 0 && world > 0 {
            let ga = batch.value * ring * tp / micro.value / world;
            let from = "train batch × ring attention × DeepSpeed TP ÷ micro batch ÷ actor GPUs";
            plan.gradient_accumulation = Some(Sourced::derived(ga.max(1), from));
        }
    }
    let (prompt, completion) = if c.dotted {
        let total = known(c.int("max_len"));
        plan.max_seq_length = total.clone();
        // `--train.dynamic_batch_enable` packs micro batches up to `max_tokens_per_gpu × ring
        // attention × DeepSpeed TP` tokens (`openrlhf/utils/seqlen_balancing.py`
        // `get_minimum_num_micro_batch_size`); a longer sample forms its own micro batch.
        if known(c.bool("dynamic_batch")).is_some_and(|d| d.value) {
            if let (Some(budget), Some(t)) = (known(c.int("max_tokens_per_gpu")), &total) {
                let tokens = (budget.value * ring * tp).max(t.value);
                let from = "dynamic batch: max_tokens_per_gpu × ring_attn_size × DeepSpeed TP, or one longest sample";
                plan.max_seq_length = Some(Sourced::derived(tokens, from));
                plan.micro_batch_size = Some(Sourced::derived(1, "dynamic batch: one packed sequence per micro batch"));
                plan.packing = Some(Sourced::derived(true, "dynamic batch turns packing_samples on"));
            }
        }
        let new = known(c.int("max_new_tokens"));
        match (total, new) {
            (Some(t), Some(n)) => {
                let p = t.value.saturating_sub(n.value);
                (Some(Sourced::derived(p, "data.max_len − rollout.max_new_tokens")), Some(n))
            }
            (Some(t), None) => (
                Some(Sourced::unknown(
                    0,
                    "rollout.max_new_tokens unset: the prompt's share of data.max_len is not known",
                )),
                Some(t),
            ),
            _ => (None, None),
        }
    } else {
        let prompt = known(c.int("prompt_max_len"));
        let generate = known(c.int("max_new_tokens"));
        plan.max_seq_length = match (known(c.int("max_len")), &prompt, &generate) {
            (Some(m), _, _) => Some(m),
            (None, Some(p), Some(g)) => Some(Sourced::derived(p.value + g.value, "prompt_max_len + generate_max_len")),
            _ => None,
        };
        (prompt, generate)
    };
    plan.algorithm = Some(Sourced::derived(RlAlgorithm::Grpo, "OpenRLHF PPO trainer (policy-gradient actor)"));
    plan.loss = Some(Sourced::derived(
        LossImpl::Fp32LogProbs,
        "OpenRLHF actor: fp32 logits of the whole sequence through flash-attn's cross_entropy_loss (models/utils.py log_probs_from_logits)",
    ));
    let flag_on = |f: &str| known(c.bool(f)).is_some_and(|b| b.value);
    let colocate_all = settings.colocate_all.value.value == Some(true);
    let kl = known(c.float("init_kl")).unwrap_or_else(|| Sourced::unknown(0.0, "the KL coefficient is not known"));
    // `train`: a reference model when `init_kl_coef > 0`, on the actor's GPUs when colocated.
    let reference = kl.value > 0.0 && (colocate_all || flag_on("colocate_actor_ref")) && !flag_on("ref_offload");
    plan.reference_model =
        Some(Sourced::derived(reference, "init KL coefficient > 0 with the reference colocated with the actor"));
    let engines = settings.vllm_engines.value.value.filter(|e| *e > 0);
    let async_train = settings.async_train.value.value == Some(true);
    let vllm = engines.map(|_| {
        // `train`: the engines share the actor's placement group only with `colocate_all` and not async.
        let mode = if colocate_all && !async_train {
            Sourced::derived(VllmMode::Colocate, "vLLM engines in the actor's placement group (colocate all)")
        } else {
            Sourced::derived(VllmMode::Server, "vLLM engines on their own GPUs")
        };
        VllmPlan {
            mode,
            gpu_memory_utilization: known(c.float("vllm_memory"))
                .unwrap_or_else(|| Sourced::unknown(0.95, "the vLLM memory fraction is computed at run time")),
            fraction_of_free: false,
            enable_sleep_mode: known(c.bool("vllm_sleep"))
                .unwrap_or_else(|| Sourced::unknown(false, "vLLM sleep mode is computed at run time")),
        }
    });
    let n =
        known(Some(settings.n_samples.clone())).unwrap_or_else(|| Sourced::unknown(1, "samples per prompt unknown"));
    plan.rl = match (prompt, completion) {
        (Some(p), Some(r)) => Some(RlPlan {
            num_generations: n,
            max_prompt_length: Some(p.clone()),
            prompt_length: p,
            max_completion_length: r,
            generation_batch_size: None,
            steps_per_generation: None,
            beta: kl,
            vllm,
        }),
        _ => None,
    };
    plan.openrlhf = Some(settings);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        let mut at = 0;
        line.split(' ')
            .map(|w| {
                let span = Span::new(at, at + w.len());
                at += w.len() + 1;
                Word { text: (!w.contains('$')).then(|| w.to_string()), span }
            })
            .collect()
    }

    fn plan_of(module: &str, line: &str) -> Plan {
        let module = Word { text: Some(module.into()), span: Span::new(0, 0) };
        plan(&flags(&module, &words(line)))
    }

    #[test]
    fn the_table_has_both_spellings_for_every_program() {
        let rows: Vec<_> = FLAGS.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(rows.iter().all(|l| l.split('\t').count() == 6), "six columns");
        assert_eq!(releases(), ("3c3be62", "v0.8.0"));
        for program in ["train_ppo_ray", "train_sft", "train_dpo", "train_rm"] {
            assert!(rows.iter().any(|l| l.starts_with(&format!("{program}\tmodel\t"))), "{program}");
        }
    }

    #[test]
    fn the_ppo_actor_takes_fp32_log_probs_of_the_whole_sequence() {
        let ppo = plan_of("openrlhf.cli.train_ppo_ray", "--actor.model_name_or_path Qwen/Qwen2.5-7B-Instruct");
        assert_eq!(ppo.loss.map(|l| l.value), Some(LossImpl::Fp32LogProbs));
        let sft = plan_of("openrlhf.cli.train_sft", "--model.model_name_or_path Qwen/Qwen2.5-7B-Instruct");
        assert_ne!(sft.loss.map(|l| l.value), Some(LossImpl::Fp32LogProbs), "SFT has its own loss");
    }

    #[test]
    fn dotted_flags_read_with_their_origins_and_defaults() {
        let p = plan_of(
            "openrlhf.cli.train_ppo_ray",
            "--actor.model_name_or_path Qwen/Qwen2.5-7B --actor.num_gpus_per_node 4 --vllm.num_engines 4 \
             --train.colocate_all --vllm.gpu_memory_utilization 0.6 --ds.zero_stage 3 --ds.adam_offload \
             --rollout.n_samples_per_prompt $N --data.max_len 4096 --rollout.max_new_tokens 3072",
        );
        assert_eq!(p.model.as_ref().map(|m| m.value.name.as_str()), Some("Qwen/Qwen2.5-7B"));
        assert_eq!(p.devices.as_ref().map(|d| d.value), Some(4));
        assert!(p.devices.as_ref().is_some_and(|d| d.value_span().is_some()));
        assert_eq!(
            p.sharding.as_ref().map(|s| s.value),
            Some(Sharding::Zero { stage: 3, offload_optimizer: true, offload_params: false })
        );
        let rl = p.rl.as_ref().expect("rl");
        assert_eq!(rl.max_completion_length.value, 3072);
        assert_eq!(rl.prompt_length.value, 1024);
        assert!(matches!(rl.num_generations.origin, Origin::Unknown { .. }), "computed: {:?}", rl.num_generations);
        let vllm = rl.vllm.as_ref().expect("vllm");
        assert_eq!(vllm.mode.value, VllmMode::Colocate);
        assert_eq!(vllm.gpu_memory_utilization.value, 0.6);
        // Defaults: one node, micro batch 1, 128 per step → 128 ÷ 1 ÷ 4 GPUs.
        assert_eq!(p.micro_batch_size.as_ref().map(|m| m.value), Some(1));
        assert!(
            matches!(&p.micro_batch_size.as_ref().map(|m| &m.origin), Some(Origin::Default { of }) if of.contains("3c3be62"))
        );
        assert_eq!(p.gradient_accumulation.as_ref().map(|g| g.value), Some(32));
        // KL 0.01 by default, the reference colocated with the actor.
        assert_eq!(p.reference_model.as_ref().map(|r| r.value), Some(true));
    }

    #[test]
    fn underscore_flags_read_as_v0_8_0() {
        let p = plan_of(
            "openrlhf.cli.train_ppo_ray",
            "--pretrain meta-llama/Llama-3.1-8B --micro_train_batch_size 2 --zero_stage 3 --bf16 \
             --vllm_num_engines 2 --actor_num_gpus_per_node 8",
        );
        let s = p.openrlhf.as_ref().expect("settings");
        assert!(!s.dotted);
        assert_eq!(s.vllm_engines.flag, "vllm_num_engines");
        assert_eq!(p.micro_batch_size.as_ref().map(|m| m.value), Some(2));
        // prompt_max_len + generate_max_len (1024 each by default in v0.8.0).
        assert_eq!(p.max_seq_length.as_ref().map(|m| m.value), Some(2048));
        assert_eq!(p.precision.as_ref().map(|x| x.value), Some(Precision::Mixed(Dtype::Bf16)));
        assert_eq!(p.rl.as_ref().and_then(|r| r.vllm.as_ref()).map(|v| v.mode.value), Some(VllmMode::Server));
        let sft = plan_of("openrlhf.cli.train_sft", "--model.model_name_or_path x/y --ds.lora.rank 64");
        assert_eq!(sft.method.as_ref().map(|m| m.value), Some(Method::Lora));
        assert_eq!(sft.micro_batch_size.as_ref().map(|m| m.value), Some(8));
        assert_eq!(sft.max_seq_length.as_ref().map(|m| m.value), Some(2048));
    }

    #[test]
    fn flags_the_script_computes_leave_the_defaults_unknown() {
        let p = plan_of("openrlhf.cli.train_ppo_ray", "--actor.model_name_or_path x/y $ARGS");
        assert!(p.micro_batch_size.is_none(), "{:?}", p.micro_batch_size);
        let s = p.openrlhf.expect("settings");
        assert!(matches!(s.vllm_engines.value.origin, Origin::Unknown { .. }), "{:?}", s.vllm_engines);
    }

    #[test]
    fn a_two_number_flag_keeps_both_numbers_and_the_next_flag() {
        let p = plan_of(
            "openrlhf.cli.train_ppo_ray",
            "--algo.dynamic_filtering_range 0.2 0.8 --rollout.n_samples_per_prompt 4",
        );
        let s = p.openrlhf.expect("settings");
        assert_eq!(s.dynamic_filtering_range.value.value, Some((0.2, 0.8)));
        assert_eq!(s.n_samples.value.value, Some(4));
        let default =
            plan_of("openrlhf.cli.train_ppo_ray", "--rollout.n_samples_per_prompt 4").openrlhf.expect("settings");
        assert_eq!(default.dynamic_filtering_range.value.value, Some((0.0, 1.0)));
    }

    #[test]
    fn dynamic_batches_and_ring_attention_size_the_tokens_on_one_gpu() {
        let p = plan_of(
            "openrlhf.cli.train_ppo_ray",
            "--data.max_len 74240 --train.dynamic_batch_enable --train.max_tokens_per_gpu 16192 --ds.ring_attn_size 2",
        );
        // The longest sample (74240) exceeds the budget (16192 × 2): alone, split over 2 GPUs.
        assert_eq!(p.max_seq_length.as_ref().map(|m| m.value), Some(37120));
        assert_eq!(p.micro_batch_size.as_ref().map(|m| m.value), Some(1));
        let p = plan_of("openrlhf.cli.train_ppo_ray", "--data.max_len 4096 --train.dynamic_batch_enable");
        // The default budget, 16192 tokens, on one GPU.
        assert_eq!(p.max_seq_length.as_ref().map(|m| m.value), Some(16192));
    }
}
