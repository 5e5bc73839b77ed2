//! What lies around a checked file on disk, read for the analysis core: the project's
//! settings, the version pins of its dependency files, the local checkpoints it names, and
//! the argument dataclasses of the repository's own training scripts (`project/arguments.rs`).
//!
//! One [`Project`] serves a whole run of the CLI, or one workspace of the language server,
//! which replaces it when a watched settings or dependency file changes. It remembers each
//! directory it has listed or searched; nothing is kept anywhere else.

mod arguments;
mod checkpoint;
mod hub_cache;

use crate::analysis::Options;
use crate::catalog::{Checkpoint, LocalModelError};
use crate::model::{LinkedFile, Resolver};
use crate::paths::{absolute, Listing};
use crate::settings::{has_tool_oomlint, Settings, SettingsError, CONFIG_FILES};
use crate::versions::{is_dependency_file, Versions};
use arguments::PythonFile;
use oomlint_core::own_arguments::OwnArguments;
use std::collections::HashMap;
use std::collections::HashSet;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

pub use checkpoint::{from_local_dir, read_checkpoint};
pub use hub_cache::dir_from_environment as hub_cache_from_environment;

/// How many parent directories are searched for pins when no `.git` directory is found.
const MAX_LEVELS: usize = 5;

/// Dependency files larger than this are not read.
const MAX_DEPENDENCY_FILE_BYTES: u64 = 8 << 20;

/// The largest config or launch script read because another file names it.
const MAX_LINKED_FILE_BYTES: u64 = 4 << 20;

/// The most launch scripts of one directory read for a config opened alone.
const MAX_LAUNCH_SCRIPTS: usize = 32;

/// Reads a file another one names, as text, when it is a regular file of a config's size.
fn read_linked(path: &Path) -> Option<LinkedFile> {
    let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_LINKED_FILE_BYTES);
    let text = small.then(|| std::fs::read_to_string(path).ok()).flatten()?;
    Some(LinkedFile { path: path.display().to_string(), text })
}

/// The files around the checked ones, each directory read once.
#[derive(Default)]
pub struct Project {
    listings: Memo<PathBuf, Arc<Listing>>,
    /// The settings that apply in a directory (its own, or the nearest above).
    settings: Memo<PathBuf, Arc<Settings>>,
    /// The pins for the configs of a directory, by the directory as given.
    pins: Memo<PathBuf, Arc<Versions>>,
    /// The pins of one directory, and whether it is a repository's root.
    directories: Memo<PathBuf, (Versions, bool)>,
    /// The own argument dataclasses for the configs of a directory, by the directory as given.
    arguments: Memo<PathBuf, Option<Arc<OwnArguments>>>,
    /// What one Python file defines and parses, by its path.
    python: Memo<PathBuf, Arc<PythonFile>>,
    /// The local Hugging Face hub cache (`models--ORG--NAME/snapshots/…`); none by default.
    hub_cache: Option<PathBuf>,
    /// The snapshots read from it, by hub id and revision.
    snapshots: Memo<(String, Option<String>), Option<CheckpointRead>>,
}

/// What reading one checkpoint gave.
type CheckpointRead = Result<Checkpoint, LocalModelError>;

/// Values computed outside the lock, remembered by key.
struct Memo<K, V>(Mutex<HashMap<K, V>>);

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo(Mutex::default())
    }
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    fn get(&self, key: &K) -> Option<V> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
    }

    fn insert(&self, key: K, value: V) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(key, value);
    }
}

impl Project {
    /// A project that reads the local Hugging Face cache at `dir` (see
    /// [`hub_cache_from_environment`]) for hub ids no local directory answers.
    pub fn with_hub_cache(dir: Option<PathBuf>) -> Project {
        Project { hub_cache: dir, ..Project::default() }
    }

    /// A project that reads the Hugging Face cache the environment names: the CLI's and the
    /// language server's, read once at start-up.
    pub fn from_environment() -> Project {
        Project::with_hub_cache(hub_cache_from_environment())
    }

    /// A new project, with nothing read yet, that reads the same Hugging Face cache.
    pub fn renewed(&self) -> Project {
        Project::with_hub_cache(self.hub_cache.clone())
    }

    /// The analysis options for `file`: its settings (or `config`, replacing the nearest),
    /// its version pins, and this project as the checkpoint resolver.
    pub fn options(self: &Arc<Self>, file: &Path, config: Option<&Arc<Settings>>) -> Result<Options, SettingsError> {
        let settings = match config {
            Some(settings) => settings.clone(),
            None => self.settings_for(file)?,
        };
        Ok(Options {
            settings,
            versions: self.versions_for(file),
            resolver: Some(self.clone() as Arc<dyn Resolver>),
            ..Options::default()
        })
    }

    /// The settings that apply to `file`: the nearest config above it, or the defaults.
    pub fn settings_for(&self, file: &Path) -> Result<Arc<Settings>, SettingsError> {
        let absolute = absolute(file);
        let mut visited = Vec::new();
        let found = 'search: {
            for dir in absolute.ancestors().skip(1) {
                if let Some(hit) = self.settings.get(&dir.to_path_buf()) {
                    break 'search hit;
                }
                visited.push(dir.to_path_buf());
                if let Some(settings) = self.settings_in(dir)? {
                    break 'search Arc::new(settings);
                }
            }
            let mut defaults = Settings::default();
            defaults.working_dir = working_dir();
            Arc::new(defaults)
        };
        for dir in visited {
            self.settings.insert(dir, found.clone());
        }
        Ok(found)
    }

    fn settings_in(&self, dir: &Path) -> Result<Option<Settings>, SettingsError> {
        let listing = self.listing(dir);
        for name in CONFIG_FILES {
            if listing.is_file(dir, name) {
                if let Some(settings) = read_settings(&dir.join(name))? {
                    return Ok(Some(settings));
                }
            }
        }
        Ok(None)
    }

    /// The versions pinned for the config at `file`, searched from its directory upwards to
    /// the repository's root (a directory with `.git`) or [`MAX_LEVELS`] levels.
    pub fn versions_for(&self, file: &Path) -> Arc<Versions> {
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if let Some(found) = self.pins.get(&dir.to_path_buf()) {
            return found;
        }
        let mut versions = Versions::default();
        for dir in absolute(dir).ancestors().take(MAX_LEVELS + 1) {
            let (pins, repository_root) = self.pins_in(dir);
            versions.merge_missing(pins);
            if repository_root {
                break;
            }
        }
        let found = Arc::new(versions);
        self.pins.insert(dir.to_path_buf(), found.clone());
        found
    }

    /// The pins of one directory (lock files, exact, win over requirement ranges) and
    /// whether it is a repository's root.
    fn pins_in(&self, dir: &Path) -> (Versions, bool) {
        if let Some(found) = self.directories.get(&dir.to_path_buf()) {
            return found;
        }
        let listing = self.listing(dir);
        let mut names: Vec<&str> = listing.regular_files().filter(|n| is_dependency_file(n)).collect();
        names.sort_by_key(|n| (!n.ends_with(".lock"), *n));
        let mut versions = Versions::default();
        for name in names {
            let path = dir.join(name);
            if std::fs::metadata(&path).map_or(true, |m| m.len() > MAX_DEPENDENCY_FILE_BYTES) {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path) {
                versions.merge_missing(Versions::from_file(name, &text, &path));
            }
        }
        let found = (versions, listing.exists(dir, ".git"));
        self.directories.insert(dir.to_path_buf(), found.clone());
        found
    }

    /// The argument dataclasses that scripts around the config at `file` define and pass to
    /// `TrlParser`/`HfArgumentParser` (see `project/arguments.rs` for which files are read).
    pub fn own_arguments_for(&self, file: &Path) -> Option<Arc<OwnArguments>> {
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if let Some(found) = self.arguments.get(&dir.to_path_buf()) {
            return found;
        }
        let absolute_dir = absolute(dir);
        let mut above: Vec<&Path> = Vec::new();
        let mut root = false;
        for ancestor in absolute_dir.ancestors().take(MAX_LEVELS + 1) {
            above.push(ancestor);
            if self.pins_in(ancestor).1 {
                root = true;
                break;
            }
        }
        if !root {
            above.truncate(arguments::NEAR_LEVELS + 1);
        }
        let top = above.last().map_or_else(|| absolute_dir.clone(), |p| p.to_path_buf());
        let mut visited = HashSet::new();
        let mut files = Vec::new();
        for start in above {
            self.python_files(start, arguments::DEPTH, &mut visited, &mut files);
        }
        let found = arguments::combine(&files, &top).map(Arc::new);
        self.arguments.insert(dir.to_path_buf(), found.clone());
        found
    }

    /// Scans the Python files of `dir` and of its subdirectories `depth` levels down.
    fn python_files(
        &self,
        dir: &Path,
        depth: usize,
        visited: &mut HashSet<PathBuf>,
        out: &mut Vec<(PathBuf, Arc<PythonFile>)>,
    ) {
        if out.len() >= arguments::MAX_FILES || !visited.insert(dir.to_path_buf()) {
            return;
        }
        let listing = self.listing(dir);
        for name in listing.regular_files().filter(|n| n.ends_with(".py")) {
            if out.len() >= arguments::MAX_FILES {
                return;
            }
            let path = dir.join(name);
            out.push((path.clone(), self.python_file(&path)));
        }
        if depth > 0 {
            for name in listing.directories().filter(|n| !arguments::skipped_directory(n)) {
                self.python_files(&dir.join(name), depth - 1, visited, out);
            }
        }
    }

    fn python_file(&self, path: &Path) -> Arc<PythonFile> {
        if let Some(found) = self.python.get(&path.to_path_buf()) {
            return found;
        }
        let readable = std::fs::metadata(path).is_ok_and(|m| m.len() <= arguments::MAX_FILE_BYTES);
        let text = if readable { std::fs::read_to_string(path).unwrap_or_default() } else { String::new() };
        let found = Arc::new(arguments::scan(&text));
        self.python.insert(path.to_path_buf(), found.clone());
        found
    }

    /// The entries of `dir`, read on first use.
    fn listing(&self, dir: &Path) -> Arc<Listing> {
        if let Some(listed) = self.listings.get(&dir.to_path_buf()) {
            return listed;
        }
        let listed = Arc::new(Listing::read(dir));
        self.listings.insert(dir.to_path_buf(), Arc::clone(&listed));
        listed
    }
}

impl Resolver for Project {
    fn checkpoint(&self, config: &Path, name: &str) -> Option<Result<Checkpoint, LocalModelError>> {
        let dir = config.parent().unwrap_or(Path::new(".")).join(name);
        dir.is_dir().then(|| read_checkpoint(&dir))
    }

    fn own_arguments(&self, config: &Path) -> Option<Arc<OwnArguments>> {
        self.own_arguments_for(config)
    }

    fn hub_cache(&self, repo: &str, revision: Option<&str>) -> Option<Result<Checkpoint, LocalModelError>> {
        let cache = self.hub_cache.as_deref()?;
        let key = (repo.to_string(), revision.map(str::to_string));
        if let Some(read) = self.snapshots.get(&key) {
            return read;
        }
        let read = hub_cache::snapshot(cache, repo, revision);
        self.snapshots.insert(key, read.clone());
        read
    }

    fn launch_scripts(&self, config: &Path) -> Vec<LinkedFile> {
        let Some(name) = config.file_name().and_then(|n| n.to_str()) else { return Vec::new() };
        let dir = config.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let listing = self.listing(dir);
        let mut scripts: Vec<&str> = listing
            .regular_files()
            .filter(|n| n.ends_with(".sh") || n.ends_with(".slurm") || n.ends_with(".sbatch"))
            .collect();
        scripts.sort_unstable();
        scripts
            .into_iter()
            .take(MAX_LAUNCH_SCRIPTS)
            .filter_map(|script| read_linked(&dir.join(script)))
            .filter(|script| script.text.contains(name))
            .collect()
    }

    fn linked_file(&self, from: &Path, name: &str) -> Option<LinkedFile> {
        let name = name.trim();
        if name.is_empty() || name.contains(['$', '`', '\0']) {
            return None;
        }
        let named = Path::new(name);
        if named.is_absolute() {
            return read_linked(named);
        }
        let dir = from.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        read_linked(&dir.join(named)).or_else(|| {
            let root = absolute(dir).ancestors().take(MAX_LEVELS + 1).find(|a| self.pins_in(a).1)?.to_path_buf();
            read_linked(&root.join(named))
        })
    }
}

/// Reads a settings file (`--config FILE`, or one found near a checked file); a
/// `pyproject.toml` without `[tool.oomlint]` gives None.
pub fn read_settings(path: &Path) -> Result<Option<Settings>, SettingsError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| SettingsError(format!("cannot read {}: {e}", path.display())))?;
    if path.file_name().is_some_and(|n| n == "pyproject.toml") && !has_tool_oomlint(&text) {
        return Ok(None);
    }
    let mut settings = Settings::from_toml(&text).map_err(|e| SettingsError(format!("{}: {e}", path.display())))?;
    settings.path = Some(absolute(path));
    settings.working_dir = working_dir();
    Ok(Some(settings))
}

/// Where relative paths of checked files start from.
fn working_dir() -> Option<PathBuf> {
    std::env::current_dir().ok()
}

#[cfg(test)]
mod tests;
