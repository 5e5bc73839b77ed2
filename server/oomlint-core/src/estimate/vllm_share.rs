//! A colocated vLLM's share of the card: what it takes, what training needs beside it, and
//! the largest fraction that leaves the two the verdict's headroom ([`judge`]). One answer
//! for the `vllm-memory-overcommit` fix and the estimate's vLLM lever.

use super::{judge, Component, Verdict, TIGHT_HEADROOM};

/// What vLLM takes and what training needs beside it, from the estimate's components.
pub(crate) struct VllmClaim {
    pub(crate) vllm: u64,
    pub(crate) training: u64,
    /// Unsloth: the free memory the fraction applies to.
    pub(crate) free_at_start: Option<u64>,
}

impl VllmClaim {
    /// TRL and Axolotl hand vLLM `fraction ×` the card's total memory; Unsloth starts vLLM
    /// first, on `fraction ×` the memory free then, and training uses vLLM's copy of the base
    /// weights (the reservation component is that budget less the shared weights).
    pub(crate) fn of(
        components: &[Component],
        peak: u64,
        total: u64,
        fraction: f64,
        of_free: bool,
    ) -> Option<VllmClaim> {
        let sum = |name: &str| components.iter().filter(|c| c.name == name).map(|c| c.bytes).sum::<u64>();
        let reservation = sum("vllm-reservation");
        if !of_free {
            let vllm = (fraction * total as f64) as u64;
            return Some(VllmClaim { vllm, training: peak.saturating_sub(reservation), free_at_start: None });
        }
        if reservation == 0 || fraction <= 0.0 {
            return None;
        }
        let vllm = reservation + sum("weights");
        let free = (vllm as f64 / fraction) as u64;
        Some(VllmClaim { vllm, training: peak.saturating_sub(vllm), free_at_start: Some(free) })
    }

    /// The largest fraction, two decimals, at which vLLM and training together fit `capacity`
    /// with the verdict's headroom; None below 0.05 (no useful vLLM is left).
    pub(crate) fn fitting_fraction(&self, capacity: u64) -> Option<f64> {
        let base = self.free_at_start.unwrap_or(capacity) as f64;
        let limit = capacity as f64 * (1.0 - TIGHT_HEADROOM);
        let fraction = ((limit - self.training as f64) / base * 100.0).floor() / 100.0;
        let fits = |f: f64| judge(self.training + (f * base) as u64, capacity).verdict == Verdict::Fits;
        // Rounding may leave the last hundredth on the tight side.
        [fraction, fraction - 0.01].into_iter().find(|f| *f >= 0.05 && fits(*f))
    }
}
