//! The estimator's levers for `oomlint explain --config`.

use super::explain::LeverSource;
use crate::analysis::{analyze_text, Options};
use crate::catalog::Gpu;
use crate::explain::advice::Lever;
use crate::explain::run_settings::RunSettings;
use std::path::Path;

/// Analyses the config and offers the estimator's levers (with their exact edits).
pub struct EstimatorLevers;

impl LeverSource for EstimatorLevers {
    fn levers(&self, path: &Path, text: &str, gpu: Option<&Gpu>) -> Result<Option<Vec<Lever>>, String> {
        let analysis = analyze_text(path, text.to_string(), &Options { gpu: gpu.cloned(), ..Options::default() });
        let Some(estimate) = analysis.estimate else {
            return Ok(None);
        };
        let levers = estimate
            .levers
            .into_iter()
            .map(|l| Lever { title: l.title, saves_bytes: l.saves_bytes, fixes: l.fixes })
            .collect();
        Ok(Some(levers))
    }

    fn run_settings(&self, path: &Path, text: &str) -> Option<RunSettings> {
        let analysis = analyze_text(path, text.to_string(), &Options::default());
        RunSettings::from_plan(analysis.plan.as_deref()?, text)
    }
}
