//! Findings and advice for vLLM's start-up failures and Ray's OOM kills: the value that
//! fits, with its arithmetic, named by the config's own keys (and edited there) when the
//! run's config is given.
//!
//! The arithmetic: weights, activations and non-torch memory do not change with the KV cache,
//! so every GiB added to `gpu_memory_utilization × total` goes to the KV cache, and a full-
//! attention KV cache grows linearly with `max_model_len`. Hence, with the cache needing N and
//! getting A: `gpu_memory_utilization` ≥ U + (N − A) / total, or `max_model_len` ≤ len × A / N
//! (vLLM's own estimate when it prints one; V0 prints the tokens the cache holds).

use super::advice::Advice;
use super::ray::{grouped_users, RayOom};
use super::run_settings::{RunSettings, Setting};
use super::units::format_size;
use super::vllm::{Profile, VllmNumbers};
use crate::diagnostic::{Applicability, Edit, Fix};

const GIB: f64 = 1_073_741_824.0;
/// Above this fraction nothing is left for the CUDA context and other processes.
const MAX_UTILIZATION: f64 = 0.95;

fn gib(bytes: f64) -> String {
    format_size(bytes.max(0.0).round() as u64)
}

fn ceil2(x: f64) -> f64 {
    (x * 100.0 - 1e-9).ceil() / 100.0
}

fn floor2(x: f64) -> f64 {
    (x * 100.0 + 1e-9).floor() / 100.0
}

/// The key a piece of advice names: the config's, else the generic one.
fn key<'a, T>(setting: Option<&'a Setting<T>>, generic: &'a str) -> &'a str {
    setting.map_or(generic, |s| s.key.as_str())
}

/// An advice that sets `setting` to `value` (an edit when the config writes it).
fn set<T>(title: String, setting: Option<&Setting<T>>, value: &str) -> Advice {
    let fixes = setting
        .and_then(|s| s.span)
        .map(|span| {
            vec![Fix {
                title: title.clone(),
                applicability: Applicability::Unsafe,
                edits: vec![Edit::replace(span, value)],
            }]
        })
        .unwrap_or_default();
    Advice { title, saves_bytes: None, fixes }
}

/// The device total and the fraction in force: the log's profile, else the config and `--gpu`.
fn budget(profile: &Profile, settings: Option<&RunSettings>, gpu_total: Option<u64>) -> (Option<f64>, Option<f64>) {
    let total = profile.total_gib.map(|t| t * GIB).or(gpu_total.map(|t| t as f64));
    let utilization =
        profile.utilization.or_else(|| settings.and_then(|s| s.gpu_memory_utilization.as_ref()).and_then(|u| u.value));
    (total, utilization)
}

/// Advice to raise `gpu_memory_utilization` so the KV cache gets `missing` more bytes.
fn raise_utilization(
    missing: f64,
    total: Option<f64>,
    utilization: Option<f64>,
    settings: Option<&RunSettings>,
    findings: &mut Vec<String>,
) -> Advice {
    let setting = settings.and_then(|s| s.gpu_memory_utilization.as_ref());
    let name = key(setting, "gpu_memory_utilization");
    let colocated = settings.is_some_and(|s| s.colocated);
    let trainer_note = if colocated { " (colocated: the trainer's share of the GPU shrinks by as much)" } else { "" };
    match (total, utilization) {
        (Some(t), Some(u)) => {
            let needed = ceil2(u + missing / t);
            findings.push(format!(
                "{name} that fits: {u} + {} / {} = {:.3} → {needed:.2}",
                gib(missing),
                gib(t),
                u + missing / t
            ));
            if needed > MAX_UTILIZATION {
                return Advice::text(format!(
                    "Raising {name} cannot fit it: it would take {needed:.2} of the GPU (above {MAX_UTILIZATION}); shorten the length, or shard the model over more GPUs (a larger tensor_model_parallel_size) so each holds less of the weights and the KV cache"
                ));
            }
            set(format!("Raise {name} from {u} to {needed:.2}{trainer_note}"), setting, &format!("{needed:.2}"))
        }
        _ => {
            let need = match (total, utilization) {
                (None, None) => "the GPU (--gpu) and the config (--config)",
                (None, _) => "the GPU (--gpu)",
                _ => "the config (--config)",
            };
            Advice::text(format!(
                "Raise {name} so the KV cache gets {} more{trainer_note} (give {need} for the value)",
                gib(missing)
            ))
        }
    }
}

/// Advice to lower the engine's length to `fits` tokens, through the config's keys.
fn lower_length(fits: u64, settings: Option<&RunSettings>) -> Advice {
    let Some(s) = settings else {
        return Advice::text(format!(
            "Lower max_model_len to {fits} or less (RL trainers start vLLM with prompt + response length: verl data.max_prompt_length + data.max_response_length or rollout.max_model_len, OpenRLHF --prompt_max_len + --generate_max_len, TRL max_prompt_length + max_completion_length)"
        ));
    };
    if let Some(m) = s.max_model_len.as_ref().filter(|m| m.value.is_some()) {
        return set(format!("Lower {} to {fits}", m.key), Some(m), &fits.to_string());
    }
    let prompt = s.prompt_length.as_ref().and_then(|p| p.value);
    match (s.response_length.as_ref(), prompt) {
        (Some(r), Some(p)) if fits > p => {
            let response = fits - p;
            set(
                format!("Lower {} to {response} (prompt {p} + response {response} = {fits} tokens)", r.key),
                Some(r),
                &response.to_string(),
            )
        }
        (Some(r), Some(p)) => Advice::text(format!(
            "The KV cache holds {fits} tokens, not even the {p}-token prompt: lowering {} cannot fit it",
            r.key
        )),
        _ => Advice::text(format!("Lower the length vLLM is started with to {fits} tokens or less")),
    }
}

pub(crate) fn max_len(
    n: &VllmNumbers,
    profile: &Profile,
    settings: Option<&RunSettings>,
    gpu_total: Option<u64>,
) -> (Vec<String>, Vec<Advice>) {
    let mut findings = Vec::new();
    let mut advice = Vec::new();
    let len = n.max_model_len.unwrap_or(0);
    let (total, utilization) = budget(profile, settings, gpu_total);
    // (tokens that fit, the bytes the KV cache is short)
    let (fits, missing) = match (n.needed_kv_bytes, n.available_kv_bytes, n.kv_cache_tokens) {
        (Some(need), Some(have), _) => {
            findings.push(format!(
                "vLLM's KV cache needs {} to hold one sequence of max_model_len {len} tokens, but only {} is left for it after the weights and activations (short by {})",
                gib(need as f64),
                gib(have as f64),
                gib(need.saturating_sub(have) as f64)
            ));
            let fits = n.estimated_max_len.unwrap_or_else(|| {
                let f = (len as f64 * have as f64 / need.max(1) as f64).floor() as u64;
                findings.push(format!(
                    "max_model_len that fits: {len} × {} / {} ≈ {f} (a full-attention KV cache grows linearly with the length)",
                    gib(have as f64),
                    gib(need as f64)
                ));
                f
            });
            if n.estimated_max_len.is_some() {
                findings.push(format!("vLLM's own estimate of the longest max_model_len the KV cache holds: {fits}"));
            }
            (fits, Some(need.saturating_sub(have) as f64))
        }
        (_, _, Some(tokens)) => {
            findings
                .push(format!("the KV cache holds {tokens} tokens, fewer than one sequence of max_model_len {len}"));
            // The KV cache's bytes (from the profile) per token scale to the missing tokens.
            let missing = profile.kv_cache_gib.filter(|k| *k > 0.0 && tokens > 0).map(|k| {
                let per_token = k * GIB / tokens as f64;
                let missing = per_token * len.saturating_sub(tokens) as f64;
                findings.push(format!(
                    "the KV cache's {} hold {tokens} tokens ({} per token): {} more tokens need {}",
                    gib(k * GIB),
                    format_size(per_token.round() as u64),
                    len.saturating_sub(tokens),
                    gib(missing)
                ));
                missing
            });
            (tokens, missing)
        }
        _ => (0, None),
    };
    if let Some(engine) = settings.and_then(RunSettings::engine_length).filter(|&e| e != len && len > 0) {
        findings.push(format!(
            "the config starts vLLM with {engine} tokens, the log's engine with {len}: the log may come from another run of this config"
        ));
    }
    if let Some(knob) = &n.knob {
        findings.push(format!(
            "the message names {knob}: this engine runs on the CPU, its KV cache sized by that variable"
        ));
    }
    advice.push(lower_length(fits, settings));
    match missing {
        Some(m) if n.knob.is_none() => advice.push(raise_utilization(m, total, utilization, settings, &mut findings)),
        _ => advice.push(Advice::text(format!(
            "Raise {} (more memory for the KV cache)",
            n.knob.as_deref().unwrap_or("gpu_memory_utilization")
        ))),
    }
    advice.push(Advice::text(
        "Store the KV cache in FP8 (kv_cache_dtype=fp8: half the bytes per token) or shard it over more GPUs (tensor_model_parallel_size)",
    ));
    (findings, advice)
}

pub(crate) fn no_blocks(
    profile: &Profile,
    settings: Option<&RunSettings>,
    gpu_total: Option<u64>,
) -> (Vec<String>, Vec<Advice>) {
    let mut findings = vec![
        "vLLM had no memory left for the KV cache: its weights, the profiling run's activation peak and the non-PyTorch memory took all of gpu_memory_utilization × the GPU's memory".to_owned(),
    ];
    let mut advice = Vec::new();
    let (total, utilization) = budget(profile, settings, gpu_total);
    if let (Some(t), Some(u)) = (total, utilization) {
        let parts: Vec<String> = [
            ("weights", profile.weights_gib),
            ("non-torch memory", profile.non_torch_gib),
            ("activation peak", profile.activation_gib),
        ]
        .iter()
        .filter_map(|(what, v)| v.map(|v| format!("{what} {}", gib(v * GIB))))
        .collect();
        let used = if parts.is_empty() { String::new() } else { format!("; {}", parts.join(" + ")) };
        let kv = profile.kv_cache_gib.map_or(String::new(), |k| format!("; left for the KV cache: {k:.2} GiB"));
        findings.push(format!("budget: {u} × {} = {}{used}{kv}", gib(t), gib(u * t)));
    }
    match profile.kv_cache_gib {
        Some(k) if k <= 0.0 => {
            advice.push(raise_utilization(-k * GIB, total, utilization, settings, &mut findings));
            if let Some(last) = advice.last_mut() {
                last.title.push_str(" just to break even; the KV cache of one max-length sequence comes on top");
                for fix in &mut last.fixes {
                    fix.title = last.title.clone();
                }
            }
        }
        _ => advice.push(raise_utilization_text(settings)),
    }
    let batched = settings.and_then(|s| s.max_num_batched_tokens.as_ref());
    advice.push(Advice::text(format!(
        "Lower {} (the profiling forward runs that many tokens: the activation peak scales with it)",
        key(batched, "max_num_batched_tokens")
    )));
    advice.push(Advice::text(
        "Shard the weights over more GPUs (tensor_model_parallel_size), or load them quantized, so more of the budget is left for the KV cache",
    ));
    (findings, advice)
}

fn raise_utilization_text(settings: Option<&RunSettings>) -> Advice {
    let setting = settings.and_then(|s| s.gpu_memory_utilization.as_ref());
    Advice::text(format!(
        "Raise {} (the log has no profiling numbers for the value)",
        key(setting, "gpu_memory_utilization")
    ))
}

pub(crate) fn free_memory(n: &VllmNumbers, settings: Option<&RunSettings>) -> (Vec<String>, Vec<Advice>) {
    let (free, total) = (n.free_bytes.unwrap_or(0) as f64, n.total_bytes.unwrap_or(0) as f64);
    let u = n.gpu_memory_utilization.unwrap_or(0.0);
    let setting = settings.and_then(|s| s.gpu_memory_utilization.as_ref());
    let name = key(setting, "gpu_memory_utilization");
    let colocated = settings.is_some_and(|s| s.colocated);
    let holder = if colocated {
        "the trainer colocated on this GPU (its weights, gradients and optimizer state) or other processes"
    } else {
        "other processes (a previous run, a notebook kernel, another engine) or, colocated, the trainer"
    };
    let mut findings = vec![format!(
        "at start-up vLLM found {} free of {}, but {name} {u} asks for {u} × {} = {}: {} is held by {holder}",
        gib(free),
        gib(total),
        gib(total),
        gib(n.requested_bytes.map_or(u * total, |r| r as f64)),
        gib(total - free)
    )];
    let mut advice = Vec::new();
    if total > 0.0 {
        let fits = floor2(free / total);
        findings.push(format!("{name} that fits: {} / {} = {:.3} → {fits:.2}", gib(free), gib(total), free / total));
        findings.push(format!(
            "vLLM takes the fraction of the whole GPU: at {fits:.2} its budget is {}, which must still hold its weights and a KV cache",
            gib(fits * total)
        ));
        if fits > 0.0 {
            advice.push(set(format!("Lower {name} from {u} to {fits:.2}"), setting, &format!("{fits:.2}")));
        }
    }
    let free_first = match settings.and_then(|s| s.framework) {
        Some("verl") => "Free the GPU before the rollout starts: offload the actor's parameters and optimizer state (actor_rollout_ref.actor.fsdp_config.param_offload / optimizer_offload) or run the rollout on its own GPUs",
        Some("OpenRLHF") => "Free the GPU before vLLM starts: --vllm_enable_sleep and --deepspeed_enable_sleep with --colocate_all_models, or give the vLLM engines their own GPUs",
        Some("TRL") | Some("Unsloth") => "Free the GPU first: vllm_enable_sleep_mode (TRL colocate), or vllm_mode: server on its own GPU",
        _ => "Stop the other processes on this GPU (nvidia-smi lists them), or put vLLM on a GPU of its own",
    };
    advice.push(Advice {
        title: free_first.to_owned(),
        saves_bytes: Some((total - free).max(0.0) as u64),
        fixes: Vec::new(),
    });
    (findings, advice)
}

pub(crate) fn ray(oom: &RayOom, settings: Option<&RunSettings>) -> (Vec<String>, Vec<Advice>) {
    let node = oom.node_ip.as_deref().map_or(String::new(), |ip| format!(" {ip}"));
    let mut findings = vec![format!(
        "this is host memory (RAM), not GPU memory: the node{node} used {} of {} ({:.1} %), above Ray's kill threshold {} (RAY_memory_usage_threshold), so Ray's memory monitor killed a worker",
        format_size(oom.used_bytes),
        format_size(oom.total_bytes),
        oom.fraction * 100.0,
        oom.threshold
    )];
    if let Some(name) = &oom.killed_name {
        let pid = oom.killed_pid.map_or(String::new(), |p| format!(", pid {p}"));
        let used = oom.killed_bytes.map_or(String::new(), |b| format!(", {}", format_size(b)));
        findings.push(format!(
            "killed: {name}{pid}{used} (the most recently scheduled worker, not necessarily the largest)"
        ));
    }
    let groups = grouped_users(&oom.top_users);
    if !groups.is_empty() {
        let list: Vec<String> = groups
            .iter()
            .take(4)
            .map(|(name, count, bytes)| {
                let times = if *count > 1 { format!("{count} × ") } else { String::new() };
                format!("{times}{name} ({})", format_size(*bytes))
            })
            .collect();
        findings.push(format!("largest users of the node's memory: {}", list.join(", ")));
    }
    let mut advice = Vec::new();
    let offloads: Vec<&(&str, Setting<bool>)> =
        settings.map(|s| s.offloads.iter().filter(|(_, o)| o.value == Some(true)).collect()).unwrap_or_default();
    if offloads.is_empty() {
        advice.push(Advice::text(
            "Check CPU offloading: offloaded parameters and optimizer state live in this RAM (verl fsdp_config.param_offload / optimizer_offload for the actor, reference and critic; OpenRLHF --adam_offload; DeepSpeed offload_optimizer/offload_param device: cpu); turn off the ones the GPUs can hold",
        ));
    }
    for (what, o) in offloads {
        let title = format!("Turn off the CPU offload of {what} ({}) if the GPU can hold it: offloaded state lives in this RAM, once per GPU process on the node", o.key);
        advice.push(set(title, Some(o), "false"));
    }
    advice.push(Advice::text(
        "Run fewer workers per node (each Ray worker process keeps its own CPU copies: the model loaded before sharding, dataloader workers, rollout batches), or use nodes with more RAM",
    ));
    if let Some(n) = settings.and_then(|s| s.samples_per_prompt.as_ref()).filter(|n| n.value.is_some_and(|v| v > 1)) {
        advice.push(Advice::text(format!(
            "Smaller rollouts: {} = {} multiplies the sequences, log-probs and rewards the driver and workers hold in RAM and in Ray's object store",
            n.key,
            n.value.unwrap_or(1)
        )));
    }
    advice.push(Advice::text(format!(
        "If the peak is brief (loading checkpoints), raise RAY_memory_usage_threshold above {} (e.g. 0.98) or set RAY_memory_monitor_refresh_ms=0 to disable the killer; the kernel's OOM killer still acts at 100 %",
        oom.threshold
    )));
    (findings, advice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;

    fn gib_bytes(x: f64) -> u64 {
        (x * GIB).round() as u64
    }

    fn verl_settings() -> RunSettings {
        let s =
            |key: &str, value, at| Setting { key: key.into(), value: Some(value), span: Some(Span::new(at, at + 1)) };
        RunSettings {
            gpu_memory_utilization: Some(Setting {
                key: "actor_rollout_ref.rollout.gpu_memory_utilization".into(),
                value: Some(0.5),
                span: Some(Span::new(0, 3)),
            }),
            max_model_len: Some(Setting {
                key: "actor_rollout_ref.rollout.max_model_len".into(),
                value: None,
                span: None,
            }),
            prompt_length: Some(s("data.max_prompt_length", 1024, 10)),
            response_length: Some(s("data.max_response_length", 7168, 20)),
            colocated: true,
            framework: Some("verl"),
            ..RunSettings::default()
        }
    }

    #[test]
    fn v1_max_len_gives_both_values_with_the_arithmetic() {
        let numbers = VllmNumbers {
            max_model_len: Some(8192),
            needed_kv_bytes: Some(gib_bytes(4.0)),
            available_kv_bytes: Some(gib_bytes(1.5)),
            estimated_max_len: Some(3072),
            ..VllmNumbers::default()
        };
        let profile = Profile { total_gib: Some(80.0), utilization: Some(0.5), ..Profile::default() };
        let (findings, advice) = max_len(&numbers, &profile, None, None);
        assert!(findings[0].contains("needs 4.00 GiB"), "{findings:?}");
        assert!(findings.iter().any(|f| f.contains("0.5 + 2.50 GiB / 80.00 GiB = 0.531 → 0.54")), "{findings:?}");
        assert!(advice[0].title.starts_with("Lower max_model_len to 3072"));
        assert_eq!(advice[1].title, "Raise gpu_memory_utilization from 0.5 to 0.54");
        // With verl's config: the response length is lowered, the fraction edited in place.
        let (_, advice) = max_len(&numbers, &profile, Some(&verl_settings()), None);
        assert!(advice[0].title.starts_with("Lower data.max_response_length to 2048 (prompt 1024"), "{advice:?}");
        assert_eq!(advice[0].fixes[0].edits[0].content, "2048");
        assert!(advice[1].title.starts_with("Raise actor_rollout_ref.rollout.gpu_memory_utilization from 0.5 to 0.54"));
        assert_eq!(advice[1].fixes[0].edits[0], Edit::replace(Span::new(0, 3), "0.54"));
    }

    #[test]
    fn v0_max_len_scales_the_profile_per_token() {
        let numbers =
            VllmNumbers { max_model_len: Some(32768), kv_cache_tokens: Some(16384), ..VllmNumbers::default() };
        let profile =
            Profile { total_gib: Some(24.0), utilization: Some(0.9), kv_cache_gib: Some(2.0), ..Profile::default() };
        let (findings, advice) = max_len(&numbers, &profile, None, None);
        assert!(findings.iter().any(|f| f.contains("16384 more tokens need 2.00 GiB")), "{findings:?}");
        // 0.9 + 2/24 = 0.983: above what a GPU can give.
        assert!(advice[1].title.starts_with("Raising gpu_memory_utilization cannot fit it"), "{advice:?}");
        assert!(advice[0].title.starts_with("Lower max_model_len to 16384"));
    }

    #[test]
    fn no_blocks_and_free_memory() {
        let profile = Profile {
            total_gib: Some(80.0),
            utilization: Some(0.3),
            weights_gib: Some(15.26),
            kv_cache_gib: Some(-1.49),
            ..Profile::default()
        };
        let (findings, advice) = no_blocks(&profile, None, None);
        assert!(findings[1].starts_with("budget: 0.3 × 80.00 GiB = 24.00 GiB; weights 15.26 GiB"), "{findings:?}");
        assert!(advice[0].title.starts_with("Raise gpu_memory_utilization from 0.3 to 0.32 just to break even"));
        let numbers = VllmNumbers {
            free_bytes: Some(gib_bytes(37.95)),
            total_bytes: Some(gib_bytes(79.25)),
            gpu_memory_utilization: Some(0.9),
            requested_bytes: Some(gib_bytes(71.33)),
            ..VllmNumbers::default()
        };
        let (findings, advice) = free_memory(&numbers, Some(&verl_settings()));
        assert!(findings[1].contains("37.95 GiB / 79.25 GiB = 0.479 → 0.47"), "{findings:?}");
        assert!(findings[0].contains("the trainer colocated"));
        assert_eq!(advice[0].fixes[0].edits[0].content, "0.47");
        assert!(advice[1].title.contains("param_offload"));
    }

    #[test]
    fn ray_says_host_memory_and_names_the_offloads() {
        let oom = RayOom {
            node_ip: Some("10.0.0.5".into()),
            used_bytes: gib_bytes(478.31),
            total_bytes: gib_bytes(503.51),
            fraction: 0.949951,
            threshold: 0.95,
            killed_name: Some("WorkerDict.actor_rollout_init_model".into()),
            killed_pid: Some(4242),
            killed_bytes: Some(gib_bytes(61.2)),
            top_users: vec![
                (1, gib_bytes(61.2), "ray::WorkerDict".into()),
                (2, gib_bytes(60.0), "ray::WorkerDict.x".into()),
            ],
        };
        let mut settings = verl_settings();
        settings.offloads = vec![(
            "the actor's optimizer state",
            Setting {
                key: "actor_rollout_ref.actor.fsdp_config.optimizer_offload".into(),
                value: Some(true),
                span: Some(Span::new(5, 9)),
            },
        )];
        let (findings, advice) = ray(&oom, Some(&settings));
        assert!(findings[0].starts_with("this is host memory (RAM), not GPU memory: the node 10.0.0.5 used 478.31 GiB"));
        assert!(findings[2].contains("2 × ray::WorkerDict (121.20 GiB)"), "{findings:?}");
        assert!(advice[0].title.contains("optimizer_offload"));
        assert_eq!(advice[0].fixes[0].edits[0].content, "false");
        assert!(advice.last().unwrap().title.contains("RAY_memory_usage_threshold"));
        let (_, plain) = ray(&oom, None);
        assert!(plain[0].title.starts_with("Check CPU offloading"));
    }
}
