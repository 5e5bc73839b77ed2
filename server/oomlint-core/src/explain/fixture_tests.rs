//! Every log in `fixtures/logs/`, explained.

use super::message::Form;
use super::traceback::Component;
use super::{explain, OomError};

const GIB: f64 = 1_073_741_824.0;
const MIB: f64 = 1_048_576.0;

// Test-only I/O: reads a log of fixtures/logs.
#[allow(clippy::disallowed_methods)]
fn fixture(name: &str) -> (String, Vec<OomError>) {
    let path = format!("{}/../../fixtures/logs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let errors = explain(&text);
    (text, errors)
}

fn bytes(value: f64, unit: f64) -> u64 {
    (value * unit).round() as u64
}

fn component(e: &OomError) -> Option<Component> {
    e.site.as_ref().and_then(|s| s.component)
}

#[test]
fn current_template_in_a_trainer_log() {
    let (text, errors) = fixture("current-hf-trainer.log");
    assert_eq!(errors.len(), 1);
    let e = &errors[0];
    assert_eq!(e.line, 37);
    assert!(text[e.span.start..].starts_with("CUDA out of memory. Tried to allocate 1.00 GiB."));
    assert_eq!(e.numbers.form, Form::Current);
    assert_eq!(e.numbers.total_bytes, bytes(79.19, GIB));
    assert_eq!(e.numbers.this_process_bytes, Some(bytes(78.38, GIB)));
    assert_eq!(e.diagnosis.shortfall_bytes, bytes(1.0, GIB) - bytes(812.56, MIB));
    // 812.56 MiB free + 2.61 GiB cached > 1 GiB: the memory exists, fragmented.
    assert!(e.diagnosis.fragmentation_suspected);
    assert_eq!(component(e), Some(Component::Activations));
    assert_eq!(e.site.as_ref().and_then(|s| s.frame.code.as_deref()), Some("outputs = model(**inputs)"));
}

#[test]
fn capacty_spelling_and_cross_entropy() {
    let (_, errors) = fixture("capacty-2.1-cross-entropy.log");
    let e = &errors[0];
    assert_eq!(e.numbers.form, Form::Capacty);
    assert_eq!(e.numbers.requested_bytes, bytes(3.91, GIB));
    assert_eq!(component(e), Some(Component::LogitsLoss));
    assert!(e.diagnosis.fragmentation_suspected);
    assert!(e.diagnosis.levers[0].title.contains("cross-entropy"));
}

#[test]
fn legacy_form_in_the_optimizer() {
    let (_, errors) = fixture("legacy-optimizer-step.log");
    let e = &errors[0];
    assert_eq!(e.numbers.form, Form::Legacy);
    assert_eq!(e.numbers.reserved_bytes, bytes(37.63, GIB));
    assert_eq!(e.numbers.reserved_unallocated_bytes, bytes(37.63, GIB) - bytes(37.21, GIB));
    assert_eq!(component(e), Some(Component::Optimizer));
    assert_eq!(e.site.as_ref().and_then(|s| s.frame.code.as_deref()), Some("optimizer.step()"));
    // 301 MiB free + 430 MiB cached > 500 MiB; this PyTorch has no expandable segments.
    assert!(e.diagnosis.fragmentation_suspected);
    assert!(e.diagnosis.situational[0].title.contains("max_split_size_mb"));
}

#[test]
fn another_process_holds_the_memory_during_generation() {
    let (_, errors) = fixture("other-processes-generate.log");
    let e = &errors[0];
    let others = e.numbers.other_processes.as_deref().unwrap_or_default();
    assert_eq!(others.len(), 1);
    assert_eq!((others[0].pid, others[0].bytes), (18342, bytes(26.71, GIB)));
    assert_eq!(e.diagnosis.situational[0].saves_bytes, Some(bytes(26.71, GIB)));
    assert_eq!(component(e), Some(Component::Generation));
    // 21.25 MiB free + 309.42 MiB cached would cover 64 MiB: fragmentation as well.
    assert!(e.diagnosis.fragmentation_suspected);
}

#[test]
fn memory_fraction_cap() {
    let (_, errors) = fixture("allowed-fraction.log");
    let e = &errors[0];
    assert_eq!(e.numbers.allowed_bytes, Some(bytes(39.57, GIB)));
    // Free memory covers the request: the cap is the reason, there is no shortfall.
    assert_eq!(e.diagnosis.shortfall_bytes, 0);
    assert!(e.diagnosis.situational.iter().any(|a| a.title.contains("memory fraction")));
}

#[test]
fn private_pools_are_part_of_allocated() {
    let (_, errors) = fixture("private-pools-cuda-graphs.log");
    let e = &errors[0];
    assert_eq!(e.numbers.private_pool_bytes, Some(bytes(1.25, GIB)));
    assert_eq!(e.numbers.allocated_bytes, bytes(22.81, GIB));
    assert_eq!(e.numbers.reserved_bytes, bytes(22.81, GIB) + bytes(81.06, MIB));
    assert!(e.diagnosis.findings.iter().any(|f| f.contains("20 MiB block")));
}

#[test]
fn every_rank_of_a_torchrun_log() {
    let (_, errors) = fixture("multi-rank-torchrun.log");
    assert_eq!(errors.len(), 2);
    assert_eq!(errors.iter().map(|e| (e.rank, e.numbers.device)).collect::<Vec<_>>(), [(Some(0), 0), (Some(1), 1)]);
    for e in &errors {
        assert_eq!(e.frames.len(), 4);
        assert_eq!(component(e), Some(Component::Gradients));
        assert!(e.diagnosis.fragmentation_suspected);
    }
    assert_eq!(errors[1].numbers.free_bytes, bytes(286.44, MIB));
}

#[test]
fn the_launcher_summary_does_not_count_twice() {
    let (_, errors) = fixture("torchrun-elastic-summary.log");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].rank, Some(0));
    assert_eq!(errors[0].line, 8);
    assert_eq!(component(&errors[0]), Some(Component::Activations));
}

#[test]
fn colours_and_a_container_pid() {
    let (_, errors) = fixture("ansi-colored.log");
    let e = &errors[0];
    assert_eq!(e.numbers.free_bytes, bytes(106.12, MIB));
    assert_eq!(component(e), Some(Component::Weights));
    // pid 2231 is this process seen from a container, not another one.
    assert!(!e.diagnosis.situational.iter().any(|a| a.title.contains("Stop or move")));
}

#[test]
fn a_message_wrapped_at_80_columns() {
    let (_, errors) = fixture("wrapped-80-columns.log");
    assert_eq!(errors.len(), 1);
    let e = &errors[0];
    assert_eq!(e.line, 7);
    assert_eq!(e.numbers.requested_bytes, bytes(7.83, GIB));
    assert_eq!(e.numbers.reserved_unallocated_bytes, bytes(2.73, GIB));
    assert_eq!(e.numbers.advice_variable.as_deref(), Some("PYTORCH_CUDA_ALLOC_CONF"));
    assert_eq!(component(e), Some(Component::LogitsLoss));
}

#[test]
fn pytorch_2_9_1_keeps_the_old_variable_despite_its_warning() {
    let (_, errors) = fixture("deprecation-warning-2.9.1.log");
    let e = &errors[0];
    assert!(e.diagnosis.situational[0].title.starts_with("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
    assert!(e.diagnosis.findings.iter().any(|f| f.contains("2.9.1 ignores expandable_segments")));
    assert_eq!(component(e), Some(Component::Gradients));
    assert!(e.diagnosis.findings.iter().any(|f| f.contains("up to 1 MiB takes a 2 MiB block")));
}

#[test]
fn a_healthy_log_has_no_error() {
    let (_, errors) = fixture("no-oom.log");
    assert!(errors.is_empty());
}

/// A deterministic xorshift generator for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
// Test-only I/O: lists and reads fixtures/logs.
#[allow(clippy::disallowed_methods)]
fn mutated_logs_never_panic() {
    const PIECES: [&str; 10] = ["\n", "é", "\u{1b}[31m", "[rank7]: ", "\r", "GiB", "0", ".", " ", "Process 1 has "];
    let dir = format!("{}/../../fixtures/logs", env!("CARGO_MANIFEST_DIR"));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
    names.sort();
    for path in names {
        let original = std::fs::read_to_string(&path).unwrap();
        for _ in 0..60 {
            let mut text = original.clone();
            for _ in 0..1 + rng.below(6) {
                let mut at = rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                match rng.below(3) {
                    0 => text.insert_str(at, PIECES[rng.below(PIECES.len())]),
                    1 => {
                        let mut end = (at + rng.below(8)).min(text.len());
                        while !text.is_char_boundary(end) {
                            end += 1;
                        }
                        text.replace_range(at..end, "");
                    }
                    _ => text.truncate(at),
                }
            }
            let errors = explain(&text);
            for e in &errors {
                assert!(e.span.start < e.span.end && e.span.end <= text.len());
                assert!(text.is_char_boundary(e.span.start) && text.is_char_boundary(e.span.end));
            }
            let _ = super::json::report(&errors, &[]);
        }
    }
}

#[test]
fn a_rocm_hip_message_reads_like_a_cuda_one() {
    // PyTorch on ROCm prints the same template with `HIP` and names PYTORCH_HIP_ALLOC_CONF.
    let (_, errors) = fixture("rocm-hip-mi300x.log");
    assert_eq!(errors.len(), 1);
    let e = &errors[0];
    assert_eq!(e.numbers.form, Form::Current);
    assert_eq!(e.numbers.requested_bytes, bytes(18.55, GIB));
    assert_eq!(e.numbers.total_bytes, bytes(191.98, GIB));
    assert_eq!(e.numbers.free_bytes, bytes(9.27, GIB));
    assert_eq!(e.numbers.reserved_unallocated_bytes, bytes(12.40, GIB));
    assert_eq!(e.numbers.advice_variable.as_deref(), Some("PYTORCH_HIP_ALLOC_CONF"));
    assert!(e.diagnosis.situational.iter().any(|a| a.title.contains("PYTORCH_HIP_ALLOC_CONF")), "{:?}", e.diagnosis);
    assert!(!e.diagnosis.situational.iter().any(|a| a.title.contains("PYTORCH_CUDA_ALLOC_CONF")));
}

// Test-only I/O: reads a log of fixtures/logs for the vLLM and Ray failures.
#[allow(clippy::disallowed_methods)]
fn failure_fixture(name: &str) -> (String, Vec<super::failure::Failure>) {
    let path = format!("{}/../../fixtures/logs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let failures = super::failure::failures(&text);
    (text, failures)
}

#[test]
fn vllm_no_cache_blocks_under_verl() {
    use super::failure::FailureKind;
    use super::vllm::VllmCheck;
    let (text, found) = failure_fixture("vllm-no-cache-blocks.log");
    // The worker's ValueError is repeated by nothing else: one failure, no CUDA message.
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(explain(&text).is_empty());
    let f = &found[0];
    assert_eq!(f.line, 17);
    let FailureKind::Vllm { check, profile, .. } = &f.kind else { panic!("{f:?}") };
    assert_eq!(*check, VllmCheck::NoCacheBlocks);
    assert_eq!((profile.total_gib, profile.utilization, profile.kv_cache_gib), (Some(79.15), Some(0.3), Some(-1.49)));
    // 0.3 + 1.49 GiB / 79.15 GiB = 0.319: the fraction that breaks even.
    assert!(f.advice[0].title.starts_with("Raise gpu_memory_utilization from 0.3 to 0.32"), "{:?}", f.advice);
}

#[test]
fn vllm_v1_max_len_is_one_failure_though_printed_twice() {
    use super::failure::FailureKind;
    let (text, found) = failure_fixture("vllm-max-len-kv-cache.log");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.line, 10);
    assert!(text[f.span.start..].starts_with("To serve at least one request"));
    let FailureKind::Vllm { numbers, profile, .. } = &f.kind else { panic!("{f:?}") };
    assert_eq!((numbers.max_model_len, numbers.estimated_max_len), (Some(32768), Some(16384)));
    assert_eq!(numbers.needed_kv_bytes, Some(bytes(8.0, GIB)));
    assert_eq!(profile.kv_cache_gib, Some(4.0));
    assert!(f.advice[0].title.starts_with("Lower max_model_len to 16384"));
    // Without the GPU's size or the fraction, the raise is said in GiB.
    assert!(f.advice[1].title.contains("4.00 GiB more"), "{:?}", f.advice);
}

#[test]
fn ray_oom_killer_is_host_memory() {
    use super::failure::FailureKind;
    let (_, found) = failure_fixture("ray-oom-killer.log");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.line, 7);
    let FailureKind::Ray(oom) = &f.kind else { panic!("{f:?}") };
    assert_eq!((oom.used_bytes, oom.total_bytes, oom.threshold), (bytes(478.31, GIB), bytes(503.51, GIB), 0.95));
    assert_eq!(oom.killed_name.as_deref(), Some("WorkerDict.actor_rollout_update_actor"));
    assert_eq!(oom.top_users.len(), 10);
    assert!(f.findings[0].contains("host memory (RAM), not GPU memory"));
    assert!(
        f.findings[2].starts_with("largest users of the node's memory: 8 × ray::WorkerDict (477.79 GiB)"),
        "{:?}",
        f.findings
    );
}

#[test]
fn the_launch_script_names_the_keys() {
    use super::run_settings::RunSettings;
    use crate::analysis::{analyze_text, Options};
    let (script, _) = failure_fixture("verl-run.sh");
    let analysis = analyze_text(std::path::Path::new("verl-run.sh"), script.clone(), &Options::default());
    let settings = RunSettings::from_plan(analysis.plan.as_deref().unwrap(), &script).unwrap();
    let (_, mut found) = failure_fixture("vllm-no-cache-blocks.log");
    found[0].apply_settings(Some(&settings), None);
    let raise = &found[0].advice[0];
    assert!(raise.title.starts_with("Raise actor_rollout_ref.rollout.gpu_memory_utilization from 0.3 to 0.32"));
    let edit = &raise.fixes[0].edits[0];
    assert_eq!((&script[edit.span.start..edit.span.end], edit.content.as_str()), ("0.3", "0.32"));
    let (_, mut found) = failure_fixture("ray-oom-killer.log");
    found[0].apply_settings(Some(&settings), None);
    let titles: Vec<&str> = found[0].advice.iter().map(|a| a.title.as_str()).collect();
    assert!(titles[0].contains("actor_rollout_ref.actor.fsdp_config.param_offload"), "{titles:?}");
    assert!(titles[1].contains("optimizer_offload"), "{titles:?}");
    assert!(titles.iter().any(|t| t.contains("actor_rollout_ref.rollout.n = 8")), "{titles:?}");
}
