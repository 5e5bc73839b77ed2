//! vLLM's start-up memory checks, parsed to numbers.
//!
//! Templates, read on lower-cased whitespace-free text (so wrapped lines parse too):
//! - no KV cache at all: `No available memory for the cache blocks. Try increasing
//!   `gpu_memory_utilization` when initializing the engine.` — V0's `raise_if_cache_size_invalid`
//!   (`vllm/worker/worker.py`) and V1's `check_enough_kv_cache_memory`
//!   (`vllm/v1/core/kv_cache_utils.py`; later `_check_enough_kv_cache_memory`, which adds
//!   `See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.`).
//! - V0, the maximum length does not fit: `The model's max seq len (N) is larger than the maximum
//!   number of tokens that can be stored in KV cache (M). Try increasing …` (`worker.py`; the CPU
//!   and OpenVINO workers name `VLLM_CPU_KVCACHE_SPACE` / `VLLM_OPENVINO_KVCACHE_SPACE` instead).
//! - V1, the same: `To serve at least one request with the models's max seq len (N), (X GiB KV
//!   cache is needed, which is larger than the available KV cache memory (Y GiB). [Based on the
//!   available memory, the estimated maximum model length is Z. ]Try increasing …`
//!   (`kv_cache_utils.py`; the first V1 releases print `GB` for bytes / 1024³ and no estimate,
//!   later ones `GiB` through `format_gib`; the newest spell it `model's`).
//! - V1, before any profiling: `Free memory on device [cuda:0 ](F/T GiB) on startup is less than
//!   desired GPU memory utilization (U, R GiB). Decrease GPU memory utilization or reduce GPU
//!   memory used by other processes.` (`vllm/v1/worker/gpu_worker.py` `init_device`, R = T × U).
//!
//! The profiling lines logged before the check ([`Profile`]) give the budget the KV cache was
//! left: `the current vLLM instance can use total_gpu_memory (T GiB) x gpu_memory_utilization
//! (U) = R GiB`, `model weights take W GiB; non_torch_memory takes N GiB; PyTorch activation
//! peak memory takes A GiB; the rest of the memory reserved for KV Cache is K GiB.` (V0
//! `worker.py` `determine_num_available_blocks`, early V1 `gpu_worker.py`), and V1's `Available
//! KV cache memory: K GiB` (`gpu_worker.py` `determine_available_memory`).

use super::cursor::Cursor;
use super::scan::Log;

/// Which start-up check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VllmCheck {
    /// No memory was left for the KV cache.
    NoCacheBlocks,
    /// The KV cache cannot hold one sequence of `max_model_len` tokens.
    MaxLenKvCache,
    /// Free memory at start-up is below `gpu_memory_utilization × total`.
    FreeMemory,
}

impl VllmCheck {
    /// The short code reports show.
    pub fn code(self) -> &'static str {
        match self {
            VllmCheck::NoCacheBlocks => "vllm-no-cache-blocks",
            VllmCheck::MaxLenKvCache => "vllm-max-len-kv-cache",
            VllmCheck::FreeMemory => "vllm-free-memory",
        }
    }
}

/// The numbers of one vLLM start-up failure; `None` where the message does not print them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VllmNumbers {
    pub max_model_len: Option<u64>,
    /// V0: the tokens the KV cache can store (`block_size × num_gpu_blocks`).
    pub kv_cache_tokens: Option<u64>,
    /// V1: the KV cache one request of `max_model_len` needs, and the KV cache memory left.
    pub needed_kv_bytes: Option<u64>,
    pub available_kv_bytes: Option<u64>,
    /// V1: vLLM's own estimate of the longest `max_model_len` the available memory holds.
    pub estimated_max_len: Option<u64>,
    /// `Free memory on device (F/T GiB)`.
    pub free_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
    pub gpu_memory_utilization: Option<f64>,
    /// `T × U`, what vLLM asked for.
    pub requested_bytes: Option<u64>,
    /// The setting the message's advice names, when it is not `gpu_memory_utilization`
    /// (`VLLM_CPU_KVCACHE_SPACE` on the CPU backend).
    pub knob: Option<String>,
}

/// vLLM's memory profiling before the check: sizes in GiB as printed (the KV cache share
/// may be negative).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Profile {
    pub total_gib: Option<f64>,
    pub utilization: Option<f64>,
    pub weights_gib: Option<f64>,
    pub non_torch_gib: Option<f64>,
    pub activation_gib: Option<f64>,
    pub kv_cache_gib: Option<f64>,
}

impl Profile {
    /// Reads the profiling lines among `lines` (later lines win).
    pub(crate) fn read(log: &Log, lines: impl Iterator<Item = usize>) -> Profile {
        let mut p = Profile::default();
        for l in lines {
            let text = log.clean(l);
            if let Some(t) = number_after(&text, "total_gpu_memory (") {
                p.total_gib = Some(t);
                p.utilization = number_after(&text, "gpu_memory_utilization (").or(p.utilization);
            }
            if let Some(w) = number_after(&text, "model weights take ") {
                p.weights_gib = Some(w);
            }
            if let Some(n) = number_after(&text, "non_torch_memory takes ") {
                p.non_torch_gib = Some(n);
            }
            if let Some(a) = number_after(&text, "activation peak memory takes ") {
                p.activation_gib = Some(a);
            }
            if let Some(k) = number_after(&text, "reserved for KV Cache is ")
                .or_else(|| number_after(&text, "Available KV cache memory: "))
            {
                p.kv_cache_gib = Some(k);
            }
        }
        p
    }
}

/// The number (optionally negative, with decimals) right after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> Option<f64> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let len = rest.char_indices().take_while(|&(i, c)| c.is_ascii_digit() || c == '.' || (i == 0 && c == '-')).count();
    rest[..len].parse().ok()
}

/// The anchors, lower-cased and without whitespace, each with the check it starts.
pub(crate) const ANCHORS: [(&[u8], VllmCheck); 4] = [
    (b"noavailablememoryforthecacheblocks", VllmCheck::NoCacheBlocks),
    (b"maxseqlen(", VllmCheck::MaxLenKvCache),
    (b"freememoryondevice", VllmCheck::FreeMemory),
    (b"toserveatleastonerequestwiththemodel", VllmCheck::MaxLenKvCache),
];

/// Parses the message whose anchor (one of [`ANCHORS`]) starts at `anchor` of `lower`
/// (lower-cased compact text); returns the check, its numbers, and the compact range of the message.
pub(crate) fn parse(lower: &[u8], anchor: usize) -> Option<(VllmCheck, VllmNumbers, usize, usize)> {
    let mut c = Cursor { bytes: lower, at: anchor };
    let mut n = VllmNumbers::default();
    let mut start = anchor;
    let check = if c.eat("noavailablememoryforthecacheblocks.") {
        // The advice always follows; without it this is vLLM's source quoted in a traceback.
        if !lower[c.at..].starts_with(b"tryincreasing") {
            return None;
        }
        VllmCheck::NoCacheBlocks
    } else if c.eat("freememoryondevice") {
        // An optional device name (`cuda:0`) before the parenthesis.
        let name = c.bytes[c.at..].iter().take(24).position(|&b| b == b'(')?;
        c.at += name + 1;
        n.free_bytes = Some(c.gib(&["gib", "gb"], false)?);
        c.expect("/")?;
        n.total_bytes = Some(c.gib(&["gib", "gb"], true)?);
        c.expect(")onstartupislessthandesiredgpumemoryutilization(")?;
        n.gpu_memory_utilization = Some(c.number()?);
        c.expect(",")?;
        n.requested_bytes = Some(c.gib(&["gib", "gb"], true)?);
        c.expect(").")?;
        c.eat("decreasegpumemoryutilizationorreducegpumemoryusedbyotherprocesses.");
        return Some((VllmCheck::FreeMemory, n, start, c.at));
    } else {
        if c.eat("toserveatleastonerequestwiththe") {
            (c.eat("models'smaxseqlen(") || c.eat("model'smaxseqlen(")).then_some(())?;
        } else {
            c.expect("maxseqlen(")?;
            // V0 starts with `The model's`; keep it in the message.
            let prefix = b"themodel's";
            if anchor >= prefix.len() && &lower[anchor - prefix.len()..anchor] == prefix {
                start = anchor - prefix.len();
            }
        }
        n.max_model_len = Some(c.whole()?);
        c.expect(")")?;
        if c.eat("islargerthanthemaximumnumberoftokensthatcanbestoredinkvcache(") {
            n.kv_cache_tokens = Some(c.whole()?);
            c.expect(").")?;
        } else {
            c.expect(",(")?;
            n.needed_kv_bytes = Some(c.gib(&["gib", "gb"], true)?);
            c.expect("kvcacheisneeded,whichislargerthantheavailablekvcachememory(")?;
            n.available_kv_bytes = Some(c.gib(&["gib", "gb"], true)?);
            c.expect(").")?;
            if c.eat("basedontheavailablememory,theestimatedmaximummodellengthis") {
                n.estimated_max_len = Some(c.whole()?);
                c.expect(".")?;
            }
        }
        VllmCheck::MaxLenKvCache
    };
    n.knob = tail(&mut c);
    Some((check, n, start, c.at))
}

/// The advice sentence (`Try increasing `X` …`) and the documentation link, when present;
/// returns the setting named first when it is not `gpu_memory_utilization`.
fn tail(c: &mut Cursor) -> Option<String> {
    if !c.eat("tryincreasing") {
        return None;
    }
    let knob = c.eat("`").then(|| {
        let len = c.bytes[c.at..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        String::from_utf8_lossy(&c.bytes[c.at..c.at + len]).into_owned()
    });
    c.skip_past(".", 300);
    let before_link = c.at;
    if c.eat("seehttps://docs.vllm.ai") && !c.skip_past("formoredetails.", 200) {
        c.at = before_link;
    }
    knob.filter(|k| k != "gpu_memory_utilization").map(|k| k.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(text: &str) -> (VllmCheck, VllmNumbers) {
        let lower: Vec<u8> =
            text.bytes().filter(|b| !b.is_ascii_whitespace()).map(|b| b.to_ascii_lowercase()).collect();
        let anchor =
            ANCHORS.iter().filter_map(|(a, _)| lower.windows(a.len()).position(|w| w == *a)).min().expect("anchor");
        let (check, n, _, _) = parse(&lower, anchor).expect("parses");
        (check, n)
    }

    fn gib(x: f64) -> u64 {
        (x * 1_073_741_824.0).round() as u64
    }

    #[test]
    fn v0_max_len() {
        let (check, n) = numbers("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (13104). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.");
        assert_eq!(check, VllmCheck::MaxLenKvCache);
        assert_eq!((n.max_model_len, n.kv_cache_tokens), (Some(32768), Some(13104)));
        assert_eq!(n.knob, None);
        let (_, cpu) = numbers("The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (13104). Try increasing `VLLM_CPU_KVCACHE_SPACE` or decreasing `max_model_len` when initializing the engine.");
        assert_eq!(cpu.knob.as_deref(), Some("VLLM_CPU_KVCACHE_SPACE"));
    }

    #[test]
    fn v1_max_len_in_each_release_spelling() {
        let (_, n) = numbers("To serve at least one request with the models's max seq len (8192), (0.35 GiB KV cache is needed, which is larger than the available KV cache memory (0.29 GiB). Based on the available memory, the estimated maximum model length is 6656. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
        assert_eq!(n.max_model_len, Some(8192));
        assert_eq!((n.needed_kv_bytes, n.available_kv_bytes), (Some(gib(0.35)), Some(gib(0.29))));
        assert_eq!(n.estimated_max_len, Some(6656));
        let (_, early) = numbers("To serve at least one request with the models's max seq len (131072), (16.00 GB KV cache is needed, which is larger than the available KV cache memory (4.21 GB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.");
        assert_eq!((early.needed_kv_bytes, early.estimated_max_len), (Some(gib(16.0)), None));
        let (_, newest) = numbers("To serve at least one request with the model's max seq len (60000), (8.24 GiB KV cache is needed, which is larger than the available KV cache memory (4.00 GiB). Based on the available memory, the estimated maximum model length is 29056. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine.");
        assert_eq!(newest.estimated_max_len, Some(29056));
    }

    #[test]
    fn no_cache_blocks_and_free_memory() {
        let (check, n) = numbers("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.");
        assert_eq!(check, VllmCheck::NoCacheBlocks);
        assert_eq!(n, VllmNumbers::default());
        let (check, n) = numbers("ValueError: Free memory on device cuda:0 (2.6/121.63 GiB) on startup is less than desired GPU memory utilization (0.08, 9.73 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
        assert_eq!(check, VllmCheck::FreeMemory);
        assert_eq!((n.free_bytes, n.total_bytes), (Some(gib(2.6)), Some(gib(121.63))));
        assert_eq!((n.gpu_memory_utilization, n.requested_bytes), (Some(0.08), Some(gib(9.73))));
        let (_, no_name) = numbers("Free memory on device (37.95/79.25 GiB) on startup is less than desired GPU memory utilization (0.9, 71.33 GiB).");
        assert_eq!(no_name.free_bytes, Some(gib(37.95)));
    }

    #[test]
    fn truncated_messages_do_not_parse() {
        for text in [
            "max seq len (32768) is larger than",
            "To serve at least one request with the models's max seq len (8192), (0.35 GiB KV",
            "Free memory on device cuda:0 (2.6/121.63 GiB) on startup",
            "the max seq len (abc)",
            "raise ValueError(\"No available memory for the cache blocks. \"",
        ] {
            let lower: Vec<u8> =
                text.bytes().filter(|b| !b.is_ascii_whitespace()).map(|b| b.to_ascii_lowercase()).collect();
            let anchor =
                ANCHORS.iter().filter_map(|(a, _)| lower.windows(a.len()).position(|w| w == *a)).min().unwrap();
            assert!(parse(&lower, anchor).is_none(), "{text}");
        }
    }

    #[test]
    fn profile_lines() {
        let text = "INFO 12-22 10:55:34 worker.py:241] the current vLLM instance can use total_gpu_memory (79.25GiB) x gpu_memory_utilization (0.15) = 11.89GiB\nINFO worker.py:241] model weights take 8.51GiB; non_torch_memory takes 0.26GiB; PyTorch activation peak memory takes 0.94GiB; the rest of the memory reserved for KV Cache is -2.18GiB.\n";
        let log = Log::new(text);
        let p = Profile::read(&log, 0..log.lines.len());
        assert_eq!((p.total_gib, p.utilization), (Some(79.25), Some(0.15)));
        assert_eq!((p.weights_gib, p.kv_cache_gib), (Some(8.51), Some(-2.18)));
        let v1 = Log::new("(EngineCore_0 pid=9) INFO [gpu_worker.py:276] Available KV cache memory: 1.50 GiB\n");
        assert_eq!(Profile::read(&v1, 0..1).kv_cache_gib, Some(1.5));
        assert_eq!(Profile::read(&v1, 0..0), Profile::default());
    }
}
