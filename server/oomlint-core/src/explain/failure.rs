//! The memory failures RL runs end in besides a CUDA allocator message: vLLM's start-up
//! checks ([`vllm`](super::vllm)) and Ray's out-of-memory killer ([`ray`](super::ray)), found in
//! a log the way [`explain`](super::explain) finds CUDA messages (rank streams, colours and
//! wrapped lines read through), each with findings and advice ([`failure_advice`](super::failure_advice)).

use super::advice::Advice;
use super::failure_advice::{free_memory, max_len, no_blocks, ray as ray_advice};
use super::ray::{self, RayOom};
use super::run_settings::RunSettings;
use super::scan::Log;
use super::vllm::{self, Profile, VllmCheck, VllmNumbers};
use crate::span::Span;
use crate::{HashMap, HashSet};

/// What failed.
#[derive(Debug, Clone, PartialEq)]
pub enum FailureKind {
    /// A vLLM start-up check, with the profiling numbers logged before it.
    Vllm { check: VllmCheck, numbers: VllmNumbers, profile: Profile },
    /// Ray's memory monitor killed a worker: host RAM, not GPU memory.
    Ray(RayOom),
}

impl FailureKind {
    /// The short code reports show.
    pub fn code(&self) -> &'static str {
        match self {
            FailureKind::Vllm { check, .. } => check.code(),
            FailureKind::Ray(_) => "ray-host-oom",
        }
    }
}

/// One failure found in a log, with its findings and advice.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The message's bytes in the log.
    pub span: Span,
    /// 1-based line where the message starts.
    pub line: usize,
    /// The `[rankN]:` prefix of its lines, if any.
    pub rank: Option<u32>,
    pub kind: FailureKind,
    /// Sentences explaining the numbers, most important first.
    pub findings: Vec<String>,
    /// What to change, in order.
    pub advice: Vec<Advice>,
}

impl Failure {
    /// Rewrites the findings and advice for the run's config (when given): its keys, its values, and edits
    /// where the config writes them. `gpu_total` is the card's memory (`--gpu`), used when the
    /// log does not print it.
    pub fn apply_settings(&mut self, settings: Option<&RunSettings>, gpu_total: Option<u64>) {
        (self.findings, self.advice) = advise(&self.kind, settings, gpu_total);
    }
}

/// Lines of one stream a window reads past a hinted line.
const WINDOW_LINES: usize = 8;
/// Compact bytes a window reads (a kill message with its policy list is ~1.5 KB).
const WINDOW_BYTES: usize = 3072;
/// Bytes of the previous line read into a window (the anchor may start there, wrapped).
const PREVIOUS_TAIL: usize = 256;
/// How far above a vLLM failure its profiling lines are looked for.
const PROFILE_LINES: usize = 400;

/// Words on a line that may start one of the messages (short, so a wrap rarely splits them).
const HINTS: [&str; 5] = ["cache", "seq len", "Free memory", "on the node", "running low"];

/// Finds every vLLM start-up failure and Ray OOM kill in `text`, in log order; repeats of
/// the same numbers (a driver re-raising a worker's error) are one failure.
pub fn failures(text: &str) -> Vec<Failure> {
    let log = Log::new(text);
    let mut found: Vec<(Span, Option<u32>, FailureKind)> = Vec::new();
    let mut tried = HashSet::default();
    let mut covered: HashMap<Option<u32>, usize> = HashMap::default();
    for (i, line) in log.lines.iter().enumerate() {
        if covered.get(&line.rank).is_some_and(|&end| line.end <= end) {
            continue;
        }
        let body = log.body(i);
        if !HINTS.iter().any(|h| body.contains(h)) {
            continue;
        }
        let window = match log.prev_in_stream(i) {
            Some(p) if covered.get(&line.rank).is_none_or(|&end| log.lines[p].start >= end) => {
                log.compact(p, PREVIOUS_TAIL, WINDOW_LINES + 1, WINDOW_BYTES)
            }
            _ => log.compact(i, usize::MAX, WINDOW_LINES, WINDOW_BYTES),
        };
        let lower = window.bytes.to_ascii_lowercase();
        let mut anchors: Vec<usize> =
            vllm::ANCHORS.iter().map(|(a, _)| *a).chain([ray::ANCHOR]).flat_map(|a| positions(&lower, a)).collect();
        anchors.sort_unstable();
        let mut parsed_to = 0;
        for pos in anchors {
            let origin = window.offsets[pos];
            if pos < parsed_to || covered.get(&line.rank).is_some_and(|&end| origin < end) || !tried.insert(origin) {
                continue;
            }
            let parsed = if lower[pos..].starts_with(ray::ANCHOR) {
                ray::parse(&lower, &window.bytes, pos).map(|(oom, s, e)| (FailureKind::Ray(oom), s, e))
            } else {
                vllm::parse(&lower, pos).map(|(check, numbers, s, e)| {
                    (FailureKind::Vllm { check, numbers, profile: Profile::default() }, s, e)
                })
            };
            if let Some((kind, start, end)) = parsed {
                let span = window.original_span(text, start, end);
                parsed_to = end;
                covered.insert(line.rank, span.end);
                found.push((span, line.rank, kind));
            }
        }
    }
    found.sort_by_key(|(span, _, _)| span.start);
    let mut seen: Vec<FailureKind> = Vec::new();
    found.retain(|(_, _, kind)| {
        let fresh = !seen.contains(kind);
        if fresh {
            seen.push(kind.clone());
        }
        fresh
    });
    found
        .into_iter()
        .map(|(span, rank, mut kind)| {
            let first = log.line_of(span.start);
            match &mut kind {
                FailureKind::Vllm { profile, .. } => {
                    *profile = Profile::read(&log, first.saturating_sub(PROFILE_LINES)..first);
                }
                FailureKind::Ray(oom) => oom.top_users = ray::top_users(&log, log.line_of(span.end.saturating_sub(1))),
            }
            let (findings, advice) = advise(&kind, None, None);
            Failure { span, line: first + 1, rank, kind, findings, advice }
        })
        .collect()
}

/// Findings and advice for one failure; `settings` names the config's keys.
fn advise(kind: &FailureKind, settings: Option<&RunSettings>, gpu_total: Option<u64>) -> (Vec<String>, Vec<Advice>) {
    match kind {
        FailureKind::Vllm { check: VllmCheck::MaxLenKvCache, numbers, profile } => {
            max_len(numbers, profile, settings, gpu_total)
        }
        FailureKind::Vllm { check: VllmCheck::NoCacheBlocks, profile, .. } => no_blocks(profile, settings, gpu_total),
        FailureKind::Vllm { check: VllmCheck::FreeMemory, numbers, .. } => free_memory(numbers, settings),
        FailureKind::Ray(oom) => ray_advice(oom, settings),
    }
}

fn positions<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack.windows(needle.len()).enumerate().filter(move |(_, w)| *w == needle).map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_LEN: &str = "ValueError: To serve at least one request with the models's max seq len (32768), (4.00 GiB KV cache is needed, which is larger than the available KV cache memory (1.50 GiB). Based on the available memory, the estimated maximum model length is 12288. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    const RAY: &str = "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node (IP: 10.0.0.5, ID: ab12) where the task (actor ID: cd34, name=WorkerDict.actor_rollout_init_model, pid=4242, memory used=61.20GB) was running was 478.31GB / 503.51GB (0.949951), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: ef56) because it was the most recently scheduled task; to see more information";

    #[test]
    fn finds_each_kind_once_in_log_order() {
        let text = format!("start\n{MAX_LEN}\nmore\n{RAY}\n(TaskRunner pid=1) {MAX_LEN}\n");
        let found = failures(&text);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert_eq!(found[0].kind.code(), "vllm-max-len-kv-cache");
        assert_eq!(found[0].line, 2);
        assert!(text[found[0].span.start..].starts_with("To serve at least"));
        assert!(text[..found[0].span.end].ends_with("initializing the engine."));
        assert_eq!(found[1].kind.code(), "ray-host-oom");
        assert!(text[found[1].span.start..].starts_with("Task was killed"));
    }

    #[test]
    fn wrapped_and_prefixed_messages_parse() {
        let wrapped: String =
            MAX_LEN.as_bytes().chunks(41).map(|c| format!("[rank1]: {}\n", String::from_utf8_lossy(c))).collect();
        let found = failures(&wrapped);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rank, Some(1));
        let FailureKind::Vllm { numbers, .. } = &found[0].kind else { panic!() };
        assert_eq!(numbers.estimated_max_len, Some(12288));
    }

    #[test]
    fn the_profile_above_is_read() {
        let text = "INFO worker.py:295] the current vLLM instance can use total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.30) = 23.75GiB\nINFO worker.py:295] model weights take 15.26GiB; non_torch_memory takes 0.31GiB; PyTorch activation peak memory takes 9.67GiB; the rest of the memory reserved for KV Cache is -1.49GiB.\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n";
        let found = failures(text);
        let FailureKind::Vllm { check, profile, .. } = &found[0].kind else { panic!() };
        assert_eq!(*check, VllmCheck::NoCacheBlocks);
        assert_eq!(profile.kv_cache_gib, Some(-1.49));
        assert_eq!(found[0].line, 3);
    }

    #[test]
    fn ordinary_lines_are_not_failures() {
        let text = "INFO GPU KV cache size: 447,088 tokens\nprefix cache hit rate 0.4\nMemory on the node is fine\nmax seq len (abc)\n";
        assert!(failures(text).is_empty());
        assert!(failures("").is_empty());
    }

    #[test]
    fn many_repeats_stay_linear_and_one() {
        let text = format!("{RAY}\nINFO prefix cache hit rate\n").repeat(500);
        super::super::scan::BYTES_READ.with(|r| r.set(0));
        let found = failures(&text);
        let read = super::super::scan::BYTES_READ.with(std::cell::Cell::get);
        assert_eq!(found.len(), 1);
        assert!((read as f64 / text.len() as f64) < 16.0, "{read} bytes read for {}", text.len());
    }
}
