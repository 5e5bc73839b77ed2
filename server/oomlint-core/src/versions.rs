//! Framework versions pinned near a config.
//!
//! Rules that depend on a framework version (a key removed in TRL 0.27, a default that
//! changed in transformers 5.0) ask [`Versions::at_least`]. The versions come from the
//! dependency files next to the config or in a parent directory (the leaves find them: up
//! to the repository root, a directory with `.git`, or five levels): `requirements*.txt`, `pyproject.toml`
//! (PEP 621 and Poetry), `setup.cfg`, `setup.py` (string literals of `install_requires`
//! only; nothing is executed), `uv.lock` and `poetry.lock`. `framework-versions` in
//! `oomlint.toml` overrides them. A launcher that refuses to start outside its own ranges
//! (LLaMA-Factory) pins the frameworks it checks unless the project pins them itself. Without
//! a pin a rule assumes the newest version it knows.

use crate::syntax::{self, Language, Mapping};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The frameworks whose versions matter to rules.
const FRAMEWORKS: [&str; 11] = [
    "trl",
    "transformers",
    "torch",
    "litgpt",
    "axolotl",
    "accelerate",
    "deepspeed",
    "peft",
    "unsloth",
    "vllm",
    "bitsandbytes",
];

/// A release number such as `4.46.0` (pre-release and local suffixes are dropped).
#[derive(Debug, Clone)]
pub struct Version(Vec<u64>);

impl Version {
    /// A release from its numbers, for rules: `Version::release(&[0, 27])` is TRL 0.27.
    pub fn release(parts: &[u64]) -> Version {
        Version(parts.to_vec())
    }

    /// A release standing for "anything before this one": `1.15.0` → `1.14.999`; `None` for `0`.
    fn just_below(&self) -> Option<Version> {
        let last = self.0.iter().rposition(|&n| n > 0)?;
        let mut parts = self.0[..=last].to_vec();
        parts[last] -= 1;
        parts.push(999);
        Some(Version(parts))
    }

    /// Parses the leading dotted numbers: `0.27`, `2.5.1+cu121`, `1.0.0rc1`, `v4.46`.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim().trim_start_matches(['v', 'V']);
        let mut parts = Vec::new();
        for part in text.split('.') {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            if digits.is_empty() {
                break;
            }
            parts.push(digits.parse().ok()?);
            if digits.len() != part.len() {
                break;
            }
        }
        (!parts.is_empty()).then_some(Version(parts))
    }

    /// The release after this one at `depth` (0: next major): `^`/`~=` upper bounds.
    fn bump(&self, depth: usize) -> Version {
        let mut parts: Vec<u64> = self.0.iter().take(depth + 1).copied().collect();
        parts.resize(depth + 1, 0);
        parts[depth] = parts[depth].saturating_add(1);
        Version(parts)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let len = self.0.len().max(other.0.len());
        (0..len)
            .map(|i| self.0.get(i).unwrap_or(&0).cmp(other.0.get(i).unwrap_or(&0)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

/// The newest release a requirement allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Newest {
    /// Exactly this release (`==`, a lock file, or `framework-versions`).
    Exactly(Version),
    /// Up to and including this release (`<=`).
    AtMost(Version),
    /// Any release before this one (`<`, `~=`, `^`).
    Below(Version),
}

/// One framework's pin and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub(crate) newest: Newest,
    /// The requirement as written (`trl==0.19.1`).
    pub(crate) spec: String,
    pub(crate) source: PinSource,
}

/// Where a pin was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PinSource {
    /// A dependency file near the config.
    File(PathBuf),
    /// An install command in the notebook or script itself.
    Install(PathBuf),
    /// `framework-versions` in `oomlint.toml`.
    Settings,
    /// The version check of the launcher the config is written for.
    Launcher(&'static str),
    /// The repository is the framework itself (`setup(name="axolotl", version="0.4.1")`):
    /// its configs run against the checkout they sit in.
    Checkout(PathBuf),
    /// The banner a framework printed into the notebook's saved outputs (`Unsloth 2025.8.9:
    /// Fast Gemma3 patching. Transformers: 4.55.2.`): the release of the run that made them.
    RecordedRun,
}

impl Pin {
    /// "trl==0.19.1 (requirements.txt)".
    pub(crate) fn describe(&self) -> String {
        match &self.source {
            PinSource::File(path) => {
                let file = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
                format!("{} ({file})", self.spec)
            }
            PinSource::Install(_) => format!("{} (installed by the file itself)", self.spec),
            PinSource::Settings => format!("{} (oomlint framework-versions)", self.spec),
            PinSource::Launcher(launcher) => format!("{} (required by {launcher})", self.spec),
            PinSource::Checkout(path) => {
                let file = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
                format!("{} (the repository is that framework itself: {file})", self.spec)
            }
            PinSource::RecordedRun => format!("{} (the release the notebook's saved outputs record)", self.spec),
        }
    }
}

/// Framework name → pin, for one config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Versions {
    pins: BTreeMap<String, Pin>,
    /// The Python package the repository itself builds (`setup(name=…)`, `[project] name`),
    /// when its dependency file names one: its own scripts may read the config.
    package: Option<String>,
    /// Frameworks the file installs from a URL (`git+https://…/transformers.git@<commit>`):
    /// a release oomlint cannot tell, so no pin, and no dependency file's pin either.
    from_url: std::collections::BTreeSet<String>,
}

impl Versions {
    pub fn get(&self, framework: &str) -> Option<&Pin> {
        self.pins.get(&framework.to_ascii_lowercase())
    }

    /// The newest release of `framework` the pin allows; `< 1.15` gives `1.14.999`.
    pub(crate) fn newest(&self, framework: &str) -> Option<Version> {
        Some(match &self.get(framework)?.newest {
            Newest::Exactly(v) | Newest::AtMost(v) => v.clone(),
            Newest::Below(v) => v.just_below()?,
        })
    }

    /// Whether the config may run on `version` or later of `framework`: true without a
    /// pin (rules assume the newest release they know).
    pub fn at_least(&self, framework: &str, version: &Version) -> bool {
        match self.get(framework).map(|p| &p.newest) {
            None => true,
            Some(Newest::Exactly(v) | Newest::AtMost(v)) => v >= version,
            Some(Newest::Below(v)) => v > version,
        }
    }

    /// The releases a notebook's saved outputs record, over what the file pins: the outputs
    /// come from one run, which ran exactly those (an unpinned or URL install, or a pin the
    /// notebook changed after the run: the outputs of Unsloth's Gemma 3 notebook record
    /// transformers 4.50.2 under a cell that now installs 4.56.2).
    pub(crate) fn with_recorded_run(mut self, recorded: Versions) -> Versions {
        for (name, pin) in recorded.pins {
            self.from_url.remove(&name);
            self.pins.insert(name, pin);
        }
        self
    }

    /// Adds `framework-versions` overrides (they win over dependency files).
    pub fn with_overrides(mut self, overrides: &BTreeMap<String, Version>) -> Versions {
        for (framework, version) in overrides {
            let pin = Pin {
                newest: Newest::Exactly(version.clone()),
                spec: format!("{framework}=={version}"),
                source: PinSource::Settings,
            };
            self.pins.insert(framework.to_ascii_lowercase(), pin);
        }
        self
    }

    /// Versions pinned in `text`, a dependency file named `file_name`.
    pub fn from_file(file_name: &str, text: &str, path: &Path) -> Versions {
        let requirements: Vec<String> = match file_name {
            "pyproject.toml" => pyproject_requirements(text),
            "setup.cfg" => setup_cfg_requirements(text),
            "setup.py" => setup_py_requirements(text),
            "uv.lock" | "poetry.lock" => return lock_versions(text, path),
            _ => text.lines().map(str::to_string).collect(),
        };
        let mut versions = Versions::default();
        let mut trains_with_hf = false;
        for line in requirements {
            let bare = line.trim().split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).next();
            trains_with_hf |= bare.is_some_and(|name| matches!(name, "trl" | "transformers"));
            if let Some((name, pin)) = parse_requirement(&line, path) {
                versions.pins.entry(name).or_insert(pin);
            }
        }
        let (package, version) = package_declaration(file_name, text);
        // A checkout of a framework runs its configs against itself: its version is the pin.
        if let (Some(framework), Some(version)) = (package.as_deref().and_then(framework_name), version) {
            if let Some(parsed) = Version::parse(&version) {
                let pin = Pin {
                    newest: Newest::Exactly(parsed),
                    spec: format!("{framework}=={version}"),
                    source: PinSource::Checkout(path.to_path_buf()),
                };
                versions.pins.insert(framework, pin);
            }
        }
        // A package of one's own counts when it trains with TRL or transformers.
        versions.package = package.filter(|_| trains_with_hf);
        versions
    }

    /// Adds the ranges a launcher enforces at start-up, or that the module a config imports
    /// implies (`format::launcher_requirements`), for the frameworks the project does not pin
    /// itself.
    pub(crate) fn with_launcher_requirements(mut self, launcher: &'static str, requirements: &[&str]) -> Versions {
        for requirement in requirements {
            if let Some((name, mut pin)) = parse_requirement(requirement, Path::new("")) {
                pin.source = PinSource::Launcher(launcher);
                self.pins.entry(name).or_insert(pin);
            }
        }
        self
    }

    /// Fills frameworks this set lacks from `other` (a file further away).
    pub fn merge_missing(&mut self, other: Versions) {
        for (name, pin) in other.pins.into_iter().filter(|(name, _)| !self.from_url.contains(name)) {
            self.pins.entry(name).or_insert(pin);
        }
        if self.package.is_none() {
            self.package = other.package;
        }
    }

    /// The Python package the config's repository builds, when it is not a framework
    /// oomlint knows: a project with its own training scripts, which may extend the
    /// frameworks' config classes (open-r1, alignment-handbook).
    /// Whether the file installs `framework` from a URL, not a release (see `from_url`).
    pub(crate) fn installed_from_url(&self, framework: &str) -> bool {
        self.from_url.contains(&framework.to_ascii_lowercase())
    }

    pub(crate) fn project_package(&self) -> Option<&str> {
        self.package.as_deref().filter(|name| framework_name(name).is_none())
    }
}

/// Versions a notebook or script installs for itself (`!pip install trl==0.22.2`,
/// `%pip install …`, `!uv pip install …`, `get_ipython().system('pip install …')`): they
/// are what the run uses, so they win over the repository's dependency files. Where a
/// framework is installed more than once, the last pin written wins (a later cell
/// reinstalls). Packages given as templates (`{xformers}`), URLs or paths are skipped.
pub(crate) fn from_install_commands(text: &str, path: &Path) -> Versions {
    let mut versions = Versions::default();
    if !text.contains("pip install") {
        return versions;
    }
    let code = if path.extension().is_some_and(|e| e == "ipynb") { notebook_code(text) } else { text.to_string() };
    // A script converted from a notebook keeps a cell magic's commands in one string,
    // `run_cell_magic('capture', '', '!pip install …\n!pip install …\n')`: one per `\n`.
    for line in logical_lines(&code).iter().flat_map(|line| line.split("\\n")) {
        let Some(at) = line.find("pip install") else { continue };
        let before = line[..at].trim_end();
        let command = before.ends_with(['!', '%'])
            || before.ends_with("uv")
            || before.ends_with("-m")
            || before.ends_with("system('")
            || before.ends_with("system(\"")
            || before.is_empty();
        if !command {
            continue;
        }
        let args = &line[at + "pip install".len()..];
        let args = args.split(['\'', '#']).next().unwrap_or_default();
        let mut skip_value = false;
        for token in shell_words(args) {
            if std::mem::take(&mut skip_value) {
                continue;
            }
            if token.starts_with('-') {
                // Options with a value: the value is not a package.
                skip_value = matches!(
                    token.as_str(),
                    "-r" | "--requirement"
                        | "-c"
                        | "--constraint"
                        | "-i"
                        | "--index-url"
                        | "--extra-index-url"
                        | "-f"
                        | "--find-links"
                        | "-t"
                        | "--target"
                );
                continue;
            }
            if token.contains(['{', '@', '/']) {
                // `pkg @ git+https://…`, or `git+https://github.com/org/pkg.git@ref`.
                let url_name = match token.split_once(" @ ") {
                    Some((name, _)) => name.split('[').next(),
                    None if token.contains("://") => token.split('@').next().and_then(|u| u.rsplit('/').next()),
                    None => None,
                };
                if let Some(name) = url_name.and_then(|n| framework_name(n.trim_end_matches(".git"))) {
                    versions.pins.remove(&name);
                    versions.from_url.insert(name);
                }
                continue;
            }
            if let Some((name, mut pin)) = parse_requirement(&token, path) {
                pin.source = PinSource::Install(path.to_path_buf());
                versions.from_url.remove(&name);
                versions.pins.insert(name, pin);
            }
        }
    }
    versions
}

/// The releases an Unsloth loader's banner records in a notebook's saved outputs:
/// `==((====))==  Unsloth 2025.8.9: Fast Gemma3 patching. Transformers: 4.55.2.` and, a line
/// below, `Torch: 2.8.0+cu126.` (`unsloth/models/_utils.py` `print_unsloth_banner` /
/// `llama.py` `from_pretrained`'s statistics). The last one wins (a later cell reloads).
pub(crate) fn from_recorded_run(text: &str) -> Versions {
    let mut versions = Versions::default();
    if !text.contains("Unsloth 20") {
        return versions;
    }
    let outputs = notebook_outputs(text);
    let mut record = |name: &str, word: &str| {
        let release = word.trim_end_matches(['.', ',']);
        if let Some(newest) = Version::parse(release) {
            let pin = Pin {
                newest: Newest::Exactly(newest),
                spec: format!("{name}=={release}"),
                source: PinSource::RecordedRun,
            };
            versions.pins.insert(name.to_string(), pin);
        }
    };
    let word_after = |line: &str, label: &str| {
        line.find(label).map(|at| line[at + label.len()..].split_whitespace().next().unwrap_or_default().to_string())
    };
    let lines: Vec<&str> = outputs.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        // `Unsloth 2025.8.9: Fast Gemma3 patching` or `get_peft_model`'s `Unsloth 2024.10.0 patched 28 layers`.
        let banner = word_after(line, "Unsloth ").filter(|w| w.starts_with("20") && w.ends_with(':'));
        let patched =
            || word_after(line, "Unsloth ").filter(|w| w.starts_with("20") && line.contains(&format!("{w} patched ")));
        let Some(release) = banner.or_else(patched) else {
            continue;
        };
        record("unsloth", release.trim_end_matches(':'));
        if let Some(word) = word_after(line, "Transformers: ") {
            record("transformers", &word);
        }
        // The torch release is on one of the banner's next lines.
        if let Some(word) = lines.iter().skip(i + 1).take(3).find_map(|l| word_after(l, "Torch: ")) {
            record("torch", &word);
        }
    }
    versions
}

/// The text of a notebook's saved outputs (streams and `text/plain` results), one after the other.
fn notebook_outputs(text: &str) -> String {
    let Ok(notebook) = serde_json::from_str::<serde_json::Value>(text) else {
        return String::new();
    };
    let mut out = String::new();
    let mut push = |value: Option<&serde_json::Value>| match value {
        Some(serde_json::Value::String(s)) => out.push_str(s),
        Some(serde_json::Value::Array(lines)) => {
            lines.iter().filter_map(serde_json::Value::as_str).for_each(|l| out.push_str(l))
        }
        _ => {}
    };
    let cells = notebook.get("cells").and_then(serde_json::Value::as_array).into_iter().flatten();
    for output in cells.filter_map(|c| c.get("outputs")?.as_array()).flatten() {
        push(output.get("text"));
        push(output.get("data").and_then(|d| d.get("text/plain")));
    }
    out
}

/// The lines of shell-like text with `\\`-continued lines joined: `%pip install --upgrade \\`
/// followed by one package a line is one command.
fn logical_lines(code: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in code.lines() {
        match line.trim_end().strip_suffix('\\') {
            Some(continued) => {
                pending.push_str(continued);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                lines.push(std::mem::take(&mut pending));
            }
        }
    }
    if !pending.is_empty() {
        lines.push(pending);
    }
    lines
}

/// The code cells of a notebook, one after the other (outputs and Markdown left out).
fn notebook_code(text: &str) -> String {
    let Ok(notebook) = serde_json::from_str::<serde_json::Value>(text) else {
        return String::new();
    };
    let cells = notebook.get("cells").and_then(serde_json::Value::as_array).into_iter().flatten();
    let mut code = String::new();
    for cell in cells.filter(|c| c.get("cell_type").and_then(serde_json::Value::as_str) != Some("markdown")) {
        match cell.get("source") {
            Some(serde_json::Value::String(source)) => code.push_str(source),
            Some(serde_json::Value::Array(lines)) => {
                lines.iter().filter_map(serde_json::Value::as_str).for_each(|l| code.push_str(l))
            }
            _ => {}
        }
        code.push('\n');
    }
    code
}

/// Whitespace-separated words, with `"…"` quotes taken away.
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether `name` is a dependency file pins are read from.
pub fn is_dependency_file(name: &str) -> bool {
    matches!(name, "pyproject.toml" | "setup.cfg" | "setup.py" | "uv.lock" | "poetry.lock")
        || name.starts_with("requirements") && name.ends_with(".txt")
}

/// PEP 503 normalization, restricted to the frameworks rules know.
fn framework_name(raw: &str) -> Option<String> {
    let name = raw.trim().to_ascii_lowercase().replace(['_', '.'], "-");
    FRAMEWORKS.contains(&name.as_str()).then_some(name)
}

/// `trl[vllm]>=0.20,<0.22 ; python_version>"3.9"  # comment` → (trl, newest allowed).
fn parse_requirement(line: &str, path: &Path) -> Option<(String, Pin)> {
    let line = line.split(" #").next()?.split(';').next()?.trim();
    if line.is_empty() || line.starts_with(['#', '-']) {
        return None;
    }
    let name_end =
        line.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))).unwrap_or(line.len());
    let name = framework_name(&line[..name_end])?;
    let mut rest = line[name_end..].trim_start();
    if rest.starts_with('[') {
        rest = rest.find(']').map_or("", |i| &rest[i + 1..]).trim_start();
    }
    let rest = rest.trim_start_matches('(').trim_end_matches(')');
    let newest = newest_allowed(rest)?;
    Some((
        name.clone(),
        Pin { newest, spec: format!("{name}{}", rest.replace(' ', "")), source: PinSource::File(path.to_path_buf()) },
    ))
}

/// The newest release allowed by a PEP 440 or Poetry specifier list (`>=1,<2`, `^0.20`).
fn newest_allowed(spec: &str) -> Option<Newest> {
    let mut best: Option<Newest> = None;
    for clause in spec.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        let op_len = clause.find(|c: char| c.is_ascii_digit() || c == 'v').unwrap_or(clause.len());
        let (op, number) = clause.split_at(op_len);
        let version = Version::parse(number.trim_end_matches(".*"))?;
        let depth = version.0.len().saturating_sub(1);
        let bound = match op.trim() {
            "==" | "===" | "" => Newest::Exactly(version),
            "<=" => Newest::AtMost(version),
            "<" => Newest::Below(version),
            "~=" => Newest::Below(version.bump(depth.saturating_sub(1))),
            "~" => Newest::Below(version.bump(depth.min(1))),
            "^" => {
                let first_nonzero = version.0.iter().position(|&p| p != 0).unwrap_or(depth);
                Newest::Below(version.bump(first_nonzero.min(depth)))
            }
            _ => continue,
        };
        if let Newest::Exactly(_) = bound {
            return Some(bound);
        }
        best = Some(match best {
            Some(current) if upper(&current) <= upper(&bound) => current,
            _ => bound,
        });
    }
    best
}

/// Orders bounds by how new a release they allow (`<X` allows less than `<=X`).
fn upper(newest: &Newest) -> (&Version, u8) {
    match newest {
        Newest::Below(v) => (v, 0),
        Newest::Exactly(v) | Newest::AtMost(v) => (v, 1),
    }
}

/// `[project] dependencies` and `optional-dependencies`, and Poetry's dependency tables.
fn pyproject_requirements(text: &str) -> Vec<String> {
    let doc = syntax::parse(text, Language::Toml);
    let Some(root) = doc.root_mapping() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let strings = |m: Option<&Mapping>, key: &str| -> Vec<String> {
        m.and_then(|m| m.get(key))
            .and_then(|n| n.as_sequence())
            .map(|items| items.iter().filter_map(|i| i.as_scalar()?.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let project = root.get("project").and_then(|n| n.as_mapping());
    out.extend(strings(project, "dependencies"));
    if let Some(optional) = project.and_then(|p| p.get("optional-dependencies")).and_then(|n| n.as_mapping()) {
        for entry in &optional.entries {
            out.extend(strings(Some(optional), &entry.key));
        }
    }
    if let Some(groups) = root.get("dependency-groups").and_then(|n| n.as_mapping()) {
        for entry in &groups.entries {
            out.extend(strings(Some(groups), &entry.key));
        }
    }
    let poetry = root.entry_path("tool.poetry").and_then(|e| e.value.as_mapping());
    let mut tables: Vec<&Mapping> =
        poetry.and_then(|p| p.get("dependencies")).and_then(|n| n.as_mapping()).into_iter().collect();
    if let Some(groups) = poetry.and_then(|p| p.get("group")).and_then(|n| n.as_mapping()) {
        tables.extend(groups.entries.iter().filter_map(|g| g.value.as_mapping()?.get("dependencies")?.as_mapping()));
    }
    for table in tables {
        for entry in &table.entries {
            let spec = match &entry.value.value {
                syntax::Value::Scalar(s) => Some(s.text.clone()),
                syntax::Value::Mapping(m) => m.get("version").and_then(|v| v.as_scalar()).map(|s| s.text.clone()),
                syntax::Value::Sequence(_) => None,
            };
            if let Some(spec) = spec.filter(|s| s.trim() != "*") {
                out.push(format!("{}{}", entry.key, spec.trim()));
            }
        }
    }
    out
}

/// The indented lines of `install_requires =` in a `setup.cfg`.
fn setup_cfg_requirements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("install_requires") {
            if let Some(value) = rest.trim_start().strip_prefix('=') {
                inside = true;
                out.push(value.trim().to_string());
                continue;
            }
        }
        if inside {
            if line.starts_with([' ', '\t']) || line.trim().is_empty() {
                out.push(line.trim().to_string());
            } else {
                inside = false;
            }
        }
    }
    out
}

/// String literals inside `install_requires=[...]` in a `setup.py` (read, never run).
/// The string literals of `install_requires=[…]`, and of a Hugging Face-style dependency
/// table (`_deps = [...]`, looked up as `deps["trl"]` in `install_requires`; transformers,
/// TRL and open-r1 write their `setup.py` so). Nothing is executed.
fn setup_py_requirements(text: &str) -> Vec<String> {
    let mut out = string_list_after(text, "install_requires");
    out.extend(string_list_after(text, "_deps ="));
    out
}

/// The `name` and `version` a `setup.py` (`setup(name="…", version="…")`) or `pyproject.toml`
/// (`[project]`, `[tool.poetry]`) declares as literals; the file is read once for both.
fn package_declaration(file_name: &str, text: &str) -> (Option<String>, Option<String>) {
    match file_name {
        "setup.py" => {
            let Some(call) = text.find("setup(").map(|at| &text[at..]) else { return (None, None) };
            let literal = |field: &str| {
                let key = format!("{field}=");
                let value = &call[call.find(&key)? + key.len()..];
                let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''))?;
                value[1..].split(quote).next().map(str::to_string)
            };
            (literal("name"), literal("version"))
        }
        "pyproject.toml" => {
            let doc = syntax::parse(text, Language::Toml);
            let Some(root) = doc.root_mapping() else { return (None, None) };
            let field = |field: &str| {
                ["project", "tool.poetry"].iter().find_map(|table| {
                    root.entry_path(&format!("{table}.{field}"))?.value.as_scalar()?.as_str().map(str::to_string)
                })
            };
            (field("name"), field("version"))
        }
        _ => (None, None),
    }
}

/// The string literals of the first `[…]` list after `marker`.
fn string_list_after(text: &str, marker: &str) -> Vec<String> {
    let Some(start) = text.find(marker) else {
        return Vec::new();
    };
    let rest = &text[start..];
    let Some(open) = rest.find('[') else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut literal: Option<(char, String)> = None;
    let mut comment = false;
    for c in rest[open + 1..].chars() {
        match &mut literal {
            Some((quote, value)) if c == *quote => {
                out.push(std::mem::take(value));
                literal = None;
            }
            Some((_, value)) => value.push(c),
            // A comment runs to the end of its line (its apostrophes open no string).
            None if comment => comment = c != '\n',
            None if c == '#' => comment = true,
            None if c == '"' || c == '\'' => literal = Some((c, String::new())),
            None if c == ']' => break,
            None => {}
        }
    }
    out
}

/// `[[package]]` entries (`name = "trl"` then `version = "0.20.0"`) of uv.lock / poetry.lock.
fn lock_versions(text: &str, path: &Path) -> Versions {
    let mut versions = Versions::default();
    let mut name: Option<String> = None;
    let value = |line: &str, key: &str| -> Option<String> {
        let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?.trim();
        Some(rest.trim_matches('"').to_string())
    };
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            name = None;
        } else if let Some(n) = value(line, "name") {
            name = framework_name(&n);
        } else if let (Some(n), Some(v)) = (&name, value(line, "version")) {
            if let Some(version) = Version::parse(&v) {
                let pin = Pin {
                    newest: Newest::Exactly(version),
                    spec: format!("{n}=={v}"),
                    source: PinSource::File(path.to_path_buf()),
                };
                versions.pins.entry(n.clone()).or_insert(pin);
            }
            name = None;
        }
    }
    versions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    fn from(name: &str, text: &str) -> Versions {
        Versions::from_file(name, text, Path::new(name))
    }

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(v("2.5.1+cu121"), Version(vec![2, 5, 1]));
        assert_eq!(v("1.0.0rc1"), Version(vec![1, 0, 0]));
        assert!(v("4.46") == v("4.46.0"));
        assert_eq!(Version::release(&[0, 27]), v("0.27.0"));
        assert!(v("0.27") > v("0.9.6"));
        assert_eq!(Version::parse("dev"), None);
        assert_eq!(Version::parse("99999999999999999999"), None, "out of range");
        let huge = from("requirements.txt", "trl~=18446744073709551615.1\n");
        assert!(huge.at_least("trl", &v("1.0")));
    }

    #[test]
    fn a_notebooks_saved_banner_records_the_releases_it_ran() {
        let notebook = r#"{"cells": [
            {"cell_type": "code", "source": ["!pip install unsloth\n", "!pip install transformers==4.56.2\n"], "outputs": []},
            {"cell_type": "markdown", "source": ["Unsloth 2026.1.1: not an output"]},
            {"cell_type": "code", "source": ["model = FastModel.from_pretrained('x')"], "outputs": [{"name": "stdout", "output_type": "stream",
              "text": ["==((====))==  Unsloth 2025.8.9: Fast Gemma3 patching. Transformers: 4.55.2.\n",
                       "   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\n",
                       "O^O/ \\_/ \\    Torch: 2.8.0+cu126. CUDA: 7.5. CUDA Toolkit: 12.6. Triton: 3.4.0\n"]}]},
            {"cell_type": "code", "source": ["model = get_peft_model(model)"], "outputs": [{"output_type": "stream", "text": "Unsloth 2024.10.0 patched 28 layers with 28 QKV layers.\n"}]}
        ]}"#;
        let recorded = from_recorded_run(notebook);
        assert_eq!(recorded.newest("unsloth"), Some(v("2024.10.0")), "the last record wins");
        assert_eq!(recorded.newest("torch"), Some(v("2.8.0")));
        let path = Path::new("nb.ipynb");
        let versions = from_install_commands(notebook, path).with_recorded_run(recorded);
        assert_eq!(
            versions.newest("transformers"),
            Some(v("4.55.2")),
            "the outputs ran 4.55.2, whatever the cell pins now"
        );
        assert_eq!(versions.newest("unsloth"), Some(v("2024.10.0")), "an unpinned install ran the recorded release");
        assert!(versions.get("unsloth").unwrap().describe().contains("saved outputs record"));
        assert_eq!(from_recorded_run("{\"cells\": [{\"source\": \"Unsloth 2025.1.1: x\"}]}").get("unsloth"), None);
        assert_eq!(from_recorded_run("not json Unsloth 2025.1.1:"), Versions::default());
    }

    #[test]
    fn llamafactory_configs_are_pinned_to_its_checked_ranges_unless_the_project_pins() {
        let (launcher, requirements) =
            ("LLaMA-Factory", ["transformers>=4.55.0,<=5.8.0,!=4.57.0,!=5.6.0", "trl>=0.18.0,<=0.24.0"]);
        let unpinned = Versions::default().with_launcher_requirements(launcher, &requirements);
        assert!(unpinned.at_least("transformers", &v("5.8")));
        assert!(!unpinned.at_least("transformers", &v("5.10")));
        assert!(!unpinned.at_least("trl", &v("0.25")));
        let pin = unpinned.get("transformers").unwrap();
        assert_eq!(pin.describe(), "transformers>=4.55.0,<=5.8.0,!=4.57.0,!=5.6.0 (required by LLaMA-Factory)");
        let pinned =
            from("requirements.txt", "transformers==5.12.0\n").with_launcher_requirements(launcher, &requirements);
        assert!(pinned.at_least("transformers", &v("5.12")), "the project's own pin wins");
        assert!(!pinned.at_least("trl", &v("0.25")), "frameworks it leaves open get the launcher's range");
    }

    #[test]
    fn requirement_files() {
        let reqs = from(
            "requirements.txt",
            "# pinned\ntrl==0.19.1  # GRPO\ntransformers[torch]>=4.40,<4.46 ; python_version > \"3.8\"\n\
             torch>=2.3\n-r other.txt\npeft~=0.13.0\nnumpy==2.0\n",
        );
        assert!(!reqs.at_least("trl", &v("0.27")));
        assert!(reqs.at_least("trl", &v("0.19")));
        assert!(!reqs.at_least("transformers", &v("4.46")));
        assert!(reqs.at_least("transformers", &v("4.45")));
        assert!(reqs.at_least("torch", &v("9.0")), "no upper bound: newest");
        assert!(!reqs.at_least("peft", &v("0.14")));
        assert!(reqs.get("numpy").is_none());
        assert_eq!(reqs.get("trl").unwrap().describe(), "trl==0.19.1 (requirements.txt)");
    }

    #[test]
    fn pyproject_poetry_setup_and_locks() {
        let pyproject = from(
            "pyproject.toml",
            "[project]\ndependencies = [\"trl>=0.20,<0.22\"]\n[project.optional-dependencies]\ngpu = [\"vllm==0.10.1\"]\n\
             [tool.poetry.dependencies]\ntransformers = \"^4.44\"\ntorch = { version = \"~2.4\" }\n",
        );
        assert!(!pyproject.at_least("trl", &v("0.22")));
        assert!(!pyproject.at_least("vllm", &v("0.10.2")));
        assert!(!pyproject.at_least("transformers", &v("5.0")));
        assert!(pyproject.at_least("transformers", &v("4.99")));
        assert!(!pyproject.at_least("torch", &v("2.5")));

        let cfg = from(
            "setup.cfg",
            "[options]\ninstall_requires =\n    accelerate==0.34.2\n    deepspeed<0.15\n[other]\nx = 1\n",
        );
        assert!(!cfg.at_least("accelerate", &v("1.0")));
        assert!(!cfg.at_least("deepspeed", &v("0.15")));

        let notebook = r#"{"cells": [{"source": "%%capture\nif COLAB:\n    !pip install --no-deps unsloth_zoo bitsandbytes {xformers} peft trl triton unsloth\n!pip install transformers==4.56.2\n!pip install --no-deps trl==0.22.2"}, {"source": "!uv pip install -qqq \"trl==0.25.1\" \"unsloth[base] @ git+https://github.com/unslothai/unsloth\""}], "outputs": ["install with: `pip install trl==9.9`"]}"#;
        let installed = from_install_commands(notebook, Path::new("nb.ipynb"));
        assert!(!installed.at_least("transformers", &v("4.57")) && installed.at_least("transformers", &v("4.56.2")));
        assert!(
            !installed.at_least("trl", &v("0.26")) && installed.at_least("trl", &v("0.25.1")),
            "the last install wins"
        );
        assert!(installed.get("unsloth").is_none(), "unpinned and URL installs pin nothing");
        assert!(installed.installed_from_url("unsloth") && !installed.installed_from_url("trl"));
        let continued = "%pip install torch tensorboard\n%pip install  --upgrade \\\n  \"transformers==4.44.2\" \\\n  \"trl==0.9.6\"\n";
        let continued = from_install_commands(continued, Path::new("a.py"));
        assert!(
            !continued.at_least("trl", &v("0.10")) && continued.at_least("trl", &v("0.9.6")),
            "a `\\`-continued command"
        );
        assert!(!continued.at_least("transformers", &v("4.45")));
        let git = "!pip install transformers==4.56.2\n!pip install git+https://github.com/huggingface/transformers.git@0a1b2c3\n";
        let git = from_install_commands(git, Path::new("a.py"));
        assert!(
            git.get("transformers").is_none() && git.installed_from_url("transformers"),
            "the URL install is the later"
        );
        let script =
            "# get_ipython().system('uv pip install --system -qqq --no-deps accelerate peft \"trl==0.22.2\"')\n";
        assert!(!from_install_commands(script, Path::new("a.py")).at_least("trl", &v("0.23")));
        let converted = "# get_ipython().run_cell_magic('capture', '', 'if COLAB:\\n    !pip install unsloth  # here\\n!pip install transformers==4.56.2\\n!pip install --no-deps trl==0.22.2\\n')\n";
        let cell = from_install_commands(converted, Path::new("a.py"));
        assert!(
            !cell.at_least("transformers", &v("4.57")) && !cell.at_least("trl", &v("0.23")),
            "every command of a cell"
        );

        let table = from(
            "setup.py",
            "_deps = [\n    \"accelerate==1.4.0\",  # don't bump: it's pinned\n    \"trl[vllm]==0.18.0\",\n]\ndeps = {}\ninstall_requires = [deps[\"trl\"], deps[\"accelerate\"]]\n",
        );
        assert!(!table.at_least("trl", &v("0.19")) && table.at_least("trl", &v("0.18")));
        assert!(!table.at_least("accelerate", &v("1.5")));
        assert_eq!(table.project_package(), None, "no setup(name=…)");
        let named = from("setup.py", "setup(\n    name=\"open-r1\",\n    install_requires=[\"trl==0.18.0\"],\n)\n");
        assert_eq!(named.project_package(), Some("open-r1"));
        assert_eq!(
            from("setup.py", "setup(name='trl', install_requires=[])").project_package(),
            None,
            "a framework itself"
        );
        assert_eq!(
            from("pyproject.toml", "[project]\nname = \"my-rl\"\ndependencies = [\"trl>=0.20\"]\n").project_package(),
            Some("my-rl")
        );
        // A checkout of a framework pins that framework to its own version.
        let checkout =
            from("setup.py", "setup(\n    name=\"axolotl\",\n    version=\"0.4.1\",\n    install_requires=[],\n)\n");
        assert_eq!(checkout.newest("axolotl"), Some(v("0.4.1")));
        assert!(checkout.get("axolotl").unwrap().describe().contains("the repository is that framework itself"));
        let project = from("pyproject.toml", "[project]\nname = \"litgpt\"\nversion = \"0.5.3\"\n");
        assert_eq!(project.newest("litgpt"), Some(v("0.5.3")));
        assert_eq!(from("setup.py", "setup(name=\"my-rl\", version=\"1.0\")").newest("my-rl"), None, "not a framework");
        assert_eq!(from("setup.py", "setup(name=\"axolotl\", version=VERSION)").get("axolotl"), None, "not a literal");

        let py = from("setup.py", "setup(name='x', install_requires=[\"litgpt[all]==0.5.3\", 'unsloth'], extras={})");
        assert!(!py.at_least("litgpt", &v("0.5.4")));
        assert!(py.at_least("unsloth", &v("2025.1")));

        let lock = from("uv.lock", "[[package]]\nname = \"trl\"\nversion = \"0.21.0\"\nsource = {}\n\n[[package]]\nname = \"torch\"\nversion = \"2.6.0+cu124\"\n");
        assert!(lock.at_least("trl", &v("0.21")) && !lock.at_least("trl", &v("0.22")));
        assert!(!lock.at_least("torch", &v("2.7")));
    }
}
