//! Which architecture a plan trains: the catalog, or a local checkpoint directory.

use crate::catalog::local::from_local_dir;
use crate::catalog::models::resolve_model;
use crate::catalog::Architecture;
use crate::plan::{ModelRef, Plan};
use crate::span::Span;
use std::path::Path;

/// The outcome of resolving a plan's model reference.
#[derive(Debug, Clone)]
pub enum ModelLookup {
    Found(Box<Architecture>),
    /// Not in the catalog; up to three similar known names.
    Unknown {
        name: String,
        suggestions: Vec<String>,
        span: Option<Span>,
    },
    /// A local directory that could not be read (missing, or no config.json/model_config.yaml).
    Unreadable {
        name: String,
        reason: String,
        span: Option<Span>,
    },
}

impl ModelLookup {
    pub fn architecture(&self) -> Option<&Architecture> {
        match self {
            ModelLookup::Found(arch) => Some(arch),
            _ => None,
        }
    }
}

/// Resolves the plan's model; local paths are read relative to the config's directory.
/// Returns None when the plan names no model.
pub fn lookup(plan: &Plan, config_path: &Path) -> Option<ModelLookup> {
    let model = plan.model.as_ref()?;
    let span = model.value_span();
    let ModelRef { name, is_path } = &model.value;
    if *is_path || looks_local(name, config_path) {
        let base = config_path.parent().unwrap_or(Path::new("."));
        let dir = base.join(name);
        return Some(match from_local_dir(&dir) {
            Ok(arch) => ModelLookup::Found(Box::new(arch)),
            Err(e) if *is_path => ModelLookup::Unreadable { name: name.clone(), reason: e.to_string(), span },
            Err(_) => catalog(name, span),
        });
    }
    Some(catalog(name, span))
}

fn catalog(name: &str, span: Option<Span>) -> ModelLookup {
    match resolve_model(name) {
        Ok(arch) => ModelLookup::Found(Box::new(arch.clone())),
        Err(unknown) => ModelLookup::Unknown { name: name.to_string(), suggestions: unknown.suggestions(), span },
    }
}

/// A relative name that exists as a directory next to the config.
fn looks_local(name: &str, config_path: &Path) -> bool {
    let base = config_path.parent().unwrap_or(Path::new("."));
    !name.is_empty() && base.join(name).is_dir()
}
