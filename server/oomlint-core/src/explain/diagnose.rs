//! From the numbers to a diagnosis: the shortfall, fragmentation, other processes, the
//! allocator's rounding, and advice in order of relevance.

use super::advice::{static_levers, Advice};
use super::message::{Form, Numbers, ProcessUse};
use super::traceback::Site;
use super::units::format_size;

/// The variable the installed PyTorch reads for allocator settings.
pub(crate) const CUDA_VARIABLE: &str = "PYTORCH_CUDA_ALLOC_CONF";
pub(crate) const GENERIC_VARIABLE: &str = "PYTORCH_ALLOC_CONF";
/// The allocator variable PyTorch on ROCm reads (and names in its HIP out-of-memory message).
pub(crate) const HIP_VARIABLE: &str = "PYTORCH_HIP_ALLOC_CONF";

/// Non-PyTorch memory in this process worth pointing out (CUDA context, NCCL, another allocator).
const NOTABLE_OUTSIDE_ALLOCATOR: u64 = 2 << 30;

/// What went wrong and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    /// `requested − free`, never negative.
    pub shortfall_bytes: u64,
    /// `free + reserved-but-unallocated ≥ requested`: the memory exists, not in one piece.
    pub(crate) fragmentation_suspected: bool,
    /// Sentences explaining the numbers, most important first.
    pub findings: Vec<String>,
    /// Advice read from the numbers: other processes, fragmentation, a memory fraction.
    pub(crate) situational: Vec<Advice>,
    /// Config levers: the static table for the component, or the estimator's choice.
    pub levers: Vec<Advice>,
}

impl Diagnosis {
    /// All advice, situational first.
    pub fn advice(&self) -> impl Iterator<Item = &Advice> {
        self.situational.iter().chain(self.levers.iter())
    }
}

/// Diagnoses one message. `variable` is the allocator variable to recommend.
pub(crate) fn diagnose(n: &Numbers, site: Option<&Site>, variable: &str) -> Diagnosis {
    let shortfall = n.requested_bytes.saturating_sub(n.free_bytes);
    // Free memory alone covered the request: not fragmentation, something else refused it.
    let covered = shortfall == 0;
    let fragmentation = !covered && n.free_bytes.saturating_add(n.reserved_unallocated_bytes) >= n.requested_bytes;
    let mut findings = vec![if covered {
        format!(
            "the allocation of {} on GPU {} failed although the driver reported {} free (of {} total): the memory was not really available to this process. Likely causes: another process allocated at the same moment; a per-process memory fraction (torch.cuda.set_per_process_memory_fraction); a driver, MIG or WSL limit below the card's capacity",
            format_size(n.requested_bytes),
            n.device,
            format_size(n.free_bytes),
            format_size(n.total_bytes)
        )
    } else {
        format!(
            "GPU {} needed {} more than the {} free (tried to allocate {} of {} total)",
            n.device,
            format_size(shortfall),
            format_size(n.free_bytes),
            format_size(n.requested_bytes),
            format_size(n.total_bytes)
        )
    }];
    let mut advice = Vec::new();
    let likely_self = likely_self(n);
    if let Some(me) = likely_self {
        findings.push(format!(
            "no process line says \"this process\"; pid {} ({}) holds at least what PyTorch reserved, so it is probably this process seen from outside a container",
            me.pid,
            format_size(me.bytes)
        ));
    }
    let others: Vec<_> = n.other_processes.iter().flatten().filter(|p| Some(*p) != likely_self).collect();
    let others_total: u64 = others.iter().map(|p| p.bytes).sum();
    if others_total > 0 {
        let list: Vec<String> = others.iter().map(|p| format!("pid {}: {}", p.pid, format_size(p.bytes))).collect();
        findings.push(format!(
            "other processes hold {} on this GPU ({}), e.g. a vLLM server or a notebook kernel",
            format_size(others_total),
            list.join(", ")
        ));
        advice.push(Advice {
            title: format!("Stop or move the other processes on GPU {} ({})", n.device, list.join(", ")),
            saves_bytes: Some(others_total),
            fixes: Vec::new(),
        });
    }
    if fragmentation {
        findings.push(format!(
            "fragmentation suspected: {} is reserved by PyTorch but unallocated, so free + cached ({}) covers the request, but not in one piece",
            format_size(n.reserved_unallocated_bytes),
            format_size(n.free_bytes.saturating_add(n.reserved_unallocated_bytes))
        ));
        advice.push(match n.form {
            Form::Legacy => Advice::text(format!(
                "Set {CUDA_VARIABLE}=max_split_size_mb:128 to limit fragmentation (this PyTorch predates expandable_segments, added in 2.1)"
            )),
            _ => Advice::text(format!(
                "Set {variable}=expandable_segments:True so cached segments grow in place instead of fragmenting"
            )),
        });
    }
    if let Some(allowed) = n.allowed_bytes.filter(|&a| a < n.total_bytes) {
        findings.push(format!(
            "a per-process memory fraction caps this process at {} of {} (torch.cuda.set_per_process_memory_fraction or per_process_memory_fraction)",
            format_size(allowed),
            format_size(n.total_bytes)
        ));
        advice.push(Advice {
            title: "Raise or remove the per-process memory fraction".to_owned(),
            saves_bytes: Some(n.total_bytes - allowed),
            fixes: Vec::new(),
        });
    }
    if let Some(outside) = n.this_process_bytes.map(|t| t.saturating_sub(n.reserved_bytes)) {
        if outside >= NOTABLE_OUTSIDE_ALLOCATOR {
            findings.push(format!(
                "{} of this process's memory is outside PyTorch's caching allocator (CUDA context, NCCL buffers, cuBLAS workspaces, or another allocator such as vLLM's)",
                format_size(outside)
            ));
        }
    }
    if let Some(note) = rounding_note(n.requested_bytes) {
        findings.push(note);
    }
    if let Some(site) = site {
        let component = site.component.map_or(String::new(), |c| format!(" — {} grew", c.name()));
        findings.push(format!("allocation site: {}{component}", site.describe()));
    }
    Diagnosis {
        shortfall_bytes: shortfall,
        fragmentation_suspected: fragmentation,
        findings,
        situational: advice,
        levers: static_levers(site.and_then(|s| s.component)),
    }
}

/// Inside a container the driver reports host pids, so PyTorch cannot recognise its own
/// process and prints it as `Process PID`. With no "this process" line, the one process
/// holding at least PyTorch's reserved memory is taken to be this process.
fn likely_self(n: &Numbers) -> Option<&ProcessUse> {
    if n.this_process_bytes.is_some() {
        return None;
    }
    let mut big = n.other_processes.iter().flatten().filter(|p| p.bytes >= n.reserved_bytes);
    match (big.next(), big.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// Explains the allocator's rounding where it changes the reading of "Tried to allocate".
///
/// `get_allocation_size` (`CUDACachingAllocator.cpp`): requests up to 1 MiB take a 2 MiB
/// block, requests under 10 MiB a 20 MiB block, larger ones round up to a multiple of 2 MiB.
pub(crate) fn rounding_note(requested: u64) -> Option<String> {
    const MIB: u64 = 1 << 20;
    match requested {
        r if r == 2 * MIB => Some(
            "\"Tried to allocate 2.00 MiB\" is the allocator's block size, not the tensor: any request up to 1 MiB takes a 2 MiB block, so the tensor was tiny and the GPU was already full".to_owned(),
        ),
        r if r == 20 * MIB => Some(
            "\"Tried to allocate 20.00 MiB\" is the allocator's block size, not the tensor: requests between 1 and 10 MiB take a 20 MiB block, so the GPU was already full before this small tensor".to_owned(),
        ),
        r if r > 20 * MIB && r % (2 * MIB) == 0 => Some(format!(
            "\"Tried to allocate\" is rounded up to a multiple of 2 MiB: the tensor itself was between {} and {}",
            format_size(r - 2 * MIB + 1),
            format_size(r)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::traceback::{Component, Frame};
    use super::*;
    use crate::span::Span;

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    fn numbers() -> Numbers {
        Numbers {
            form: Form::Current,
            requested_bytes: 2 * GIB,
            device: 0,
            total_bytes: 80 * GIB,
            free_bytes: GIB / 2,
            this_process_bytes: None,
            other_processes: None,
            allowed_bytes: None,
            allocated_bytes: 70 * GIB,
            private_pool_bytes: None,
            reserved_unallocated_bytes: GIB,
            reserved_bytes: 71 * GIB,
            advice_variable: None,
        }
    }

    #[test]
    fn a_request_the_free_memory_covers_is_not_fragmentation() {
        let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.57 GiB of which 2.00 GiB is free. Of the allocated memory 20.00 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.";
        let error = &crate::explain::explain(text)[0];
        assert_eq!(error.diagnosis.shortfall_bytes, 0);
        assert!(!error.diagnosis.fragmentation_suspected);
        assert!(
            error.diagnosis.findings[0].contains("failed although the driver reported 2.00 GiB free"),
            "{:?}",
            error.diagnosis.findings
        );
        assert!(error.diagnosis.findings[0].contains("per-process memory fraction"));
    }

    #[test]
    fn shortfall_and_no_fragmentation() {
        let d = diagnose(&numbers(), None, CUDA_VARIABLE);
        assert_eq!(d.shortfall_bytes, 2 * GIB - GIB / 2);
        assert!(!d.fragmentation_suspected);
        assert!(d.situational.is_empty());
        // Without a site the generic levers follow.
        assert!(d.levers[0].title.contains("micro batch"));
    }

    #[test]
    fn fragmentation_recommends_expandable_segments_in_the_given_variable() {
        let n = Numbers { reserved_unallocated_bytes: 3 * GIB / 2, ..numbers() };
        let d = diagnose(&n, None, GENERIC_VARIABLE);
        assert!(d.fragmentation_suspected);
        assert_eq!(
            d.situational[0].title,
            "Set PYTORCH_ALLOC_CONF=expandable_segments:True so cached segments grow in place instead of fragmenting"
        );
        let legacy = Numbers { form: Form::Legacy, ..n };
        assert!(diagnose(&legacy, None, GENERIC_VARIABLE).situational[0].title.contains("max_split_size_mb"));
    }

    #[test]
    fn other_processes_come_first_with_their_pids() {
        let n = Numbers {
            other_processes: Some(vec![ProcessUse { pid: 77, bytes: 20 * GIB }, ProcessUse { pid: 78, bytes: GIB }]),
            ..numbers()
        };
        let d = diagnose(&n, None, CUDA_VARIABLE);
        assert_eq!(d.situational[0].saves_bytes, Some(21 * GIB));
        assert!(d.situational[0].title.contains("pid 77: 20.00 GiB, pid 78: 1024.00 MiB"));
        assert!(d.findings[1].contains("21.00 GiB"));
    }

    #[test]
    fn own_process_seen_from_a_container_is_not_other() {
        let n = Numbers { other_processes: Some(vec![ProcessUse { pid: 2231, bytes: 72 * GIB }]), ..numbers() };
        let d = diagnose(&n, None, CUDA_VARIABLE);
        assert!(d.findings[1].contains("pid 2231 (72.00 GiB)"), "{:?}", d.findings);
        assert!(!d.situational.iter().any(|a| a.title.contains("Stop or move")));
        // With a "this process" line every listed process is another one.
        let n = Numbers { this_process_bytes: Some(72 * GIB), ..n };
        assert!(diagnose(&n, None, CUDA_VARIABLE).situational[0].title.contains("pid 2231"));
    }

    #[test]
    fn memory_fraction_and_outside_memory() {
        let n = Numbers { allowed_bytes: Some(40 * GIB), this_process_bytes: Some(75 * GIB), ..numbers() };
        let d = diagnose(&n, None, CUDA_VARIABLE);
        assert!(d.situational.iter().any(|a| a.saves_bytes == Some(40 * GIB)));
        assert!(d.findings.iter().any(|f| f.starts_with("4.00 GiB of this process's memory is outside")));
    }

    #[test]
    fn site_picks_the_component_levers() {
        let site = Site {
            frame: Frame {
                file: "t.py".into(),
                line: 1,
                function: "f".into(),
                code: Some("optimizer.step()".into()),
                span: Span::default(),
            },
            component: Some(Component::Optimizer),
        };
        let d = diagnose(&numbers(), Some(&site), CUDA_VARIABLE);
        assert!(d.levers[0].title.contains("8-bit"));
        assert!(d.findings.last().unwrap().contains("optimizer grew"));
    }

    #[test]
    fn rounding_notes() {
        assert!(rounding_note(2 * MIB).unwrap().contains("up to 1 MiB"));
        assert!(rounding_note(20 * MIB).unwrap().contains("between 1 and 10 MiB"));
        assert!(rounding_note(64 * MIB).unwrap().contains("between 62.00 MiB and 64.00 MiB"));
        assert_eq!(rounding_note(1_500_000_000), None);
        assert_eq!(rounding_note(512), None);
    }
}
