//! Which architecture a plan trains: the catalog, or a local checkpoint directory.

use crate::catalog::local::{from_checkpoint, Checkpoint, LocalModelError};
use crate::catalog::models::resolve_model;
use crate::catalog::Architecture;
use crate::own_arguments::OwnArguments;
use crate::plan::{ModelRef, Plan, Sourced};
use crate::span::Span;
use std::path::Path;
use std::sync::Arc;

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
    /// A model oomlint does not estimate ([`Plan::not_estimated`]); the name may be empty.
    NotEstimated {
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

/// Reads the local checkpoints a config names, for the core: the leaves implement it (on
/// disk for the CLI and the server, from open tabs in the playground).
pub trait Resolver: Send + Sync {
    /// The checkpoint directory `name` denotes, relative to the directory of the config at
    /// `config`: `None` when there is no such directory, else what reading it gave.
    fn checkpoint(&self, config: &Path, name: &str) -> Option<Result<Checkpoint, LocalModelError>>;

    /// The argument dataclasses that the repository around the config at `config` defines
    /// for its own scripts' `TrlParser`/`HfArgumentParser`: asked only for a TRL or
    /// transformers config file with keys its schema does not know. None when there are none.
    fn own_arguments(&self, _config: &Path) -> Option<Arc<OwnArguments>> {
        None
    }
}

/// A resolver that knows no local checkpoint (tests, and text without a project).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NoCheckpoints;

impl Resolver for NoCheckpoints {
    fn checkpoint(&self, _: &Path, _: &str) -> Option<Result<Checkpoint, LocalModelError>> {
        None
    }
}

/// Resolves the plan's model: a local checkpoint when `resolver` finds one under that
/// name, else the catalog. Returns None when the plan names no model; a plan whose model
/// is not estimated ([`Plan::not_estimated`]) gets [`ModelLookup::NotEstimated`].
pub(crate) fn lookup(plan: &Plan, config_path: &Path, resolver: &dyn Resolver) -> Option<ModelLookup> {
    if let Some(reason) = &plan.not_estimated {
        let model = plan.model.as_ref();
        return Some(ModelLookup::NotEstimated {
            name: model.map(|m| m.value.name.clone()).unwrap_or_default(),
            reason: reason.clone(),
            span: model.and_then(Sourced::value_span),
        });
    }
    let model = plan.model.as_ref()?;
    let span = model.value_span();
    let ModelRef { name, is_path } = &model.value;
    let local = if name.is_empty() { None } else { resolver.checkpoint(config_path, name) };
    if *is_path || local.is_some() {
        let read = local.unwrap_or_else(|| {
            let dir = config_path.parent().unwrap_or(Path::new(".")).join(name);
            Err(LocalModelError::NoConfig { dir })
        });
        return Some(match read.and_then(|checkpoint| from_checkpoint(&checkpoint)) {
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
