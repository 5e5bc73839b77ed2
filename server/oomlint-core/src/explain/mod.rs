//! `oomlint explain`: find every CUDA out-of-memory message in a log, parse it to bytes,
//! and say why it happened and what to change.
//!
//! The flow: [`scan`] (lines, rank streams, compact text) → [`message`] (the numbers) →
//! [`traceback`] (allocation site and component), [`torch`] (which allocator variable the
//! log's PyTorch reads) → [`diagnose`] (shortfall,
//! fragmentation, other processes) → [`advice`] (static levers, or the estimator's levers
//! via [`OomError::apply_levers`]) → [`json`] (the text report is the CLI's `render::explain`).
//!
//! vLLM's start-up memory errors and Ray's OOM killer are found by [`failure::failures`]
//! ([`vllm`], [`ray`]), advised by `failure_advice`, in the config's keys via [`run_settings`].

pub mod advice;
mod cursor;
pub(crate) mod diagnose;
pub mod failure;
pub(crate) mod failure_advice;
pub mod json;
pub(crate) mod message;
pub mod ray;
pub mod run_settings;
pub mod vllm;

pub(crate) mod scan;
pub(crate) mod torch;
pub(crate) mod traceback;
pub mod units;

use crate::span::Span;
use crate::{HashMap, HashSet};
use advice::{smallest_sufficient_set, Advice, Lever, LeverChoice};
use diagnose::{diagnose, Diagnosis};
use message::{Numbers, ANCHOR};
use scan::Log;
use torch::TorchHints;
use traceback::{Frame, Site};

/// One OOM message found in a log, with its diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct OomError {
    /// The message's bytes in the log (from `CUDA out of memory` to the end of its advice).
    pub span: Span,
    /// 1-based line where the message starts.
    pub line: usize,
    /// The `[rankN]:` prefix of its lines, if any.
    pub rank: Option<u32>,
    pub numbers: Numbers,
    /// The traceback printed above the message (outermost frame first).
    pub(crate) frames: Vec<Frame>,
    pub site: Option<Site>,
    pub diagnosis: Diagnosis,
}

impl OomError {
    /// Replaces the static levers with the smallest set of `levers` (the estimator's, for
    /// the user's config) that frees the shortfall plus a 10 % margin. Advice read from the
    /// numbers (other processes, fragmentation, a memory fraction) stays first.
    pub fn apply_levers(&mut self, levers: &[Lever]) -> LeverChoice {
        let choice = smallest_sufficient_set(levers, self.diagnosis.shortfall_bytes);
        self.diagnosis.levers = choice
            .chosen
            .iter()
            .map(|&i| Advice {
                title: levers[i].title.clone(),
                saves_bytes: Some(levers[i].saves_bytes),
                fixes: levers[i].fixes.clone(),
            })
            .collect();
        choice
    }
}

/// The most lines of one stream a message may span.
const MAX_MESSAGE_LINES: usize = 60;
/// The most compact bytes a message may span (a message with a dozen process lines is ~1.2 KB).
const MAX_MESSAGE_BYTES: usize = 4096;
/// A typical message with its advice tail is ~650 compact bytes.
const SHORT_MESSAGE_BYTES: usize = 1024;
/// Bytes kept before an anchor so the device name before it is read.
const DEVICE_NAME_SLACK: usize = 64;
/// How much of the line before a candidate is read (a wrapped message may start there).
const PREVIOUS_LINE_TAIL: usize = 4096;

/// Finds, parses and diagnoses every OOM message in `text`.
pub fn explain(text: &str) -> Vec<OomError> {
    let log = Log::new(text);
    let torch = TorchHints::read(text);
    // Per rank stream: where the previous message ended (its traceback cannot reach past it).
    let mut previous_end: HashMap<Option<u32>, usize> = HashMap::default();
    find(&log)
        .into_iter()
        .map(|(span, rank, numbers)| {
            let first_line = log.line_of(span.start);
            let floor = previous_end.insert(rank, span.end).unwrap_or(0);
            let frames = traceback::frames_before(&log, first_line, floor);
            let site = traceback::site(&frames);
            let variable = torch.allocator_variable(numbers.advice_variable.as_deref());
            let mut diagnosis = diagnose(&numbers, site.as_ref(), variable);
            if diagnosis.fragmentation_suspected {
                diagnosis.findings.extend(torch.variable_note(variable));
            }
            OomError { span, line: first_line + 1, rank, numbers, frames, site, diagnosis }
        })
        .collect()
}

/// Every parseable message: its span, rank and numbers, in log order.
fn find(log: &Log) -> Vec<(Span, Option<u32>, Numbers)> {
    let mut found = Vec::new();
    // Original offsets of anchors already tried, so each is parsed once.
    let mut tried = HashSet::default();
    // Per rank stream: the end of the last message parsed, to skip its lines.
    let mut covered: HashMap<Option<u32>, usize> = HashMap::default();
    for (i, line) in log.lines.iter().enumerate() {
        let body = log.text.get(line.body..line.end).unwrap_or("");
        if !(body.contains("emory") || body.contains("EMORY")) {
            continue;
        }
        if covered.get(&line.rank).is_some_and(|&end| line.end <= end) {
            continue;
        }
        if !anchor_nearby(log, i) {
            continue;
        }
        // The anchor starts on this line or, wrapped, on the previous one.
        let previous =
            log.prev_in_stream(i).filter(|&p| covered.get(&line.rank).is_none_or(|&end| log.lines[p].start >= end));
        let nearby = match previous {
            Some(p) => log.compact(p, PREVIOUS_LINE_TAIL, 3, usize::MAX),
            None => log.compact(i, usize::MAX, 2, usize::MAX),
        };
        let lower = nearby.bytes.to_ascii_lowercase();
        let mut from = 0;
        while let Some(pos) = find_bytes(&lower[from..], ANCHOR).map(|p| p + from) {
            from = pos + 1;
            let origin = nearby.offsets[pos];
            if !tried.insert(origin) {
                continue;
            }
            if let Some((span, numbers)) = parse_at(log, origin) {
                covered.insert(line.rank, span.end);
                found.push((span, line.rank, numbers));
            }
        }
    }
    found.sort_by_key(|(span, _, _)| span.start);
    // A launcher's failure summary (torchrun's "Root Cause") repeats a rank's message:
    // identical numbers on the same device are one event, reported where it first appears.
    let mut seen: HashSet<Numbers> = HashSet::default();
    found.retain(|(_, _, numbers)| seen.insert(numbers.clone()));
    found
}

/// Parses the message whose anchor starts at byte `origin` of the log.
fn parse_at(log: &Log, origin: usize) -> Option<(Span, Numbers)> {
    let line = log.line_of(origin);
    // Keep a little before the anchor for the device name (`CUDA`), colour codes included.
    let tail = log.lines[line].end.saturating_sub(origin) + DEVICE_NAME_SLACK;
    // Most messages fit the short window; a long one (many process lines) gets the long one.
    [SHORT_MESSAGE_BYTES, MAX_MESSAGE_BYTES].into_iter().find_map(|max_bytes| {
        let window = log.compact(line, tail, MAX_MESSAGE_LINES, max_bytes);
        let pos = window.offsets.iter().position(|&o| o == origin)?;
        let (numbers, end) = message::parse(&window.bytes, pos)?;
        let start = message_start(&window.bytes, pos);
        Some((window.original_span(log.text, start, end), numbers))
    })
}

/// Whether `Tried to allocate` may be on this line or the ones around it.
fn anchor_nearby(log: &Log, line: usize) -> bool {
    let mut candidates = vec![line];
    candidates.extend(log.prev_in_stream(line));
    let mut next = log.next_in_stream(line);
    for _ in 0..2 {
        let Some(n) = next else { break };
        candidates.push(n);
        next = log.next_in_stream(n);
    }
    // A wrap splits at most one of the two words, so one of these survives whole.
    candidates.into_iter().any(|l| {
        let body = log.body(l);
        body.contains("ried") || body.contains("to allocate")
    })
}

/// The message starts at the device name before `out of memory` (`CUDA`, `HIP`, `XPU`), if any.
fn message_start(bytes: &[u8], anchor: usize) -> usize {
    ["CUDA", "HIP", "XPU"]
        .iter()
        .find(|name| anchor >= name.len() && bytes[anchor - name.len()..anchor] == *name.as_bytes())
        .map_or(anchor, |name| anchor - name.len())
}

fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod fixture_tests;

#[cfg(test)]
mod tests {
    use super::advice::Lever;
    use super::traceback::Component;
    use super::*;

    const CURRENT: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.57 GiB of which 5.19 MiB is free. Including non-PyTorch memory, this process has 23.55 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 212.41 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    #[test]
    fn finds_a_plain_message_with_its_line_and_span() {
        let text = format!("step 1\nstep 2\n{CURRENT}\nafter\n");
        let errors = explain(&text);
        assert_eq!(errors.len(), 1);
        let e = &errors[0];
        assert_eq!(e.line, 3);
        assert_eq!(&text[e.span.start..e.span.start + 18], "CUDA out of memory");
        assert!(text[..e.span.end].ends_with("environment-variables)"));
        assert!(e.diagnosis.fragmentation_suspected);
        assert_eq!(e.diagnosis.shortfall_bytes, 20 * 1048576 - (5.19f64 * 1048576.0).round() as u64);
    }

    #[test]
    fn wrapped_and_prefixed_messages_parse() {
        let wrapped: String =
            CURRENT.as_bytes().chunks(37).map(|c| format!("[rank3]: {}\n", String::from_utf8_lossy(c))).collect();
        let interleaved = wrapped.lines().map(|l| format!("{l}\n[rank0]: unrelated memory line\n")).collect::<String>();
        let errors = explain(&interleaved);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].rank, Some(3));
        assert_eq!(errors[0].numbers.free_bytes, (5.19f64 * 1048576.0).round() as u64);
        assert_eq!(errors[0].numbers.this_process_bytes, Some((23.55f64 * 1073741824.0).round() as u64));
    }

    #[test]
    fn a_line_break_anywhere_in_the_anchor_is_read_through() {
        let anchor_end = CURRENT.find("allocate").unwrap() + "allocate".len();
        for cut in CURRENT.find("CUDA").unwrap()..anchor_end {
            let text = format!("noise\n{}\n{}\nmore noise\n", &CURRENT[..cut], &CURRENT[cut..]);
            assert_eq!(explain(&text).len(), 1, "cut at {cut}: {:?}", &CURRENT[cut.saturating_sub(5)..cut + 5]);
        }
    }

    #[test]
    fn each_rank_counts_and_repeats_do_not() {
        let other_gpu = CURRENT.replace("GPU 0 has", "GPU 1 has");
        let text = format!("[rank0]: {CURRENT}\n[rank1]: {other_gpu}\nRoot Cause:\n  {CURRENT}\n");
        let errors = explain(&text);
        assert_eq!(errors.iter().map(|e| e.rank).collect::<Vec<_>>(), [Some(0), Some(1)]);
        assert_eq!(errors.iter().map(|e| e.line).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn a_message_longer_than_the_short_window_parses() {
        let processes: String = (0..40).map(|pid| format!("Process {pid} has 1.00 GiB memory in use. ")).collect();
        let text = CURRENT.replace("Including non-PyTorch", &format!("{processes}Including non-PyTorch"));
        let errors = explain(&text);
        assert_eq!(errors[0].numbers.other_processes.as_ref().map(Vec::len), Some(40));
    }

    #[test]
    fn ansi_colours_are_ignored() {
        let text = format!("\x1b[1;31m{}\x1b[0m{}\n", &CURRENT[..40], &CURRENT[40..]);
        assert_eq!(explain(&text).len(), 1);
    }

    #[test]
    fn no_message_no_errors() {
        assert!(explain("loss 1.2\nGPU memory: 40 GiB\nTried nothing\n").is_empty());
        assert!(explain("").is_empty());
        assert!(explain("CUDA out of memory. Tried to allocate").is_empty());
    }

    #[test]
    fn traceback_site_feeds_the_levers() {
        let text = format!(
            "Traceback (most recent call last):\n  File \"/w/train.py\", line 9, in step\n    optimizer.step()\n{CURRENT}\n"
        );
        let errors = explain(&text);
        let site = errors[0].site.as_ref().unwrap();
        assert_eq!(site.component, Some(Component::Optimizer));
        assert!(errors[0].diagnosis.levers[0].title.contains("8-bit"));
    }

    #[test]
    fn levers_from_a_config_replace_the_static_table() {
        let mut error = explain(CURRENT).remove(0);
        let levers = vec![
            Lever { title: "gradient checkpointing".into(), saves_bytes: 1 << 30, fixes: vec![] },
            Lever { title: "tiny".into(), saves_bytes: 1 << 20, fixes: vec![] },
        ];
        let choice = error.apply_levers(&levers);
        assert!(choice.sufficient);
        assert_eq!(choice.chosen, [0]);
        let titles: Vec<&str> = error.diagnosis.advice().map(|a| a.title.as_str()).collect();
        assert_eq!(titles.len(), 2);
        assert!(titles[0].contains("expandable_segments"));
        assert_eq!(titles[1], "gradient checkpointing");
    }

    /// Bytes of the log that `explain(text)` reads (cleans or compacts), per byte of `text`.
    fn bytes_read_per_byte(text: &str) -> (Vec<OomError>, f64) {
        scan::BYTES_READ.with(|read| read.set(0));
        let errors = explain(text);
        let read = scan::BYTES_READ.with(std::cell::Cell::get);
        (errors, read as f64 / text.len() as f64)
    }

    #[test]
    fn many_messages_stay_linear() {
        let text = format!("{CURRENT}\n").repeat(2000);
        let (errors, per_byte) = bytes_read_per_byte(&text);
        // Identical numbers are one event; the scan itself must not be quadratic: each byte
        // is read a bounded number of times (windows of a few lines), whatever the log's length.
        assert_eq!(errors.len(), 1);
        assert!(per_byte < 8.0, "{per_byte:.1} bytes read per byte of log");
    }

    #[test]
    fn never_panics_on_hostile_input() {
        let mut text = String::new();
        for i in 0..2000 {
            text.push_str(&format!("memory Tried {i} \x1b[ out of memory. Tried to allocate 1.00 é\n"));
        }
        text.push_str(&CURRENT[..CURRENT.len() / 2]);
        let (errors, per_byte) = bytes_read_per_byte(&text);
        assert!(errors.is_empty());
        assert!(per_byte < 8.0, "{per_byte:.1} bytes read per byte of log");
    }
}
