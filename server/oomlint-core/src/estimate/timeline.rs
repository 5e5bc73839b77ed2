//! The phases of a training run in the order it goes through them, each with what is live in it.

use super::phases::outside_allocator;
use super::{Estimate, Phase};

/// One phase of the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelinePhase {
    pub phase: Phase,
    /// What the caching allocator holds in this phase (the allocated view).
    pub allocated_bytes: u64,
    /// The components that make up `allocated_bytes`, largest first.
    pub components: Vec<&'static str>,
    /// Whether this is the peak phase ([`Estimate::peak`]).
    pub peak: bool,
}

/// The model's load, then each step: the weights handed to the rollout engine, RL generation,
/// log-prob passes, forward, backward, optimizer step.
const ORDER: [Phase; 7] = [
    Phase::Load,
    Phase::WeightSync,
    Phase::Generation,
    Phase::LogProbs,
    Phase::Forward,
    Phase::Backward,
    Phase::OptimizerStep,
];

impl Estimate {
    /// The evaluated phases in timeline order; generation only where a component belongs to it.
    /// The end of backward is reported as backward: one row, the larger of the two (the later on
    /// a tie, as for the peak), so exactly one row is the peak and holds its allocated bytes.
    pub fn timeline(&self) -> Vec<TimelinePhase> {
        ORDER
            .into_iter()
            .filter_map(|shown| {
                let total = self
                    .phases
                    .iter()
                    .filter(|p| p.phase.as_str() == shown.as_str())
                    .max_by_key(|p| p.allocated_bytes)?;
                let mut live: Vec<_> = self
                    .components
                    .iter()
                    .filter(|c| !outside_allocator(c.name) && c.live_in.contains(&total.phase))
                    .collect();
                live.sort_by_key(|c| std::cmp::Reverse(c.bytes));
                Some(TimelinePhase {
                    phase: total.phase,
                    allocated_bytes: total.allocated_bytes,
                    components: live.into_iter().map(|c| c.name).collect(),
                    peak: total.phase == self.peak.phase,
                })
            })
            .collect()
    }
}
