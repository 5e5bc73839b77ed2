//! Which PyTorch wrote a log, as far as the log says, and so which allocator variable to
//! recommend.

use super::diagnose::{CUDA_VARIABLE, GENERIC_VARIABLE, HIP_VARIABLE};

/// What a log says about the PyTorch that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TorchHints {
    /// `(major, minor)` from a version banner, if one is printed.
    pub(crate) version: Option<(u32, u32)>,
    /// PyTorch warned "PYTORCH_CUDA_ALLOC_CONF is deprecated, use PYTORCH_ALLOC_CONF instead".
    deprecation_warning: bool,
}

/// Version banners: Unsloth (`Torch: 2.5.1+cu124.`), `collect_env` and `transformers env`
/// (`PyTorch version: …`, `PyTorch version (GPU?): …`), pins (`torch==…`).
const VERSION_MARKERS: [&str; 5] =
    ["Torch: ", "PyTorch version: ", "PyTorch version (GPU?): ", "torch==", "torch version: "];

/// The first release whose `PYTORCH_ALLOC_CONF` reliably carries `expandable_segments` for
/// CUDA: 2.9.1 ignores it there (pytorch issue #183387), 2.11 is reported fixed.
const NEW_VARIABLE_WORKS: (u32, u32) = (2, 11);

impl TorchHints {
    pub(crate) fn read(text: &str) -> Self {
        let version = VERSION_MARKERS.iter().find_map(|marker| {
            let at = text.find(marker)? + marker.len();
            let mut parts = text[at..].split(|c: char| !c.is_ascii_digit());
            Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
        });
        Self { version, deprecation_warning: text.contains("PYTORCH_CUDA_ALLOC_CONF is deprecated") }
    }

    /// The variable to recommend: the old name works on every release (2.11+ only warns),
    /// the new one from 2.11, or when the message itself names it.
    pub(crate) fn allocator_variable(&self, named_by_message: Option<&str>) -> &'static str {
        let new_works = self.version.is_some_and(|v| v >= NEW_VARIABLE_WORKS);
        if named_by_message == Some(HIP_VARIABLE) {
            HIP_VARIABLE
        } else if new_works || named_by_message == Some(GENERIC_VARIABLE) {
            GENERIC_VARIABLE
        } else {
            CUDA_VARIABLE
        }
    }

    /// Why the deprecated name is still recommended, when the log's warning says otherwise.
    pub(crate) fn variable_note(&self, variable: &str) -> Option<String> {
        (self.deprecation_warning && variable == CUDA_VARIABLE).then(|| {
            "this PyTorch warns that PYTORCH_CUDA_ALLOC_CONF is deprecated, but 2.9.1 ignores expandable_segments set through PYTORCH_ALLOC_CONF (reported fixed in 2.11); the old name works on every release, and PYTORCH_ALLOC_CONF wins when both are set".to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURRENT: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.57 GiB of which 5.19 MiB is free. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 212.41 MiB is reserved by PyTorch but unallocated.";

    #[test]
    fn the_variable_follows_the_torch_version() {
        let warning = "[W1120 14:44:07.101109672 AllocatorConfig.cpp:28] Warning: PYTORCH_CUDA_ALLOC_CONF is deprecated, use PYTORCH_ALLOC_CONF instead";
        let title = |text: &str| super::super::explain(text)[0].diagnosis.situational[0].title.clone();
        // 2.9.1 warns but ignores the new name for expandable_segments: keep the old one, and say why.
        let text = format!("{warning}\n{CURRENT}\n");
        assert!(title(&text).starts_with("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
        assert!(super::super::explain(&text)[0].diagnosis.findings.iter().any(|f| f.contains("2.9.1 ignores")));
        let text = format!("O^O/ \\_/ \\    Torch: 2.11.0+cu128. CUDA: 9.0.\n{warning}\n{CURRENT}\n");
        assert!(title(&text).starts_with("Set PYTORCH_ALLOC_CONF=expandable_segments:True"));
        assert!(!super::super::explain(&text)[0].diagnosis.findings.iter().any(|f| f.contains("2.9.1 ignores")));
        assert!(title(&format!("- PyTorch version (GPU?): 2.10.0+cu126 (True)\n{CURRENT}"))
            .starts_with("Set PYTORCH_CUDA_ALLOC_CONF="));
        assert!(title(CURRENT).starts_with("Set PYTORCH_CUDA_ALLOC_CONF="));
        assert_eq!(TorchHints::read("torch==2.9.1\n").version, Some((2, 9)));
        assert_eq!(TorchHints::read("Torch: abc").version, None);
    }
}
