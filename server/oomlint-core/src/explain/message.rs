//! The CUDA out-of-memory message, parsed to bytes.
//!
//! Templates (`c10/cuda/CUDACachingAllocator.cpp`, `DeviceCachingAllocator::malloc`), read
//! on whitespace-free text so wrapped lines parse too:
//! - current: `CUDA out of memory. Tried to allocate A. GPU d has a total capacity of T of
//!   which F is free. [PROC][M allowed; ]Of the allocated memory P is allocated by PyTorch,
//!   [with Y allocated in private pools (e.g., CUDA Graphs), ]and U is reserved by PyTorch but
//!   unallocated. [tail]` — PROC is `Including non-PyTorch memory, this process has X memory in
//!   use. ` or `Process PID has X memory in use. `, repeated; P includes Y.
//! - 2.1 era: the same with `total capacty` and the `max_split_size_mb` tail.
//! - before 2.1: `CUDA out of memory. Tried to allocate A (GPU d; T total capacity; P already
//!   allocated; F free; [M allowed; ]R reserved in total by PyTorch) [tail]`; 1.0–1.3 ended
//!   with `C cached)`, the cached-but-unallocated bytes.
//!
//! Sizes come from `format_size`: `N bytes` up to 1024, else two decimals in KiB, MiB or GiB.

use super::cursor::Cursor;

/// Which template the message follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Form {
    /// PyTorch 2.2 and later.
    Current,
    /// PyTorch 2.1: "total capacty", `max_split_size_mb` advice.
    Capacty,
    /// Before PyTorch 2.1: the parenthesised form.
    Legacy,
}

/// Memory another process holds on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub(crate) struct ProcessUse {
    pub(crate) pid: u32,
    pub(crate) bytes: u64,
}

/// The numbers of one OOM message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Numbers {
    pub(crate) form: Form,
    pub requested_bytes: u64,
    pub device: u32,
    pub total_bytes: u64,
    pub free_bytes: u64,
    /// `Including non-PyTorch memory, this process has X memory in use.`
    pub(crate) this_process_bytes: Option<u64>,
    /// `Process PID has X memory in use.` entries; `None` when the message has no process lines.
    pub(crate) other_processes: Option<Vec<ProcessUse>>,
    /// `M allowed;` — the cap a per-process memory fraction sets.
    pub(crate) allowed_bytes: Option<u64>,
    /// Allocated by PyTorch (current form: including private pools).
    pub(crate) allocated_bytes: u64,
    pub(crate) private_pool_bytes: Option<u64>,
    /// Reserved but unallocated (derived as reserved − allocated for the legacy form).
    pub(crate) reserved_unallocated_bytes: u64,
    /// Reserved in total (derived as allocated + unallocated for the current form).
    pub(crate) reserved_bytes: u64,
    /// The allocator variable the message's advice names, e.g. `PYTORCH_CUDA_ALLOC_CONF`.
    pub(crate) advice_variable: Option<String>,
}

/// The anchor every variant shares, lower-cased and without whitespace.
pub(crate) const ANCHOR: &[u8] = b"outofmemory.triedtoallocate";

/// Parses the message whose anchor (`outofmemory.Triedtoallocate`) starts at compact offset
/// `anchor`; returns the numbers and the compact offset just past the message.
pub(crate) fn parse(bytes: &[u8], anchor: usize) -> Option<(Numbers, usize)> {
    let mut c = Cursor { bytes, at: anchor + ANCHOR.len() };
    let requested = c.size()?;
    if c.eat("(GPU") {
        return legacy(&mut c, requested);
    }
    c.expect(".GPU")?;
    let device = u32::try_from(c.digits()?).ok()?;
    c.expect("hasatotalcapac")?;
    let form = if c.eat("ity") {
        Form::Current
    } else {
        c.expect("ty")?;
        Form::Capacty
    };
    c.expect("of")?;
    let total = c.size()?;
    c.expect("ofwhich")?;
    let free = c.size()?;
    c.expect("isfree.")?;
    let mut this_process = None;
    let mut others: Option<Vec<ProcessUse>> = None;
    loop {
        if let Some(x) = c.attempt(|c| {
            c.expect("Includingnon-PyTorchmemory,thisprocesshas")?;
            let x = c.size()?;
            c.expect("memoryinuse.")?;
            Some(x)
        }) {
            this_process = Some(this_process.unwrap_or(0) + x);
            others.get_or_insert_with(Vec::new);
            continue;
        }
        if let Some(p) = c.attempt(|c| {
            c.expect("Process")?;
            let pid = u32::try_from(c.digits()?).ok()?;
            c.expect("has")?;
            let bytes = c.size()?;
            c.expect("memoryinuse.")?;
            Some(ProcessUse { pid, bytes })
        }) {
            others.get_or_insert_with(Vec::new).push(p);
            continue;
        }
        break;
    }
    let allowed = c.attempt(|c| {
        let m = c.size()?;
        c.expect("allowed;")?;
        Some(m)
    });
    c.expect("Oftheallocatedmemory")?;
    let allocated = c.size()?;
    c.expect("isallocatedbyPyTorch,")?;
    let pool = c.attempt(|c| {
        c.expect("with")?;
        let y = c.size()?;
        c.expect("allocatedinprivatepools(e.g.,CUDAGraphs),")?;
        Some(y)
    });
    c.expect("and")?;
    let unallocated = c.size()?;
    c.expect("isreservedbyPyTorchbutunallocated.")?;
    let advice_variable = tail(&mut c);
    let numbers = Numbers {
        form,
        requested_bytes: requested,
        device,
        total_bytes: total,
        free_bytes: free,
        this_process_bytes: this_process,
        other_processes: others,
        allowed_bytes: allowed,
        allocated_bytes: allocated,
        private_pool_bytes: pool,
        reserved_unallocated_bytes: unallocated,
        reserved_bytes: allocated.saturating_add(unallocated),
        advice_variable,
    };
    Some((numbers, c.at))
}

/// `(GPU d; T total capacity; P already allocated; F free; [M allowed; ]R reserved in total by PyTorch)`.
fn legacy(c: &mut Cursor, requested: u64) -> Option<(Numbers, usize)> {
    let device = u32::try_from(c.digits()?).ok()?;
    c.expect(";")?;
    let total = c.size()?;
    c.expect("totalcapacity;")?;
    let allocated = c.size()?;
    c.expect("alreadyallocated;")?;
    let free = c.size()?;
    c.expect("free;")?;
    let allowed = c.attempt(|c| {
        let m = c.size()?;
        c.expect("allowed;")?;
        Some(m)
    });
    let last = c.size()?;
    // PyTorch 1.0–1.3 printed the cached-but-unallocated bytes instead of the reserved total.
    let reserved = if c.eat("cached)") {
        allocated.saturating_add(last)
    } else {
        c.expect("reservedintotalbyPyTorch)").map(|_| last)?
    };
    let advice_variable = tail(c);
    let numbers = Numbers {
        form: Form::Legacy,
        requested_bytes: requested,
        device,
        total_bytes: total,
        free_bytes: free,
        this_process_bytes: None,
        other_processes: None,
        allowed_bytes: allowed,
        allocated_bytes: allocated,
        private_pool_bytes: None,
        reserved_unallocated_bytes: reserved.saturating_sub(allocated),
        reserved_bytes: reserved,
        advice_variable,
    };
    Some((numbers, c.at))
}

/// The advice tail, when present: consumes it and returns the allocator variable it names.
///
/// Current: `If reserved but unallocated memory is large try setting
/// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation
/// for Memory Management  (URL)`; older: `… try setting max_split_size_mb to avoid fragmentation.
/// See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF`.
fn tail(c: &mut Cursor) -> Option<String> {
    let start = c.at;
    if !(c.eat("Ifreservedbutunallocatedmemoryislarge") || c.eat("Ifreservedmemoryis>>allocatedmemory")) {
        return None;
    }
    let variable = c.attempt(|c| {
        c.expect("trysetting")?;
        c.eat("PYTORCH_").then_some(())?;
        let name_len = c.bytes[c.at..].iter().take_while(|b| b.is_ascii_uppercase() || **b == b'_').count();
        let name = format!("PYTORCH_{}", std::str::from_utf8(&c.bytes[c.at..c.at + name_len]).ok()?);
        c.at += name_len;
        Some(name)
    });
    if !c.skip_past("MemoryManagement", 200) {
        c.at = start;
        return None;
    }
    let after_management = c.at;
    if c.eat("(") {
        if !c.skip_past(")", 200) {
            c.at = after_management;
        }
    } else if c.eat("and") {
        let name_len = c.bytes[c.at..].iter().take_while(|b| b.is_ascii_uppercase() || **b == b'_').count();
        c.at += name_len;
    }
    variable
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(text: &str) -> Vec<u8> {
        text.bytes().filter(|b| !b.is_ascii_whitespace()).collect()
    }

    fn numbers(text: &str) -> Numbers {
        let bytes = compact(text);
        let lower = bytes.to_ascii_lowercase();
        let anchor = lower.windows(ANCHOR.len()).position(|w| w == ANCHOR).expect("anchor");
        parse(&bytes, anchor).expect("parses").0
    }

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    #[test]
    fn current_template_with_processes_and_pool() {
        let n = numbers(
            "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of 79.15 GiB of which 3.19 MiB is free. \
             Process 4242 has 10.00 GiB memory in use. Including non-PyTorch memory, this process has 69.14 GiB memory in use. \
             Of the allocated memory 64.00 GiB is allocated by PyTorch, with 2.00 GiB allocated in private pools (e.g., CUDA Graphs), \
             and 4.50 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting \
             PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  \
             (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        );
        assert_eq!(n.form, Form::Current);
        assert_eq!(n.requested_bytes, 20 * MIB);
        assert_eq!(n.device, 1);
        assert_eq!(n.total_bytes, (79.15 * GIB as f64).round() as u64);
        assert_eq!(n.free_bytes, (3.19 * MIB as f64).round() as u64);
        assert_eq!(n.other_processes, Some(vec![ProcessUse { pid: 4242, bytes: 10 * GIB }]));
        assert_eq!(n.this_process_bytes, Some((69.14 * GIB as f64).round() as u64));
        assert_eq!(n.allocated_bytes, 64 * GIB);
        assert_eq!(n.private_pool_bytes, Some(2 * GIB));
        assert_eq!(n.reserved_unallocated_bytes, (4.5 * GIB as f64) as u64);
        assert_eq!(n.reserved_bytes, 64 * GIB + (4.5 * GIB as f64) as u64);
        assert_eq!(n.advice_variable.as_deref(), Some("PYTORCH_CUDA_ALLOC_CONF"));
    }

    #[test]
    fn capacty_form_and_bytes_unit() {
        let n = numbers(
            "CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacty of 23.65 GiB of which 0 bytes is free. \
             Of the allocated memory 22.10 GiB is allocated by PyTorch, and 1014.50 KiB is reserved by PyTorch but unallocated. \
             If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  \
             See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
        );
        assert_eq!(n.form, Form::Capacty);
        assert_eq!(n.free_bytes, 0);
        assert_eq!(n.reserved_unallocated_bytes, (1014.5 * 1024.0) as u64);
        assert_eq!(n.other_processes, None);
        assert_eq!(n.advice_variable, None);
    }

    #[test]
    fn legacy_form_with_allowed() {
        let n = numbers(
            "RuntimeError: CUDA out of memory. Tried to allocate 1.53 GiB (GPU 0; 15.78 GiB total capacity; 12.56 GiB already \
             allocated; 1.02 GiB free; 12.00 GiB allowed; 13.70 GiB reserved in total by PyTorch) If reserved memory is >> \
             allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management \
             and PYTORCH_CUDA_ALLOC_CONF",
        );
        assert_eq!(n.form, Form::Legacy);
        assert_eq!(n.allowed_bytes, Some(12 * GIB));
        assert_eq!(n.reserved_bytes, (13.70 * GIB as f64).round() as u64);
        assert_eq!(n.reserved_unallocated_bytes, n.reserved_bytes - n.allocated_bytes);
    }

    #[test]
    fn pytorch_1_0_cached_form() {
        let n = numbers(
            "RuntimeError: CUDA out of memory. Tried to allocate 12.00 MiB (GPU 0; 11.17 GiB total capacity; 10.66 GiB \
             already allocated; 3.81 MiB free; 180.35 MiB cached)",
        );
        assert_eq!(n.form, Form::Legacy);
        assert_eq!(n.reserved_unallocated_bytes, (180.35 * MIB as f64).round() as u64);
        assert_eq!(n.reserved_bytes, n.allocated_bytes + n.reserved_unallocated_bytes);
    }

    #[test]
    fn message_end_covers_the_tail() {
        let text = "CUDA out of memory. Tried to allocate 512 bytes (GPU 0; 1.00 GiB total capacity; 0 bytes already allocated; \
                    0 bytes free; 0 bytes reserved in total by PyTorch)NEXT";
        let bytes = compact(text);
        let (_, end) =
            parse(&bytes, bytes.to_ascii_lowercase().windows(ANCHOR.len()).position(|w| w == ANCHOR).unwrap()).unwrap();
        assert_eq!(&bytes[end..], b"NEXT");
    }

    #[test]
    fn truncated_messages_do_not_parse() {
        for text in [
            "CUDA out of memory. Tried to allocate 20.00 MiB",
            "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of",
            "CUDA out of memory. Tried to allocate x MiB (GPU 0; 1.00 GiB total capacity;",
            "CUDA out of memory. Tried to allocate 1e999 GiB. GPU 0",
        ] {
            let bytes = compact(text);
            let anchor = bytes.to_ascii_lowercase().windows(ANCHOR.len()).position(|w| w == ANCHOR).unwrap();
            assert!(parse(&bytes, anchor).is_none(), "{text}");
        }
    }
}
