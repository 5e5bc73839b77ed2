//! The settings of a run's config that the vLLM and Ray advice names, each with its key as
//! the config spells it and, where the config writes it, the bytes an edit replaces.
//!
//! Read from the plan: verl's keys (`actor_rollout_ref.rollout.gpu_memory_utilization`, …),
//! OpenRLHF's flags (both spellings, by release), TRL's `GRPOConfig` fields and Unsloth's loader
//! arguments.

use crate::plan::{Framework, Origin, Plan, Sourced, VllmMode};
use crate::span::Span;

/// One setting: its key, its value when known, and where the config writes the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    /// The key as the config writes it, else as the framework spells it.
    pub key: String,
    /// The value: written, or the framework's default; `None` when computed at run time.
    pub value: Option<T>,
    /// The value's bytes in the config, when written there (edits replace them).
    pub span: Option<Span>,
}

/// What the advice for a vLLM start-up failure or a Ray OOM kill can name in the config.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSettings {
    pub gpu_memory_utilization: Option<Setting<f64>>,
    pub max_model_len: Option<Setting<u64>>,
    pub max_num_batched_tokens: Option<Setting<u64>>,
    /// `rollout.n`, `n_samples_per_prompt`, `num_generations`.
    pub samples_per_prompt: Option<Setting<u64>>,
    pub prompt_length: Option<Setting<u64>>,
    pub response_length: Option<Setting<u64>>,
    /// CPU offloads (what, its setting): each moves GPU state into the node's RAM.
    pub offloads: Vec<(&'static str, Setting<bool>)>,
    /// vLLM shares the GPU with the trainer.
    pub colocated: bool,
    /// The framework, for the advice's wording.
    pub framework: Option<&'static str>,
}

fn setting<T: Copy>(text: &str, s: &Sourced<T>, canonical: &str) -> Setting<T> {
    setting_opt(text, &s.clone().map(Some), canonical)
}

fn setting_opt<T: Copy>(text: &str, s: &Sourced<Option<T>>, canonical: &str) -> Setting<T> {
    let (key, span, value) = match &s.origin {
        Origin::File { key, value } => {
            (text.get(key.start..key.end).unwrap_or(canonical).to_owned(), Some(*value), s.value)
        }
        Origin::Unknown { .. } => (canonical.to_owned(), None, None),
        _ => (canonical.to_owned(), None, s.value),
    };
    // A Hydra override's key span covers `key=value`; `+`/`++` only add the key.
    let key = key.split('=').next().unwrap_or(&key).trim_start_matches('+').to_owned();
    Setting { key, value, span }
}

impl RunSettings {
    /// The settings of `plan`, read from `text` (the config the plan was read from); `None`
    /// when the run generates with no vLLM engine the advice could name.
    pub fn from_plan(plan: &Plan, text: &str) -> Option<RunSettings> {
        let rl = plan.rl.as_ref();
        let vllm = rl.and_then(|r| r.vllm.as_ref());
        let mut s = RunSettings {
            colocated: vllm.is_some_and(|v| v.mode.value == VllmMode::Colocate),
            ..RunSettings::default()
        };
        match plan.framework {
            Framework::Verl => {
                let v = plan.verl.as_ref()?;
                let rollout = |k: &str| format!("actor_rollout_ref.rollout.{k}");
                s.framework = Some("verl");
                s.gpu_memory_utilization =
                    Some(setting_opt(text, &v.gpu_memory_utilization, &rollout("gpu_memory_utilization")));
                s.max_model_len = Some(setting_opt(text, &v.max_model_len, &rollout("max_model_len")));
                s.max_num_batched_tokens =
                    Some(setting_opt(text, &v.max_num_batched_tokens, &rollout("max_num_batched_tokens")));
                s.samples_per_prompt = Some(setting_opt(text, &v.rollout_n, &rollout("n")));
                s.prompt_length = Some(setting_opt(text, &v.max_prompt_length, "data.max_prompt_length"));
                s.response_length = Some(setting_opt(text, &v.max_response_length, "data.max_response_length"));
                let actor = "actor_rollout_ref.actor.fsdp_config";
                s.offloads = vec![
                    ("the actor's parameters", setting_opt(text, &v.param_offload, &format!("{actor}.param_offload"))),
                    (
                        "the actor's optimizer state",
                        setting_opt(text, &v.optimizer_offload, &format!("{actor}.optimizer_offload")),
                    ),
                    (
                        "the reference model's parameters",
                        setting_opt(text, &v.ref_param_offload, "actor_rollout_ref.ref.fsdp_config.param_offload"),
                    ),
                    (
                        "the critic's parameters",
                        setting_opt(text, &v.critic_offloads[0], "critic.model.fsdp_config.param_offload"),
                    ),
                    (
                        "the critic's optimizer state",
                        setting_opt(text, &v.critic_offloads[1], "critic.model.fsdp_config.optimizer_offload"),
                    ),
                ];
            }
            Framework::Openrlhf => {
                let o = plan.openrlhf.as_ref()?;
                let flag = |dotted: &str, old: &str| format!("--{}", if o.dotted { dotted } else { old });
                s.framework = Some("OpenRLHF");
                if let Some(v) = vllm {
                    let key = flag("vllm.gpu_memory_utilization", "vllm_gpu_memory_utilization");
                    s.gpu_memory_utilization = Some(setting(text, &v.gpu_memory_utilization, &key));
                }
                s.samples_per_prompt = Some(setting_opt(
                    text,
                    &o.n_samples.value,
                    &flag("rollout.n_samples_per_prompt", "n_samples_per_prompt"),
                ));
                if let Some(r) = rl {
                    s.response_length = Some(setting(
                        text,
                        &r.max_completion_length,
                        &flag("rollout.max_new_tokens", "generate_max_len"),
                    ));
                    if !o.dotted {
                        s.prompt_length = r.max_prompt_length.as_ref().map(|p| setting(text, p, "--prompt_max_len"));
                    }
                }
                if let Some(sharding) = &plan.sharding {
                    let on = matches!(sharding.value, crate::plan::Sharding::Zero { offload_optimizer: true, .. });
                    let key = flag("ds.adam_offload", "adam_offload");
                    s.offloads = vec![("the actor's Adam state", Setting { key, value: Some(on), span: None })];
                }
            }
            Framework::Trl | Framework::Unsloth | Framework::Axolotl => {
                let v = vllm?;
                let unsloth = plan.framework == Framework::Unsloth || v.fraction_of_free;
                s.framework = Some(if unsloth { "Unsloth" } else { "TRL" });
                let key = match plan.framework {
                    Framework::Axolotl => "vllm.gpu_memory_utilization",
                    _ if unsloth => "gpu_memory_utilization",
                    _ => "vllm_gpu_memory_utilization",
                };
                s.gpu_memory_utilization = Some(setting(text, &v.gpu_memory_utilization, key));
                if let Some(r) = rl {
                    s.samples_per_prompt = Some(setting(text, &r.num_generations, "num_generations"));
                    s.response_length = Some(setting(text, &r.max_completion_length, "max_completion_length"));
                    s.prompt_length = r.max_prompt_length.as_ref().map(|p| setting(text, p, "max_prompt_length"));
                }
                if unsloth {
                    s.max_model_len = plan.max_seq_length.as_ref().map(|m| setting(text, m, "max_seq_length"));
                }
            }
            _ => return None,
        }
        Some(s)
    }

    /// The length vLLM is started with: `max_model_len` when set, else prompt + response.
    pub(crate) fn engine_length(&self) -> Option<u64> {
        self.max_model_len.as_ref().and_then(|m| m.value).or_else(|| {
            let p = self.prompt_length.as_ref()?.value?;
            let r = self.response_length.as_ref()?.value?;
            Some(p + r)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze_text, Options};
    use std::path::Path;

    fn settings(name: &str, text: &str) -> RunSettings {
        let analysis = analyze_text(Path::new(name), text.to_owned(), &Options::default());
        RunSettings::from_plan(analysis.plan.as_deref().expect("plan"), text).expect("settings")
    }

    #[test]
    fn verl_keys_with_their_spans() {
        let text = "python3 -m verl.trainer.main_ppo \\\n  actor_rollout_ref.rollout.name=vllm \\\n  actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \\\n  data.max_prompt_length=1024 data.max_response_length=3072 \\\n  actor_rollout_ref.rollout.n=8 actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct\n";
        let s = settings("run.sh", text);
        let util = s.gpu_memory_utilization.clone().unwrap();
        assert_eq!(util.key, "actor_rollout_ref.rollout.gpu_memory_utilization");
        assert_eq!(util.value, Some(0.6));
        let span = util.span.unwrap();
        assert_eq!(&text[span.start..span.end], "0.6");
        assert_eq!(s.engine_length(), Some(4096));
        assert_eq!(s.samples_per_prompt.unwrap().value, Some(8));
        assert!(s.colocated);
        assert_eq!(s.offloads[0].1.key, "actor_rollout_ref.actor.fsdp_config.param_offload");
        assert_eq!(s.offloads[0].1.value, Some(false));
    }

    #[test]
    fn trl_grpo_keys() {
        let text = "model_name_or_path: Qwen/Qwen2.5-1.5B\nuse_vllm: true\nvllm_gpu_memory_utilization: 0.5\nnum_generations: 8\nmax_completion_length: 2048\nmax_prompt_length: 512\nbeta: 0.0\n";
        let s = settings("grpo.yaml", text);
        assert_eq!(s.framework, Some("TRL"));
        let util = s.gpu_memory_utilization.clone().unwrap();
        assert_eq!((util.key.as_str(), util.value), ("vllm_gpu_memory_utilization", Some(0.5)));
        assert_eq!(s.engine_length(), Some(2560));
    }
}
