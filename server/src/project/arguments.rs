//! The argument dataclasses a repository's own scripts pass to `TrlParser` or
//! `HfArgumentParser`, read as text from the Python files around a config (nothing is run):
//! a config of that repository may carry their fields (`dataset_id_or_path` of a
//! `ScriptArguments`), which TRL's and transformers' schemas do not know.
//!
//! Which files: those of the config's directory and of each directory above it up to the
//! repository's root (a directory with `.git`, as the search for pins), each with its
//! subdirectories two levels down (`training/scripts/dpo/run_dpo.py` beside
//! `training/receipes/dpo.yaml`). Without a repository root, only the config's directory
//! and its parent are searched, so that the neighbours of a copied project are not read.

use oomlint_core::own_arguments::OwnArguments;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many levels below each searched directory its subdirectories are searched.
pub(super) const DEPTH: usize = 2;

/// Without a repository root, how many directories above the config's are searched.
pub(super) const NEAR_LEVELS: usize = 1;

/// Python files larger than this are not read.
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;

/// At most this many Python files are read for one config's directory.
pub(super) const MAX_FILES: usize = 4000;

/// Directories never searched: tools' caches and installed packages.
pub(super) fn skipped_directory(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "__pycache__" | "node_modules" | "site-packages" | "venv")
}

/// What one Python file says: the classes its parser calls take, and its dataclasses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PythonFile {
    /// Names in `TrlParser(...)` / `HfArgumentParser(...)` calls (last dotted segment).
    pub parsed: BTreeSet<String>,
    /// `@dataclass` classes: name → (base names, field names).
    pub dataclasses: BTreeMap<String, (Vec<String>, Vec<String>)>,
}

/// Reads `text`, a Python file, without running it.
pub fn scan(text: &str) -> PythonFile {
    let mut file = PythonFile::default();
    if !text.contains("dataclass") && !text.contains("ArgumentParser") && !text.contains("TrlParser") {
        return file;
    }
    let code = code_lines(text);
    for parser in ["TrlParser(", "HfArgumentParser("] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(parser) {
            let preceded = rest[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
            let after = &rest[at + parser.len()..];
            if !preceded {
                let arguments = balanced(after);
                let arguments = arguments.replace("dataclass_types", "");
                file.parsed.extend(
                    identifiers(&arguments)
                        .filter(|name| !matches!(*name, "None" | "True" | "False"))
                        .map(str::to_string),
                );
            }
            rest = after;
        }
    }
    dataclasses(&code, &mut file.dataclasses);
    file
}

/// The text with comments and the words of strings taken out (their quotes and layout kept), so that
/// neither a docstring's `name: description` nor a `#` comment reads as code.
fn code_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '"' || c == '\'' {
            let triple = i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c;
            let quote = if triple { 3 } else { 1 };
            out.extend(std::iter::repeat_n(c, quote));
            i += quote;
            while i < chars.len() {
                if chars[i] == '\\' {
                    i += 2;
                    continue;
                }
                if chars[i] == c && (!triple || (i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c)) {
                    break;
                }
                if chars[i] == '\n' && !triple {
                    break;
                }
                // Keep the layout (a closing `"""` keeps its indentation), drop the words.
                if matches!(chars[i], '\n' | ' ' | '\t') {
                    out.push(chars[i]);
                }
                i += 1;
            }
            if i < chars.len() && chars[i] == c {
                out.extend(std::iter::repeat_n(c, quote));
                i += quote;
            }
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The text up to the parenthesis that closes the one just opened.
fn balanced(text: &str) -> &str {
    let mut depth = 1usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..at];
                }
            }
            _ => {}
        }
    }
    text
}

/// The names in `text`, each dotted name by its last segment (`trl.SFTConfig` → `SFTConfig`).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter_map(|word| word.rsplit('.').next())
        .filter(|word| word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The `@dataclass` classes of `code` (comments and strings blanked) with their bases and the
/// names annotated at the top of their bodies.
fn dataclasses(code: &str, out: &mut BTreeMap<String, (Vec<String>, Vec<String>)>) {
    let lines: Vec<&str> = code.lines().collect();
    let mut decorated = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.starts_with("@dataclass") || line.starts_with("@dataclasses.dataclass") {
            decorated = true;
            continue;
        }
        if line.starts_with('@') || line.is_empty() {
            continue;
        }
        let Some(header) = line.strip_prefix("class ").filter(|_| decorated) else {
            decorated = false;
            continue;
        };
        decorated = false;
        let class_indent = indentation(lines[i - 1]);
        let name: String = header.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let bases = header.find('(').map(|at| balanced(&header[at + 1..])).unwrap_or_default();
        let bases: Vec<String> = identifiers(bases).filter(|b| !b.contains('=')).map(str::to_string).collect();
        let mut fields = Vec::new();
        let mut body_indent = None;
        let mut depth = 0i32;
        while i < lines.len() {
            let raw = lines[i];
            if raw.trim().is_empty() {
                i += 1;
                continue;
            }
            let indent = indentation(raw);
            if depth == 0 && indent <= class_indent {
                break;
            }
            let body = *body_indent.get_or_insert(indent);
            if depth == 0 && indent == body {
                if let Some(field) = annotated_name(raw.trim()) {
                    fields.push(field.to_string());
                }
            }
            for c in raw.chars() {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    _ => {}
                }
            }
            depth = depth.max(0);
            i += 1;
        }
        if !name.is_empty() {
            out.insert(name, (bases, fields));
        }
    }
}

/// `name: type …` → `name` (not `def`, `class` or a keyword's `else:`).
fn annotated_name(line: &str) -> Option<&str> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim_end();
    let plain = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    let keyword =
        matches!(name, "else" | "try" | "finally" | "elif" | "if" | "for" | "while" | "with" | "def" | "class");
    (plain && !keyword && !rest.starts_with('=')).then_some(name)
}

/// The own argument classes of a set of scanned files (paths shown relative to `top`): the
/// dataclasses some parser call takes, with the fields of their bases defined there too.
pub fn combine(files: &[(PathBuf, Arc<PythonFile>)], top: &Path) -> Option<OwnArguments> {
    // A name may be defined by several scripts (each its own `ScriptArguments`): all count.
    type Class = (Vec<String>, Vec<String>);
    let mut defined: BTreeMap<&str, Vec<(&Path, &Class)>> = BTreeMap::new();
    for (path, file) in files {
        for (name, class) in &file.dataclasses {
            defined.entry(name.as_str()).or_default().push((path.as_path(), class));
        }
    }
    let parsed: BTreeSet<&str> = files.iter().flat_map(|(_, file)| file.parsed.iter().map(String::as_str)).collect();
    let mut own = OwnArguments::default();
    for name in parsed {
        for (path, class) in defined.get(name).into_iter().flatten() {
            let shown = path.strip_prefix(top).unwrap_or(path);
            let described = format!("`{name}` ({})", shown.display());
            own.classes.push(described.clone());
            // This definition's fields, then those of its bases defined here.
            let mut seen = HashSet::from([name]);
            let mut pending: Vec<&Class> = vec![*class];
            while let Some((bases, fields)) = pending.pop() {
                for field in fields {
                    own.fields.entry(field.clone()).or_insert_with(|| described.clone());
                }
                for base in bases.iter().filter(|base| seen.insert(base.as_str())) {
                    pending.extend(defined.get(base.as_str()).into_iter().flatten().map(|(_, class)| *class));
                }
            }
        }
    }
    (!own.classes.is_empty()).then_some(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"
from dataclasses import dataclass, field
from trl import TrlParser, ModelConfig, SFTConfig

@dataclass
class ScriptArguments:
    """Arguments.

    Note: not a field.
    """
    dataset_id_or_path: str
    dataset_splits: str = "train"  # comment: not a field
    tokenizer_name_or_path: str = field(
        default=None,
        metadata={"help": "not: a field"},
    )

    def helper(self):
        local: int = 1
        return local

@dataclass
class Extended(ScriptArguments):
    spectrum_config_path: Optional[str] = None

class NotADataclass:
    plain: int = 1

def main():
    parser = TrlParser((ModelConfig, Extended, trl.SFTConfig))
"#;

    #[test]
    fn parser_classes_and_dataclass_fields_are_read_from_the_text() {
        let file = scan(SCRIPT);
        assert_eq!(file.parsed, ["Extended", "ModelConfig", "SFTConfig"].map(String::from).into());
        let (bases, fields) = &file.dataclasses["ScriptArguments"];
        assert!(bases.is_empty());
        assert_eq!(fields, &["dataset_id_or_path", "dataset_splits", "tokenizer_name_or_path"]);
        assert_eq!(file.dataclasses["Extended"].0, ["ScriptArguments"]);
        assert!(!file.dataclasses.contains_key("NotADataclass"));
    }

    #[test]
    fn own_classes_take_the_fields_of_their_bases_and_skip_framework_classes() {
        let files = vec![(PathBuf::from("/repo/scripts/run.py"), Arc::new(scan(SCRIPT)))];
        let own = combine(&files, Path::new("/repo")).unwrap();
        assert_eq!(own.classes, ["`Extended` (scripts/run.py)"]);
        assert!(own.defines("dataset_id_or_path") && own.defines("spectrum_config_path"));
        assert!(!own.defines("plain") && !own.defines("local"));
        let framework_only =
            scan("from trl import TrlParser, ScriptArguments\nparser = TrlParser((ScriptArguments,))\n");
        assert_eq!(combine(&[(PathBuf::from("/r/a.py"), Arc::new(framework_only))], Path::new("/r")), None);
    }

    #[test]
    fn hf_argument_parser_with_a_list_and_keyword() {
        let text = "@dataclasses.dataclass(frozen=True)\nclass Args:\n    data_path: str = None\n\np = HfArgumentParser(dataclass_types=[Args, TrainingArguments])\n";
        let own = combine(&[(PathBuf::from("/r/train.py"), Arc::new(scan(text)))], Path::new("/r")).unwrap();
        assert_eq!(own.owner("data_path"), Some("`Args` (train.py)"));
    }
}
