//! Project settings: `oomlint.toml` (or `.oomlint.toml`), or `[tool.oomlint]` in
//! `pyproject.toml`, found by walking up from the checked file; `--config FILE` names one.
//!
//! ```toml
//! gpu = "A10G"              # the card runs are sized for
//! headroom = 0.10           # warn below 10 % free memory
//! select = ["ALL"]          # rules to run (codes or names; default: all)
//! ignore = ["OOM003"]       # rules to skip
//! exclude = ["helm/**"]     # files that are not training configs (globs, like --exclude)
//! [per-file-ignores]        # glob (relative to the config's directory) → rules
//! "experiments/**" = ["low-memory-headroom"]
//! [severity]                # rule → error | warning | info | off
//! unknown-key = "warning"
//! [framework-versions]      # override the versions pinned in dependency files
//! trl = "0.19.1"
//! [format]                  # glob → format, when detection cannot tell
//! "recipes/*.yaml" = "trl-grpo"
//! ```
//!
//! A modeline in the checked file, `# oomlint: gpu=A10G headroom=0.15`, wins over the file.
//! The leaves find and read the files (the CLI's and the server's `project` module); this
//! module reads their text.

use crate::diagnostic::Severity;
use crate::format::Format;
use crate::rules::{self, Rule};
use crate::syntax::{self, Language, Mapping, Node};
use crate::versions::Version;
use crate::HashMap;
use globset::{Glob, GlobMatcher};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// The keys [`Settings`] reads (`schema/oomlint.json` describes the same set).
pub const KEYS: [&str; 11] = [
    "gpu",
    "gpus",
    "headroom",
    "sample-tokens",
    "select",
    "ignore",
    "per-file-ignores",
    "severity",
    "framework-versions",
    "exclude",
    "format",
];

/// File names that hold oomlint settings, in the order they are looked for in a directory.
pub const CONFIG_FILES: [&str; 3] = ["oomlint.toml", ".oomlint.toml", "pyproject.toml"];

/// What the settings make of a rule for one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The rule runs with the severity it gives each finding.
    Default,
    /// The rule runs; its findings get this severity (`[severity]` table).
    Severity(Severity),
    /// The rule does not run (select / ignore / per-file-ignores / `off`).
    Off,
}

#[derive(Debug, Clone)]
struct PerFileIgnore {
    glob: GlobMatcher,
    rules: Vec<&'static str>,
}

#[derive(Debug, Clone)]
struct FormatOverride {
    glob: GlobMatcher,
    format: Format,
}

/// Settings for the files under one config (or the defaults when there is none).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The config file these settings come from (absolute: globs are relative to its directory).
    pub path: Option<PathBuf>,
    /// The directory relative paths of checked files start from (the leaf's working directory).
    pub working_dir: Option<PathBuf>,
    /// Rule codes to run; None runs every rule.
    select: Option<Vec<&'static str>>,
    ignore: Vec<&'static str>,
    per_file_ignores: Vec<PerFileIgnore>,
    severity: HashMap<&'static str, Level>,
    /// The target GPU (`gpu = "A10G"`).
    pub gpu: Option<String>,
    /// Whether `gpu` comes from the checked file's modeline (see `analysis::Options`).
    pub(crate) gpu_from_modeline: bool,
    /// The world size of runs whose launch is not in the file (`gpus = 8`, `# oomlint: gpus=8`).
    pub gpus: Option<u64>,
    /// Whether `gpus` comes from the checked file's modeline.
    pub(crate) gpus_from_modeline: bool,
    /// The free-memory fraction below which `low-memory-headroom` warns.
    pub headroom: Option<f64>,
    /// The longest sample of the dataset, in tokens, where the batches' lengths come from the
    /// data (`sample-tokens = 700`, `# oomlint: sample-tokens=700`).
    pub sample_tokens: Option<u64>,
    /// Whether `sample_tokens` comes from the checked file's modeline.
    pub(crate) sample_tokens_from_modeline: bool,
    pub(crate) framework_versions: BTreeMap<String, Version>,
    formats: Vec<FormatOverride>,
    /// Files not to check (`exclude`).
    exclude: Vec<GlobMatcher>,
}

/// Why a config could not be used, with the file it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError(pub String);

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Settings {
    /// Reads settings from the text of an `oomlint.toml` (or a `pyproject.toml`, whose
    /// `[tool.oomlint]` table is used).
    pub fn from_toml(text: &str) -> Result<Settings, SettingsError> {
        let doc = syntax::parse(text, Language::Toml);
        if let Some(problem) = doc.problems.first() {
            return Err(SettingsError(format!("invalid TOML: {}", problem.message)));
        }
        let empty = Mapping::default();
        let root = doc.root_mapping().unwrap_or(&empty);
        let table = match root.entry_path("tool.oomlint") {
            Some(entry) => {
                entry.value.as_mapping().ok_or_else(|| SettingsError("[tool.oomlint] must be a table".into()))?
            }
            None => root,
        };
        Settings::from_mapping(table)
    }

    fn from_mapping(table: &Mapping) -> Result<Settings, SettingsError> {
        let mut settings = Settings::default();
        for entry in &table.entries {
            let value = &entry.value;
            let key = entry.key.as_str();
            match key {
                "gpu" => settings.gpu = Some(string(value, key)?),
                "gpus" => {
                    let count = value.as_scalar().and_then(|s| s.as_f64()).filter(|n| *n >= 1.0 && n.fract() == 0.0);
                    settings.gpus =
                        Some(count.ok_or_else(|| invalid(key, "a whole number of GPUs, at least 1"))? as u64);
                }
                "headroom" => {
                    let fraction = value.as_scalar().and_then(|s| s.as_f64()).filter(|f| (0.0..1.0).contains(f));
                    settings.headroom = Some(fraction.ok_or_else(|| invalid(key, "a number in [0, 1)"))?);
                }
                "sample-tokens" => {
                    let count = value.as_scalar().and_then(|s| s.as_f64()).filter(|n| *n >= 1.0 && n.fract() == 0.0);
                    settings.sample_tokens =
                        Some(count.ok_or_else(|| invalid(key, "a whole number of tokens, at least 1"))? as u64);
                }
                "select" => settings.select = Some(rule_list(value, key)?),
                "ignore" => settings.ignore = rule_list(value, key)?,
                "per-file-ignores" => {
                    for (glob, rules) in table_entries(value, key)? {
                        let rules = rule_list(rules, &format!("per-file-ignores.\"{glob}\""))?;
                        settings.per_file_ignores.push(PerFileIgnore { glob: glob_matcher(glob)?, rules });
                    }
                }
                "severity" => {
                    for (rule, level) in table_entries(value, key)? {
                        let level = match string(level, &format!("severity.{rule}"))?.as_str() {
                            "error" => Level::Severity(Severity::Error),
                            "warning" => Level::Severity(Severity::Warning),
                            "info" => Level::Severity(Severity::Info),
                            "off" => Level::Off,
                            other => {
                                return Err(invalid(
                                    &format!("severity.{rule}"),
                                    &format!("error, warning, info or off, not `{other}`"),
                                ))
                            }
                        };
                        for code in resolve_rules(rule)? {
                            settings.severity.insert(code, level);
                        }
                    }
                }
                "framework-versions" => {
                    for (framework, version) in table_entries(value, key)? {
                        let text = string(version, &format!("framework-versions.{framework}"))?;
                        let parsed = Version::parse(&text).ok_or_else(|| {
                            invalid(&format!("framework-versions.{framework}"), "a version such as \"0.19.1\"")
                        })?;
                        settings.framework_versions.insert(framework.to_ascii_lowercase(), parsed);
                    }
                }
                "exclude" => {
                    let globs = value.as_sequence().ok_or_else(|| invalid(key, "a list of globs"))?;
                    for glob in globs {
                        let glob =
                            glob.as_scalar().map(|s| s.text.clone()).ok_or_else(|| invalid(key, "a list of globs"))?;
                        settings.exclude.push(glob_matcher(&glob)?);
                    }
                }
                "format" => {
                    for (glob, name) in table_entries(value, key)? {
                        let name = string(name, &format!("format.\"{glob}\""))?;
                        let format = Format::from_name(&name).ok_or_else(|| {
                            invalid(&format!("format.\"{glob}\""), &format!("a format name, not `{name}`"))
                        })?;
                        settings.formats.push(FormatOverride { glob: glob_matcher(glob)?, format });
                    }
                }
                // Unknown keys are reported by `unknown-key` when the config itself is checked.
                _ => {}
            }
        }
        Ok(settings)
    }

    /// These settings with `--select` (replacing `select`) and `--ignore` (added to `ignore`)
    /// from the command line.
    pub fn with_selection(&self, select: &[String], ignore: &[String]) -> Result<Settings, SettingsError> {
        let mut settings = self.clone();
        if !select.is_empty() {
            let mut codes = Vec::new();
            for name in select {
                codes.extend(resolve_rules(name)?);
            }
            settings.select = Some(codes);
        }
        for name in ignore {
            settings.ignore.extend(resolve_rules(name)?);
        }
        Ok(settings)
    }

    /// Applies a `# oomlint: gpu=A10G gpus=8 headroom=0.15` modeline from the first 20 lines.
    pub fn with_modeline(&self, text: &str) -> Cow<'_, Settings> {
        let mut directives = crate::format::detect::modeline_comments(text, &["oomlint:"])
            .filter_map(|comment| comment.strip_prefix("oomlint:"))
            .peekable();
        if directives.peek().is_none() {
            return Cow::Borrowed(self);
        }
        let mut settings = self.clone();
        for directive in directives {
            for setting in directive.split_whitespace() {
                if let Some(gpu) = setting.strip_prefix("gpu=") {
                    settings.gpu = Some(gpu.replace('_', " "));
                    settings.gpu_from_modeline = true;
                } else if let Some(gpus) = setting.strip_prefix("gpus=").and_then(|n| n.parse::<u64>().ok()) {
                    if gpus >= 1 {
                        settings.gpus = Some(gpus);
                        settings.gpus_from_modeline = true;
                    }
                } else if let Some(tokens) = setting.strip_prefix("sample-tokens=").and_then(|n| n.parse::<u64>().ok())
                {
                    if tokens >= 1 {
                        settings.sample_tokens = Some(tokens);
                        settings.sample_tokens_from_modeline = true;
                    }
                } else if let Some(headroom) = setting.strip_prefix("headroom=").and_then(|h| h.parse::<f64>().ok()) {
                    if (0.0..1.0).contains(&headroom) {
                        settings.headroom = Some(headroom);
                    }
                }
            }
        }
        Cow::Owned(settings)
    }

    /// The directory globs are relative to.
    fn base(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }

    /// `file` relative to the config's directory, for glob matching.
    fn relative<'p>(&self, file: &'p Path) -> std::borrow::Cow<'p, Path> {
        let Some(base) = self.base() else {
            return file.into();
        };
        let absolute = match &self.working_dir {
            Some(dir) if file.is_relative() => lexically_normal(&dir.join(file)),
            _ => lexically_normal(file),
        };
        match absolute.strip_prefix(base) {
            Ok(relative) => relative.to_path_buf().into(),
            Err(_) => file.into(),
        }
    }

    /// Whether `exclude` names `file`, or a directory above it.
    pub fn excludes(&self, file: &Path) -> bool {
        if self.exclude.is_empty() {
            return false;
        }
        let relative = self.relative(file);
        relative.ancestors().filter(|p| !p.as_os_str().is_empty()).any(|p| self.exclude.iter().any(|g| g.is_match(p)))
    }

    /// The format the `format` table forces for `file`.
    pub(crate) fn format_for(&self, file: &Path) -> Option<Format> {
        let relative = self.relative(file);
        self.formats.iter().find(|f| f.glob.is_match(&relative)).map(|f| f.format)
    }

    /// The level of `rule` for `file` after select / ignore / per-file-ignores / severity.
    pub fn level(&self, rule: &Rule, file: &Path) -> Level {
        let selected = self.select.as_ref().is_none_or(|s| s.contains(&rule.code));
        if !selected || self.ignore.contains(&rule.code) {
            return Level::Off;
        }
        if !self.per_file_ignores.is_empty() {
            let relative = self.relative(file);
            if self.per_file_ignores.iter().any(|p| p.rules.contains(&rule.code) && p.glob.is_match(&relative)) {
                return Level::Off;
            }
        }
        self.severity.get(rule.code).copied().unwrap_or(Level::Default)
    }
}

/// `path` with `.` and `..` taken away lexically (symbolic links are not resolved).
pub fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether a `pyproject.toml` has a `[tool.oomlint]` table.
pub fn has_tool_oomlint(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("[tool.oomlint") || l.starts_with("tool.oomlint")
    })
}

fn invalid(key: &str, expected: &str) -> SettingsError {
    SettingsError(format!("`{key}` must be {expected}"))
}

fn string(node: &Node, key: &str) -> Result<String, SettingsError> {
    node.as_scalar().and_then(|s| s.as_str()).map(str::to_string).ok_or_else(|| invalid(key, "a string"))
}

fn table_entries<'n>(node: &'n Node, key: &str) -> Result<Vec<(&'n str, &'n Node)>, SettingsError> {
    let table = node.as_mapping().ok_or_else(|| invalid(key, "a table"))?;
    Ok(table.entries.iter().map(|e| (e.key.as_str(), &e.value)).collect())
}

fn find_rule(key: &str) -> Result<&'static Rule, SettingsError> {
    rules::find(key).ok_or_else(|| SettingsError(format!("unknown rule `{key}` (see `oomlint rules`)")))
}

/// A list of rule codes, code prefixes (`OOM1`) or names; `ALL` selects every rule.
fn rule_list(node: &Node, key: &str) -> Result<Vec<&'static str>, SettingsError> {
    let items = node.as_sequence().ok_or_else(|| invalid(key, "a list of rule codes or names"))?;
    let mut codes = Vec::new();
    for item in items {
        codes.extend(resolve_rules(&string(item, key)?)?);
    }
    Ok(codes)
}

/// The codes one entry names: a code, a name, a code prefix (`OOM1`) or `ALL`.
fn resolve_rules(name: &str) -> Result<Vec<&'static str>, SettingsError> {
    let upper = name.to_ascii_uppercase();
    let prefix = if upper == "ALL" {
        Some("OOM")
    } else {
        upper.strip_prefix("OOM").filter(|d| d.len() < 3).map(|_| upper.as_str())
    };
    let Some(prefix) = prefix else {
        return Ok(vec![find_rule(name)?.code]);
    };
    let codes: Vec<&'static str> = rules::RULES.iter().filter(|r| r.code.starts_with(prefix)).map(|r| r.code).collect();
    if codes.is_empty() {
        return Err(SettingsError(format!("no rule code starts with `{prefix}`")));
    }
    Ok(codes)
}

fn glob_matcher(pattern: &str) -> Result<GlobMatcher, SettingsError> {
    Glob::new(pattern).map(|g| g.compile_matcher()).map_err(|e| SettingsError(format!("invalid glob `{pattern}`: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &str) -> &'static Rule {
        rules::find(name).unwrap()
    }

    #[test]
    fn reads_every_setting() {
        let settings = Settings::from_toml(
            "gpu = \"A10G\"\nheadroom = 0.15\nignore = [\"duplicate-key\"]\n\
             [per-file-ignores]\n\"experiments/**\" = [\"OOM001\"]\n\
             [severity]\nyaml-syntax = \"warning\"\n\
             [framework-versions]\ntrl = \"0.19.1\"\n\
             [format]\n\"recipes/*.yaml\" = \"trl-grpo\"\n",
        )
        .unwrap();
        assert_eq!(settings.gpu.as_deref(), Some("A10G"));
        assert_eq!(settings.headroom, Some(0.15));
        assert_eq!(settings.level(rule("duplicate-key"), Path::new("a.yaml")), Level::Off);
        assert_eq!(settings.level(rule("yaml-syntax"), Path::new("a.yaml")), Level::Severity(Severity::Warning));
        assert_eq!(settings.level(rule("yaml-syntax"), Path::new("experiments/x/a.yaml")), Level::Off);
        assert_eq!(settings.framework_versions["trl"], Version::parse("0.19.1").unwrap());
        assert_eq!(settings.format_for(Path::new("recipes/a.yaml")), Some(Format::TrlGrpo));
        assert_eq!(settings.format_for(Path::new("other/a.yaml")), None);
    }

    #[test]
    fn select_limits_the_rules() {
        let settings = Settings::from_toml("[tool.oomlint]\nselect = [\"OOM001\"]\n").unwrap();
        assert_eq!(settings.level(rule("duplicate-key"), Path::new("a.yaml")), Level::Off);
        assert_eq!(settings.level(rule("yaml-syntax"), Path::new("a.yaml")), Level::Default);
        let by_prefix = Settings::from_toml("select = [\"OOM0\"]\nignore = [\"oom002\"]\n").unwrap();
        assert_eq!(by_prefix.level(rule("yaml-syntax"), Path::new("a.yaml")), Level::Default);
        assert_eq!(by_prefix.level(rule("duplicate-key"), Path::new("a.yaml")), Level::Off);
        assert!(Settings::from_toml("select = [\"OOM99\"]").is_err());
    }

    #[test]
    fn bad_settings_are_errors() {
        for (text, expected) in [
            ("ignore = [\"no-such-rule\"]", "unknown rule `no-such-rule`"),
            ("headroom = 2", "`headroom` must be a number in [0, 1)"),
            ("[severity]\nyaml-syntax = \"loud\"", "error, warning, info or off"),
            ("[format]\n\"*.yaml\" = \"nope\"", "a format name"),
            ("gpu = ", "invalid TOML"),
        ] {
            let error = Settings::from_toml(text).unwrap_err();
            assert!(error.0.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn command_line_selection() {
        let settings = Settings::from_toml("ignore = [\"OOM001\"]\n").unwrap();
        let narrowed = settings.with_selection(&["OOM00".into()], &["duplicate-key".into()]).unwrap();
        assert_eq!(narrowed.level(rule("yaml-syntax"), Path::new("a.yaml")), Level::Off, "config ignore stays");
        assert_eq!(narrowed.level(rule("duplicate-key"), Path::new("a.yaml")), Level::Off);
        assert_eq!(narrowed.level(rule("unknown-key"), Path::new("a.yaml")), Level::Default);
        assert!(settings.with_selection(&[], &["nope".into()]).is_err());
    }

    #[test]
    fn modeline_wins() {
        let settings = Settings::from_toml("gpu = \"A10G\"\nheadroom = 0.1\n").unwrap();
        let file = settings.with_modeline("# oomlint: gpu=A100_80GB headroom=0.2\nkey: 1\n");
        assert_eq!(file.gpu.as_deref(), Some("A100 80GB"));
        assert_eq!(file.headroom, Some(0.2));
    }

    #[test]
    fn gpus_is_a_whole_number_and_a_modeline_wins() {
        let settings = Settings::from_toml("gpus = 8\n").unwrap();
        assert_eq!((settings.gpus, settings.gpus_from_modeline), (Some(8), false));
        let file = settings.with_modeline("# oomlint: gpus=4\nkey: 1\n");
        assert_eq!((file.gpus, file.gpus_from_modeline), (Some(4), true));
        assert_eq!(settings.with_modeline("# oomlint: gpus=0\n").gpus, Some(8), "0 GPUs is no world size");
        let sampled = Settings::from_toml("sample-tokens = 700\n").unwrap();
        assert_eq!((sampled.sample_tokens, sampled.sample_tokens_from_modeline), (Some(700), false));
        let file = sampled.with_modeline("# oomlint: sample-tokens=300\n");
        assert_eq!((file.sample_tokens, file.sample_tokens_from_modeline), (Some(300), true));
        assert!(Settings::from_toml("sample-tokens = 0\n").is_err());
        for bad in ["gpus = 0\n", "gpus = 2.5\n", "gpus = \"8\"\n"] {
            assert!(Settings::from_toml(bad).is_err(), "{bad}");
        }
    }
}
