//! The page's files as the project around each one: what the CLI reads from disk
//! (`server/src/project.rs`), read from memory by the same rules.
//!
//! - Settings: the nearest `oomlint.toml`, `.oomlint.toml` or `pyproject.toml` with
//!   `[tool.oomlint]` in the file's directory or above.
//! - Version pins: the dependency files of the file's directory and the ones above it, up to
//!   the project's root (the CLI stops at a `.git` directory; the page's files have one root).
//! - Linked files (a launch's `--config_file`, a config's DeepSpeed JSON): relative to the
//!   naming file's directory, then to the root.
//! - Launch scripts beside a config opened alone: the `*.sh`, `*.slurm`, `*.sbatch` files of
//!   its directory whose text names it.
//!
//! Not read: local checkpoints, the Hugging Face cache, and the argument dataclasses of the
//! project's own Python scripts (the page has no such files to read).

use oomlint_core::analysis::Options;
use oomlint_core::catalog::{Checkpoint, LocalModelError};
use oomlint_core::model::{LinkedFile, Resolver};
use oomlint_core::settings::{has_tool_oomlint, lexically_normal, Settings, SettingsError, CONFIG_FILES};
use oomlint_core::versions::{is_dependency_file, Versions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many directories above a file are searched for pins (the CLI's limit).
const MAX_LEVELS: usize = 5;

/// The largest file read because another names it (the CLI's limit).
const MAX_LINKED_FILE_BYTES: usize = 4 << 20;

/// The most launch scripts of one directory read for a config opened alone (the CLI's limit).
const MAX_LAUNCH_SCRIPTS: usize = 32;

/// The page's files by their normalised path.
pub(crate) struct Project {
    files: BTreeMap<PathBuf, String>,
}

impl Project {
    pub(crate) fn new<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Project {
        Project { files: files.into_iter().map(|(name, text)| (normal(Path::new(name)), text.to_string())).collect() }
    }

    /// The options `check` would give `file`: its settings and pins, and this project as
    /// the resolver of the files it names.
    pub(crate) fn options(self: &Arc<Self>, file: &Path) -> Result<Options, SettingsError> {
        Ok(Options {
            settings: Arc::new(self.settings_for(file)?),
            versions: Arc::new(self.versions_for(file)),
            resolver: Some(self.clone() as Arc<dyn Resolver>),
            ..Options::default()
        })
    }

    fn settings_for(&self, file: &Path) -> Result<Settings, SettingsError> {
        for dir in directories_above(file) {
            for name in CONFIG_FILES {
                let path = dir.join(name);
                let Some(text) = self.files.get(&path) else { continue };
                if name == "pyproject.toml" && !has_tool_oomlint(text) {
                    continue;
                }
                let mut settings =
                    Settings::from_toml(text).map_err(|e| SettingsError(format!("{}: {e}", path.display())))?;
                settings.path = Some(path);
                return Ok(settings);
            }
        }
        Ok(Settings::default())
    }

    fn versions_for(&self, file: &Path) -> Versions {
        let mut versions = Versions::default();
        for dir in directories_above(file).take(MAX_LEVELS + 1) {
            let mut names: Vec<(&Path, &str)> = self
                .files
                .iter()
                .filter(|(path, _)| path.parent() == Some(dir.as_path()))
                .filter_map(|(path, text)| Some((path.file_name()?.to_str()?, text)))
                .filter(|(name, _)| is_dependency_file(name))
                .map(|(name, text)| (Path::new(name), text.as_str()))
                .collect();
            names.sort_by_key(|(name, _)| (name.extension().is_none_or(|e| e != "lock"), *name));
            for (name, text) in names {
                let name = name.to_str().unwrap_or_default();
                versions.merge_missing(Versions::from_file(name, text, &dir.join(name)));
            }
        }
        versions
    }

    fn linked(&self, path: PathBuf) -> Option<LinkedFile> {
        let text = self.files.get(&normal(&path)).filter(|t| t.len() <= MAX_LINKED_FILE_BYTES)?;
        Some(LinkedFile { path: path.display().to_string(), text: text.clone() })
    }
}

impl Resolver for Project {
    fn checkpoint(&self, _config: &Path, _name: &str) -> Option<Result<Checkpoint, LocalModelError>> {
        None
    }

    fn launch_scripts(&self, config: &Path) -> Vec<LinkedFile> {
        let Some(name) = config.file_name().and_then(|n| n.to_str()) else { return Vec::new() };
        let dir = normal(config.parent().unwrap_or(Path::new("")));
        let shown = config.parent().unwrap_or(Path::new(""));
        self.files
            .keys()
            .filter(|path| path.parent() == Some(dir.as_path()))
            .filter_map(|path| path.file_name()?.to_str())
            .filter(|n| n.ends_with(".sh") || n.ends_with(".slurm") || n.ends_with(".sbatch"))
            .take(MAX_LAUNCH_SCRIPTS)
            .filter_map(|script| self.linked(shown.join(script)))
            .filter(|script| script.text.contains(name))
            .collect()
    }

    fn linked_file(&self, from: &Path, name: &str) -> Option<LinkedFile> {
        let name = name.trim();
        if name.is_empty() || name.contains(['$', '`', '\0']) || Path::new(name).is_absolute() {
            return None;
        }
        let dir = from.parent().unwrap_or(Path::new(""));
        self.linked(dir.join(name)).or_else(|| self.linked(PathBuf::from(name)))
    }
}

/// `path` without `.`, `..` and a leading `/`: the key of a file in the project.
pub(crate) fn normal(path: &Path) -> PathBuf {
    let normal = lexically_normal(path);
    normal.strip_prefix("/").map(Path::to_path_buf).unwrap_or(normal)
}

/// The directories from `file`'s up to the project's root (the empty path).
fn directories_above(file: &Path) -> impl Iterator<Item = PathBuf> {
    let dir = normal(file.parent().unwrap_or(Path::new("")));
    let mut next = Some(dir);
    std::iter::from_fn(move || {
        let dir = next.take()?;
        next = dir.parent().map(Path::to_path_buf);
        Some(dir)
    })
}
