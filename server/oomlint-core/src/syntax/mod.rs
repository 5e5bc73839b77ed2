//! One spanned document tree for every config language.
//!
//! Each config adapter (YAML, JSON, TOML, env/shell) turns bytes into the same [`Document`]:
//! mappings, sequences and scalars with byte spans for keys and values, the raw
//! scalar text, the comments, and the problems found while parsing. Nothing above this
//! layer knows which parser was used. Python scripts and notebooks are programs, not
//! trees: their adapters read calls, bindings, branches and environment settings
//! ([`python::Program`]); `format::python` lays the calls a framework reads out as a tree.

mod chars;
pub mod env;
pub mod json;
pub mod locate;
pub mod notebook;
pub mod python;
pub(crate) mod shell;
pub mod toml;
pub mod yaml;

use crate::span::Span;

/// Nesting deeper than this is reported and not built (keeps drops and walks shallow).
pub(crate) const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Yaml,
    Json,
    Toml,
    /// `KEY=value` files (`.env`).
    Env,
    /// Shell scripts: only variable assignments are read.
    Shell,
    /// Python scripts: calls and their arguments, bindings, environment settings.
    Python,
    /// Jupyter notebooks: the code cells read in order as one Python program.
    Notebook,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub language: Language,
    pub root: Option<Node>,
    pub comments: Vec<Comment>,
    pub problems: Vec<SyntaxProblem>,
    /// A script's or notebook's program, read once per parse: everything above this layer
    /// (format detection, the plan, rules, schema findings, hovers) reads it from here.
    pub program: Option<Box<python::Program>>,
}

impl Document {
    /// The top-level mapping, if the root is one.
    pub(crate) fn root_mapping(&self) -> Option<&Mapping> {
        self.root.as_ref().and_then(Node::as_mapping)
    }

    /// Whether parsing stopped early (the tree may be partial).
    pub fn is_incomplete(&self) -> bool {
        self.problems.iter().any(|p| p.kind == ProblemKind::Syntax)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    /// Covers the `#` and the text up to the end of the line.
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProblemKind {
    /// The text is not valid in its language; parsing stopped here.
    Syntax,
    /// A mapping key appears twice; the last value wins (PyYAML, `json.load`).
    DuplicateKey { first: Span },
}

#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxProblem {
    pub(crate) kind: ProblemKind,
    pub(crate) message: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Mapping(Mapping),
    Sequence(Vec<Node>),
    Scalar(Scalar),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mapping {
    pub entries: Vec<Entry>,
}

impl Mapping {
    /// The entry for `key`; with duplicates, the last one (what the frameworks read).
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.key == key)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// Follows a dotted path of mapping keys (`train.micro_batch_size`).
    pub(crate) fn entry_path(&self, path: &str) -> Option<&Entry> {
        if !path.contains('.') {
            return self.entry(path);
        }
        let mut mapping = self;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            let entry = mapping.entry(part)?;
            if parts.peek().is_none() {
                return Some(entry);
            }
            mapping = entry.value.as_mapping()?;
        }
        None
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.entry(key).is_some()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    /// YAML `|` or `>` block scalars.
    Block,
}

/// The type a scalar resolves to, following the reader the frameworks use
/// (PyYAML's YAML 1.1 resolver for YAML, the JSON/TOML grammars otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarKind {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside the 64-bit range.
    BigInt,
    Float(f64),
    Str,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The value after unquoting and unescaping.
    pub text: String,
    pub(crate) style: ScalarStyle,
    pub kind: ScalarKind,
}

impl Scalar {
    /// Whether the value is a placeholder a template engine or the shell fills in before the
    /// framework reads the file (`${VAR}`, `{{ var }}`, `$VAR`): its real value is unknown.
    pub(crate) fn is_template(&self) -> bool {
        self.kind == ScalarKind::Str && is_template(&self.text)
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self.kind {
            ScalarKind::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self.kind {
            ScalarKind::Int(i) => Some(i),
            ScalarKind::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(f as i64),
            _ => None,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self.kind {
            ScalarKind::Int(i) => Some(i as f64),
            ScalarKind::Float(f) => Some(f),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        self.kind == ScalarKind::Null
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self.kind {
            ScalarKind::Str => Some(&self.text),
            _ => None,
        }
    }
}

impl Node {
    pub(crate) fn as_mapping(&self) -> Option<&Mapping> {
        match &self.value {
            Value::Mapping(m) => Some(m),
            _ => None,
        }
    }

    pub(crate) fn as_sequence(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Sequence(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }
}

/// A value a fix writes into a file (a setting's new value), typed so that each language
/// spells it its own way: a YAML `true` is a Python `True`, a YAML `null` a Python `None`,
/// a plain YAML string a quoted one in JSON, TOML and Python.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    /// An integer (wide enough for every `i64` and `u64`).
    Int(i128),
    /// A float in its shortest form (`0.8`).
    Float(f64),
    /// A float with this many decimals (`0.60`).
    Fixed(f64, usize),
    Str(String),
}

impl From<u64> for Literal {
    fn from(n: u64) -> Self {
        Literal::Int(n.into())
    }
}

/// The language-neutral reading of a literal, as a message or a title shows it: numbers
/// as written, `true`, `false`, `null`, a string's text.
impl std::fmt::Display for Literal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Float(x) => write!(f, "{x}"),
            Literal::Fixed(x, places) => write!(f, "{x:.places$}"),
            Literal::Str(s) => f.write_str(s),
        }
    }
}

impl serde::Serialize for Literal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// How `language` writes `literal` in place of a value; None where it cannot (TOML and
/// environment files have no null).
pub(crate) fn spell(literal: &Literal, language: Language) -> Option<String> {
    match language {
        Language::Yaml => Some(yaml::spell(literal)),
        Language::Json => Some(json::spell(literal)),
        Language::Toml => toml::spell(literal),
        Language::Env | Language::Shell => env::spell(literal),
        Language::Python => Some(python::spell(literal)),
        Language::Notebook => Some(notebook::encode(&python::spell(literal))),
    }
}

/// Parses `text` in `language`.
pub fn parse(text: &str, language: Language) -> Document {
    match language {
        Language::Yaml => yaml::parse(text),
        Language::Json => json::parse(text),
        Language::Toml => toml::parse(text),
        Language::Env => env::parse(text, env::Dialect::Env),
        Language::Shell => env::parse(text, env::Dialect::Shell),
        Language::Python => python::parse(text),
        Language::Notebook => notebook::parse(text),
    }
}

/// `#` at a line start or after a blank begins a comment, unless it lies in a scalar.
pub(crate) fn hash_comments(text: &str, scalar_spans: &[Span]) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut comments = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find('#') {
        let at = i + found;
        let starts_comment = at == 0 || matches!(bytes[at - 1], b' ' | b'\t' | b'\n' | b'\r');
        let end = bytes[at..].iter().position(|&b| matches!(b, b'\n' | b'\r')).map_or(text.len(), |n| at + n);
        if starts_comment && !inside_any(scalar_spans, at) {
            comments.push(Comment { span: Span::new(at, end) });
            i = end;
        } else {
            i = at + 1;
        }
        if i >= bytes.len() {
            break;
        }
    }
    comments
}

fn inside_any(spans: &[Span], offset: usize) -> bool {
    // Spans come in document order but nested flow scalars can share a start;
    // check the span starting at or before `offset` and its predecessors on the same start.
    let idx = spans.partition_point(|s| s.start <= offset);
    spans[..idx].iter().rev().take(4).any(|s| s.contains(offset))
}

/// Spans of string scalars in `root`, in document order (for [`hash_comments`]).
pub(crate) fn string_spans(root: &Option<Node>) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut stack: Vec<&Node> = root.iter().collect();
    while let Some(node) = stack.pop() {
        match &node.value {
            Value::Mapping(m) => stack.extend(m.entries.iter().rev().map(|e| &e.value)),
            Value::Sequence(items) => stack.extend(items.iter().rev()),
            Value::Scalar(s) if s.kind == ScalarKind::Str => spans.push(node.span),
            Value::Scalar(_) => {}
        }
    }
    spans.sort_by_key(|s| s.start);
    spans
}

/// The offset where JSON bracket nesting (`[`/`{` outside strings) first passes
/// `limit`. The recursive-descent JSON parser is guarded with it.
pub(crate) fn json_depth_exceeds(text: &str, limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Whether `text` holds a placeholder: `${VAR}` (shell, envsubst, Hydra/OmegaConf
/// interpolation), `{{ var }}` (Jinja, Helm) or a whole `$VAR`.
pub(crate) fn is_template(text: &str) -> bool {
    // Most values hold neither `$` nor `{`: one byte scan answers for them.
    if !text.bytes().any(|b| b == b'$' || b == b'{') {
        return false;
    }
    let braced = |open: &str, close: &str| text.find(open).is_some_and(|at| text[at + open.len()..].contains(close));
    let whole_variable = text.strip_prefix('$').is_some_and(|name| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    braced("${", "}") || braced("{{", "}}") || whole_variable
}
