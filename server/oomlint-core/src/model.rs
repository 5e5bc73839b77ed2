//! Which architecture a plan trains: the catalog, or a local checkpoint directory.

use crate::catalog::local::{from_checkpoint, Checkpoint, LocalModelError};
use crate::catalog::models::resolve_model;
use crate::catalog::names::{another_release, size_from_name};
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
    /// Resolved by no step of the ladder; up to three similar known names.
    Unknown {
        name: String,
        suggestions: Vec<String>,
        /// The steps tried, as a clause: `a local directory, …, and its name (…)`.
        tried: String,
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

    /// The snapshot of the Hugging Face hub repository `repo` (`org/name`) that the local
    /// Hugging Face cache holds, at `revision` when one is given: `None` when the cache has
    /// none (no cache, or never downloaded), else what reading it gave. Never the network.
    fn hub_cache(&self, _repo: &str, _revision: Option<&str>) -> Option<Result<Checkpoint, LocalModelError>> {
        None
    }

    /// The text of the file `name` that the script or config at `from` names (a launch's
    /// `--config_file`, `--deepspeed`, a program's config, the DeepSpeed file an accelerate
    /// config names), relative to `from`'s directory, then to its repository's root. Read
    /// as text only, never executed, never from the network. None when there is none.
    fn linked_file(&self, _from: &Path, _name: &str) -> Option<LinkedFile> {
        None
    }

    /// The launch scripts (`*.sh`, `*.slurm`, `*.sbatch`) in the directory of the config at
    /// `config` whose text names its file name, read as text, with paths in the form of
    /// `config`'s: a config opened alone is analysed with the launch that runs it.
    fn launch_scripts(&self, _config: &Path) -> Vec<LinkedFile> {
        Vec::new()
    }
}

/// A file another file names, as the leaf read it.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkedFile {
    /// Its path, as the messages show it.
    pub path: String,
    pub text: String,
}

/// A resolver that knows no local checkpoint (tests, and text without a project).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NoCheckpoints;

impl Resolver for NoCheckpoints {
    fn checkpoint(&self, _: &Path, _: &str) -> Option<Result<Checkpoint, LocalModelError>> {
        None
    }
}

/// Resolves the plan's model, in this order: a local checkpoint directory when `resolver`
/// finds one under that name, then the snapshot of a hub id (`org/name`) in the local
/// Hugging Face cache, then the catalog, then a shape sized from the name's family and
/// size (`catalog/names.rs`). Returns None when the plan names no model; a plan whose model
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
    if let Some(Ok(arch)) = hub_cache(name, resolver) {
        return Some(ModelLookup::Found(Box::new(arch)));
    }
    Some(catalog(name, span))
}

/// The architecture of the snapshot of `name` in the local Hugging Face cache, named by
/// the hub id and sourced to the snapshot's directory. `None` when `name` is not a hub id
/// (`org/name`) or the cache has no snapshot of it; an error when that snapshot's config
/// cannot be read or describes no architecture oomlint reads (the catalog answers then).
fn hub_cache(name: &str, resolver: &dyn Resolver) -> Option<Result<Architecture, LocalModelError>> {
    if !is_hub_id(name) {
        return None;
    }
    let read = resolver.hub_cache(name, None)?;
    Some(read.and_then(|checkpoint| from_checkpoint(&checkpoint)).map(|mut arch| {
        let described = arch.source.strip_prefix("local ").unwrap_or(&arch.source).to_string();
        arch.source = format!("from the local Hugging Face cache: {described}");
        arch.name = name.to_string();
        arch
    }))
}

/// Whether `name` has the shape of a Hugging Face hub id: `org/name`, two non-empty parts
/// without path syntax.
fn is_hub_id(name: &str) -> bool {
    let mut parts = name.split('/');
    let (Some(org), Some(repo), None) = (parts.next(), parts.next(), parts.next()) else { return false };
    let part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    part(org) && part(repo)
}

/// Steps 3 and 4 of the ladder: the catalog, then the name's family and size.
fn catalog(name: &str, span: Option<Span>) -> ModelLookup {
    let unknown = match resolve_model(name) {
        Ok(arch) => return ModelLookup::Found(Box::new(arch.clone())),
        Err(unknown) => unknown,
    };
    match size_from_name(name).or_else(|miss| another_release(name).ok_or(miss)) {
        Ok(arch) => ModelLookup::Found(Box::new(arch)),
        Err(miss) => {
            let cache = if is_hub_id(name) { " the local Hugging Face cache," } else { "" };
            let tried = format!("a local directory,{cache} the catalog, and its name ({})", miss.describe());
            ModelLookup::Unknown { name: name.to_string(), suggestions: unknown.suggestions(), tried, span }
        }
    }
}
