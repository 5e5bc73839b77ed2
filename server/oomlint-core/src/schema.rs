//! The JSON Schemas of `schema/`, embedded in the binary: validation of a spanned
//! document, and property lookups for hover and completion.
//!
//! A document is turned into a `serde_json::Value` with a side table from JSON pointer to
//! the key's and the value's span, validated with the `jsonschema` crate (offline: every
//! schema is registered under its `$id`, nothing is ever fetched), and each error is mapped
//! back to a span: an unexpected property becomes an [`UnknownKey`] at the key, a type,
//! enum or range error an [`InvalidValue`] at the value. Keys marked `x-removed` or
//! `x-deprecated` in the schema become `RemovedKey`s. Schemas are parsed and compiled
//! once per process, on first use; spans and suggestions are looked up only for findings.

use crate::format::Format;
use crate::similarity::{jaro_winkler_at_least, Word};
use crate::span::Span;
use crate::syntax::{Document, Mapping, Node, ScalarKind, ScalarStyle, Value as Tree};
use crate::versions::Version;
use crate::{HashMap, HashSet};
use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};

pub mod docs;
pub mod flags;
pub mod keywords;
pub(crate) mod script;

/// Used by `build.rs`; here only to test what it wrote.
#[cfg(test)]
mod lean;

/// Every file under `schema/`, by name (a format name; a test checks the list is complete).
const SCHEMA_COUNT: usize = 14;

/// `(name, schema, the schema without documentation keywords)`; see [`lean`].
macro_rules! embedded {
    ($($name:literal),* $(,)?) => {
        [$((
            $name,
            include_str!(concat!("../../../schema/", $name, ".json")),
            include_str!(concat!(env!("OUT_DIR"), "/schema-lean/", $name, ".json")),
        )),*]
    };
}

type Source = (&'static str, &'static str, &'static str);

static SOURCES: [Source; SCHEMA_COUNT] = embedded![
    "accelerate",
    "axolotl",
    "deepspeed",
    "litgpt-adapter",
    "litgpt-adapter-v2",
    "litgpt-full",
    "litgpt-lora",
    "litgpt-pretrain",
    "llamafactory",
    "oomlint",
    "transformers",
    "trl-dpo",
    "trl-grpo",
    "trl-sft",
];

/// A compiled schema.
pub struct Schema {
    /// The schema without its documentation keywords: what validation and the rules read.
    pub root: &'static Value,
    validator: jsonschema::Validator,
    /// Every property name marked `x-removed` or `x-deprecated` somewhere in the schema.
    marked: HashSet<&'static str>,
}

type Parsed = [OnceLock<Option<Value>>; SCHEMA_COUNT];

/// Where [`SOURCES`] lists the schema called `name`.
fn index_of(name: &str) -> Option<usize> {
    SOURCES.iter().position(|(n, ..)| *n == name)
}

/// One text of [`SOURCES`]`[index]` (picked by `text`), parsed on first use (None when it
/// is not valid JSON; a test catches it).
fn parse_once(cells: &'static Parsed, index: usize, text: fn(&Source) -> &'static str) -> Option<&'static Value> {
    let source = SOURCES.get(index)?;
    cells.get(index)?.get_or_init(|| serde_json::from_str(text(source)).ok()).as_ref()
}

/// The schema at `index` of [`SOURCES`] without documentation keywords.
fn parsed(index: usize) -> Option<&'static Value> {
    static LEAN: Parsed = [const { OnceLock::new() }; SCHEMA_COUNT];
    parse_once(&LEAN, index, |(_, _, lean)| lean)
}

/// The full schema of `format`, with titles, descriptions, defaults and sources: for hover
/// and completion.
fn documented(format: Format) -> Option<&'static Value> {
    static FULL: Parsed = [const { OnceLock::new() }; SCHEMA_COUNT];
    parse_once(&FULL, index_of(format.name())?, |(_, full, _)| full)
}

/// All schemas registered by `$id`, so a `$ref` between them resolves without a fetch.
fn registry() -> Option<&'static jsonschema::Registry<'static>> {
    static REGISTRY: OnceLock<Option<jsonschema::Registry<'static>>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let resources = (0..SCHEMA_COUNT)
                .filter_map(parsed)
                .filter_map(|schema| Some((schema.get("$id")?.as_str()?.to_string(), schema)));
            jsonschema::Registry::new().extend(resources).ok()?.prepare().ok()
        })
        .as_ref()
}

/// Compiles a schema whose source is `text`. Only a `$ref` reaches into another schema, so
/// only a schema with one waits for all of them to be parsed into the registry.
fn compile(schema: &Value, text: &str) -> Option<jsonschema::Validator> {
    let options = jsonschema::options().with_draft(jsonschema::Draft::Draft202012).offline();
    let refers = text.contains("\"$ref\"") || text.contains("\"$dynamicRef\"");
    match refers.then(registry).flatten() {
        Some(registry) => options.with_registry(registry).build(schema).ok(),
        None => options.build(schema).ok(),
    }
}

/// The compiled schema called `name` (`trl-grpo`, `oomlint`), compiled on first use.
pub fn get(name: &str) -> Option<&'static Schema> {
    static COMPILED: [OnceLock<Option<Schema>>; SCHEMA_COUNT] = [const { OnceLock::new() }; SCHEMA_COUNT];
    let index = index_of(name)?;
    COMPILED
        .get(index)?
        .get_or_init(|| {
            let (_, _, text) = SOURCES.get(index)?;
            let root = parsed(index)?;
            let mut marked = HashSet::default();
            collect_marked(root, &mut marked);
            Some(Schema { validator: compile(root, text)?, root, marked })
        })
        .as_ref()
}

/// The top-level keys a format's schema knows (its properties, through `anyOf`/`allOf`
/// alternatives), whether or not it allows others: the evidence format recognition weighs.
pub(crate) fn top_level_keys(format: Format) -> Option<&'static HashSet<&'static str>> {
    static KEYS: [OnceLock<Option<HashSet<&'static str>>>; SCHEMA_COUNT] = [const { OnceLock::new() }; SCHEMA_COUNT];
    let index = index_of(format.name())?;
    KEYS.get(index)?
        .get_or_init(|| Some(property_schemas(parsed(index)?).into_iter().map(|(name, _)| name).collect()))
        .as_ref()
}

/// The schema of a format, if it has one.
fn for_format(format: Format) -> Option<&'static Schema> {
    get(format.name())
}

/// Documentation of one property, for hover and completion.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyDoc {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub default: Option<Value>,
    /// The values an enum allows (across `anyOf` alternatives).
    pub enum_values: Vec<Value>,
    /// The framework source file the property comes from (`x-source`).
    pub source: Option<String>,
    pub deprecated: bool,
}

impl PropertyDoc {
    fn new(name: &str, schema: &Value) -> PropertyDoc {
        let text = |key: &str| schema.get(key).and_then(Value::as_str).map(str::to_string);
        PropertyDoc {
            name: name.to_string(),
            title: text("title"),
            description: text("description"),
            default: schema.get("default").cloned(),
            enum_values: enum_values(schema),
            source: text("x-source"),
            deprecated: schema.get("deprecated").and_then(Value::as_bool).unwrap_or(false),
        }
    }
}

/// The sub-schema of an object schema's property `key` (looking into `anyOf` alternatives).
fn property<'s>(schema: &'s Value, key: &str) -> Option<&'s Value> {
    if let Some(found) = schema.get("properties").and_then(|p| p.get(key)) {
        return Some(found);
    }
    alternatives(schema).find_map(|alt| property(alt, key))
}

fn alternatives(schema: &Value) -> impl Iterator<Item = &Value> {
    ["anyOf", "oneOf", "allOf"].into_iter().filter_map(|k| schema.get(k).and_then(Value::as_array)).flatten()
}

/// The sub-schema at a path of keys (array items are entered with any key, e.g. `0`).
fn at_path<'s>(root: &'s Value, path: &[&str]) -> Option<&'s Value> {
    let mut schema = root;
    for key in path {
        schema = property(schema, key).or_else(|| items(schema))?;
    }
    Some(schema)
}

fn items(schema: &Value) -> Option<&Value> {
    schema.get("items").or_else(|| alternatives(schema).find_map(items))
}

/// The documentation of the property at `path` (`["train", "micro_batch_size"]`).
pub fn property_doc(format: Format, path: &[&str]) -> Option<PropertyDoc> {
    let root = documented(format)?;
    let (name, _) = path.split_last()?;
    Some(PropertyDoc::new(name, at_path(root, path)?))
}

/// Every property the object at `path` may have (the top level for an empty path).
pub fn properties_at(format: Format, path: &[&str]) -> Vec<PropertyDoc> {
    let Some(schema) = documented(format).and_then(|root| at_path(root, path)) else {
        return Vec::new();
    };
    property_schemas(schema).into_iter().map(|(name, sub)| PropertyDoc::new(name, sub)).collect()
}

/// Every property of an object schema (looking into `anyOf` alternatives) with its
/// sub-schema; a name's first occurrence wins, as in [`property`].
fn property_schemas(schema: &Value) -> Vec<(&str, &Value)> {
    let mut out = Vec::new();
    collect_property_schemas(schema, &mut out);
    out
}

fn collect_property_schemas<'s>(schema: &'s Value, out: &mut Vec<(&'s str, &'s Value)>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let known = out.len();
        for (name, sub) in props {
            if !out[..known].iter().any(|(seen, _)| seen == name) {
                out.push((name, sub));
            }
        }
    }
    for alt in alternatives(schema) {
        collect_property_schemas(alt, out);
    }
}

fn enum_values(schema: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = schema.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
    out.extend(schema.get("const").cloned());
    for alt in alternatives(schema) {
        out.extend(enum_values(alt));
    }
    out
}

/// Where a JSON value came from in the document.
#[derive(Clone, Copy)]
struct Located<'n> {
    /// The key's span, for values of mapping entries.
    key: Option<Span>,
    node: &'n Node,
}

impl Located<'_> {
    /// Whether the value was written as a quoted string.
    fn quoted(&self) -> bool {
        self.node.as_scalar().is_some_and(|s| matches!(s.style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted))
    }
}

/// `node` as JSON. Duplicate keys: the last value wins, as in PyYAML and `json.load`.
fn to_json(node: &Node) -> Value {
    match &node.value {
        Tree::Mapping(mapping) => {
            let mut object = Map::new();
            for entry in &mapping.entries {
                object.insert(entry.key.clone(), to_json(&entry.value));
            }
            Value::Object(object)
        }
        Tree::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Tree::Scalar(scalar) => match scalar.kind {
            ScalarKind::Null => Value::Null,
            ScalarKind::Bool(b) => Value::Bool(b),
            ScalarKind::Int(i) => Value::from(i),
            ScalarKind::BigInt => scalar.text.replace('_', "").parse::<f64>().map_or(Value::Null, number),
            ScalarKind::Float(f) => number(f),
            ScalarKind::Str => Value::String(scalar.text.clone()),
        },
    }
}

/// Where the value at a JSON pointer into `root`'s [`to_json`] was written (the last of
/// duplicate keys, whose value the JSON holds).
fn locate<'n>(root: &'n Node, pointer: &str) -> Option<Located<'n>> {
    let mut node = root;
    let mut key = None;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        match &node.value {
            Tree::Mapping(mapping) => {
                let entry = mapping.entries.iter().rev().find(|e| e.key == token)?;
                key = Some(entry.key_span);
                node = &entry.value;
            }
            Tree::Sequence(items) => {
                node = items.get(token.parse::<usize>().ok()?)?;
                key = None;
            }
            Tree::Scalar(_) => return None,
        }
    }
    Some(Located { key, node })
}

/// A key as a JSON pointer token.
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// JSON has no infinities or NaN; they stand in as the largest finite numbers.
fn number(f: f64) -> Value {
    let finite = if f.is_nan() { 0.0 } else { f.clamp(f64::MIN, f64::MAX) };
    serde_json::Number::from_f64(finite).map_or(Value::Null, Value::Number)
}

/// A key the schema does not allow.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownKey {
    pub key: String,
    pub(crate) span: Span,
    /// The enclosing mapping's path (`train`), empty at the top level.
    pub(crate) parent: String,
    /// The schema of the enclosing mapping, which the hints below search.
    enclosing: Option<&'static Value>,
}

impl UnknownKey {
    /// The closest allowed key, when one is close enough (searched on each call).
    pub fn suggestion(&self) -> Option<String> {
        closest(&self.key, &allowed_candidates(self.enclosing?))
    }

    /// A nested mapping where this exact key is valid (`micro_batch_size` → `train`).
    pub(crate) fn belongs_under(&self) -> Option<String> {
        nested_owner(self.enclosing?, &self.key)
    }
}

/// A value of the wrong type, outside an enum or a range, or a missing required key.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidValue {
    pub(crate) span: Span,
    pub(crate) message: String,
    /// The closest allowed value of an enum, when one is close enough.
    pub(crate) suggestion: Option<String>,
    /// Why the framework would not reject the value at start-up, when it would not: the
    /// format's reader passes values through unchecked and no start-up code checks this key
    /// (see [`passed_unchecked`]).
    pub(crate) unchecked: Option<String>,
}

/// A key the framework removed or deprecated (`x-removed` / `x-deprecated`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RemovedKey {
    pub(crate) key: String,
    pub(crate) key_span: Span,
    pub(crate) value_span: Span,
    /// The framework and release that removed it (`("transformers", 4.46)`).
    pub(crate) since: Option<(String, Version)>,
    pub(crate) replacement: Option<String>,
    pub(crate) message: String,
    /// Deprecated only: still accepted by the newest release.
    pub(crate) deprecated_only: bool,
    /// The replacement key is already set in the same mapping.
    pub(crate) replacement_present: bool,
    /// The current value is valid for the replacement key.
    pub(crate) value_fits_replacement: bool,
    /// A keyword argument of a trainer call (`SFTTrainer(max_seq_length=…)`), not a config key.
    pub(crate) trainer_argument: bool,
}

/// Every schema finding of one document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    pub unknown_keys: Vec<UnknownKey>,
    pub invalid_values: Vec<InvalidValue>,
    pub(crate) removed_keys: Vec<RemovedKey>,
}

/// Validates `doc` (of `format`) against its schema. For `pyproject.toml`, only
/// `[tool.oomlint]` is validated.
pub fn check(format: Format, doc: &Document) -> Findings {
    let mut findings = Findings::default();
    let (Some(schema), Some(root)) = (for_format(format), doc.root.as_ref()) else {
        return findings;
    };
    // `pyproject.toml`: only `[tool.oomlint]` is oomlint's.
    let tool_table = root.as_mapping().and_then(|m| m.entry_path("tool.oomlint")).filter(|_| format == Format::Oomlint);
    let node = tool_table.map_or(root, |entry| &entry.value);
    let value = to_json(node);
    let reader = Reader::of(format, doc.language, node);
    let coerces = coerces_strings(format) && reader != Some(Reader::Constructor);
    // Most files are valid, which `is_valid` finds out faster than an empty error iterator.
    let errors = (!schema.validator.is_valid(&value)).then(|| schema.validator.iter_errors(&value));
    for error in errors.into_iter().flatten() {
        let pointer = error.instance_path().as_str();
        let Some(at) = locate(node, pointer) else {
            continue;
        };
        let sub = parent_schema(schema.root, error.schema_path().as_str());
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                for key in unexpected {
                    let child = format!("{pointer}/{}", pointer_token(key));
                    let span = locate(node, &child).and_then(|l| l.key).unwrap_or(at.node.span);
                    findings.unknown_keys.push(UnknownKey {
                        key: key.clone(),
                        span,
                        parent: display_path(pointer),
                        enclosing: sub,
                    });
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let span = at.key.unwrap_or(Span::empty(at.node.span.start));
                let place = if pointer.is_empty() { String::new() } else { format!(" in `{}`", display_path(pointer)) };
                findings.invalid_values.push(InvalidValue {
                    span,
                    message: format!("missing required key `{name}`{place}"),
                    suggestion: None,
                    unchecked: None,
                });
            }
            _ => {
                if coerces && at.quoted() && sub.is_some_and(|s| accepts_coerced(s, error.instance())) {
                    continue;
                }
                // A placeholder's value is filled in before the framework reads the file.
                if at.node.as_scalar().is_some_and(|s| s.is_template()) {
                    continue;
                }
                let mut finding = invalid_value(pointer, at, sub, error.instance(), &error);
                finding.unchecked =
                    reader.and_then(|reader| passed_unchecked(reader, schema.root, pointer, error.instance()));
                if !findings.invalid_values.iter().any(|f| f.span == finding.span) {
                    findings.invalid_values.push(finding);
                }
            }
        }
    }
    if let Some(mapping) = node.as_mapping() {
        removed_keys(schema, schema.root, mapping, &mut findings.removed_keys);
    }
    findings
}

/// Formats whose loader converts quoted numbers and booleans: TRL's parser sets YAML
/// values as argparse defaults, which argparse converts with the field's type, and
/// Axolotl's pydantic model validates in lax mode. `"1e-5"` is a valid learning rate there.
fn coerces_strings(format: Format) -> bool {
    matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo | Format::Axolotl)
}

/// Whether a quoted string, read as a plain YAML scalar, satisfies `schema`.
fn accepts_coerced(schema: &'static Value, instance: &Value) -> bool {
    let Some(text) = instance.as_str() else {
        return false;
    };
    let coerced = match crate::syntax::yaml::resolve_plain(text) {
        ScalarKind::Int(i) => Value::from(i),
        ScalarKind::Float(f) => number(f),
        ScalarKind::Bool(b) => Value::Bool(b),
        _ => return false,
    };
    fragment_validator(schema).is_some_and(|v| v.is_valid(&coerced))
}

/// What is derived from a part of an embedded schema, by the part's address (an embedded
/// schema never moves or drops), so that it is derived once per process.
type PerPart<T> = LazyLock<Mutex<HashMap<usize, T>>>;

fn once_per_part<T: Clone>(cache: &PerPart<T>, part: &'static Value, derive: impl FnOnce() -> T) -> T {
    let address = std::ptr::from_ref(part).addr();
    if let Some(derived) = cache.lock().unwrap_or_else(PoisonError::into_inner).get(&address) {
        return derived.clone();
    }
    let derived = derive();
    cache.lock().unwrap_or_else(PoisonError::into_inner).entry(address).or_insert(derived).clone()
}

/// A part of an embedded schema compiled on its own.
fn fragment_validator(schema: &'static Value) -> Option<Arc<jsonschema::Validator>> {
    static FRAGMENTS: PerPart<Option<Arc<jsonschema::Validator>>> = LazyLock::new(Mutex::default);
    once_per_part(&FRAGMENTS, schema, || {
        let options = jsonschema::options().with_draft(jsonschema::Draft::Draft202012).offline();
        options.build(schema).ok().map(Arc::new)
    })
}

/// The schema object that holds the failing keyword (`/properties/x/type` → `/properties/x`).
fn parent_schema<'s>(root: &'s Value, schema_path: &str) -> Option<&'s Value> {
    let parent = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
    root.pointer(parent)
}

/// `/train/micro_batch_size` → `train.micro_batch_size`.
fn display_path(pointer: &str) -> String {
    pointer.split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect::<Vec<_>>().join(".")
}

/// The properties of an object schema that are not deprecated.
fn allowed_keys(schema: &Value) -> impl Iterator<Item = &str> {
    let deprecated = |sub: &Value| sub.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
    property_schemas(schema).into_iter().filter(move |(_, sub)| !deprecated(sub)).map(|(name, _)| name)
}

/// The property of `schema` whose own properties include `key` (one level down).
fn nested_owner(schema: &Value, key: &str) -> Option<String> {
    property_schemas(schema)
        .into_iter()
        .find(|(_, child)| property(child, key).is_some_and(|p| p.get("x-removed").is_none()))
        .map(|(name, _)| name.to_string())
}

/// A name that [`closest`] may suggest, with its lowercased form.
type Candidate<'s> = (&'s str, Word);

fn candidates<'s>(names: impl IntoIterator<Item = &'s str>) -> Vec<Candidate<'s>> {
    names.into_iter().map(|name| (name, Word::new(&name.to_lowercase()))).collect()
}

/// The allowed keys of an object schema as candidates.
fn allowed_candidates(schema: &'static Value) -> Arc<[Candidate<'static>]> {
    static PREPARED: PerPart<Arc<[Candidate<'static>]>> = LazyLock::new(Mutex::default);
    once_per_part(&PREPARED, schema, || candidates(allowed_keys(schema)).into())
}

/// The candidate closest to `word` (case-insensitive match or Jaro-Winkler ≥ 0.85).
fn closest(word: &str, candidates: &[Candidate]) -> Option<String> {
    const THRESHOLD: f64 = 0.85;
    let lower = Word::new(&word.to_lowercase());
    let mut best: Option<(f64, &str)> = None;
    for (candidate, candidate_lower) in candidates {
        let score = if *candidate_lower == lower {
            Some(2.0)
        } else {
            jaro_winkler_at_least(&lower, candidate_lower, THRESHOLD)
        };
        let Some(score) = score else { continue };
        if score >= THRESHOLD && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c.to_string())
}

/// `fallback` (the validator's message) is used when the schema cannot be described.
fn invalid_value(
    pointer: &str,
    at: Located,
    sub: Option<&Value>,
    instance: &Value,
    fallback: &dyn std::fmt::Display,
) -> InvalidValue {
    let name = display_path(pointer);
    let subject = if name.is_empty() { "the document".to_string() } else { format!("`{name}`") };
    let big_int = at.node.as_scalar().filter(|s| s.kind == ScalarKind::BigInt);
    let found = match (instance, big_int) {
        // Beyond 64 bits the JSON holds a float (or null): show the integer as written.
        (_, Some(scalar)) => format!("`{}`", scalar.text),
        (Value::String(s), None) => format!("`{s}`"),
        (Value::Number(n), None) => format!("`{n}`"),
        (Value::Bool(b), None) => format!("`{b}`"),
        (Value::Null, None) => "null".to_string(),
        (Value::Array(_), None) => "a list".to_string(),
        (Value::Object(_), None) => "a mapping".to_string(),
    };
    let message = match sub.map(describe).filter(|d| !d.is_empty()) {
        Some(expected) => format!("{subject} must be {expected}, not {found}"),
        None => format!("{subject}: {fallback}"),
    };
    let suggestion = match (sub, instance) {
        (Some(schema), Value::String(s)) => {
            closest(s, &candidates(enum_values(schema).iter().filter_map(Value::as_str)))
        }
        _ => None,
    };
    InvalidValue { span: at.node.span, message, suggestion, unchecked: None }
}

/// How a TRL or transformers config reaches its config class; none of these readers checks
/// a value's type (transformers `hf_argparser.py`, TRL `trl/scripts/utils.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    /// `TrlParser` (the `trl` CLI and scripts): the file's values become argparse defaults
    /// (`set_defaults_with_config`); argparse converts a string default with the field's
    /// type and exits when it cannot, and passes any other value as it is.
    TrlParser,
    /// `HfArgumentParser.parse_yaml_file` / `parse_json_file` / `parse_dict`: the dataclass
    /// is built from the values as they are.
    HfArgumentParser,
    /// Hydra's `instantiate` (`_target_: trl.SFTConfig`): the class gets the values as they are.
    Hydra,
    /// A script's own call (`SFTConfig(...)`): keyword arguments as they are.
    Constructor,
}

impl Reader {
    fn of(format: Format, language: crate::syntax::Language, root: &Node) -> Option<Reader> {
        use crate::syntax::Language;
        let trl = matches!(format, Format::TrlSft | Format::TrlDpo | Format::TrlGrpo);
        if !trl && format != Format::Transformers {
            return None;
        }
        let hydra = root.as_mapping().is_some_and(|m| m.entries.iter().any(|e| e.key == "_target_"));
        Some(match language {
            Language::Python | Language::Notebook => Reader::Constructor,
            _ if hydra => Reader::Hydra,
            _ if trl => Reader::TrlParser,
            _ => Reader::HfArgumentParser,
        })
    }

    fn says(self) -> &'static str {
        match self {
            Reader::TrlParser => {
                "TRL's parser sets the file's values as argparse defaults and converts only strings (TrlParser.set_defaults_with_config, trl/scripts/utils.py)"
            }
            Reader::HfArgumentParser => {
                "HfArgumentParser builds the config class from the file's values as they are (parse_yaml_file, parse_json_file, transformers/hf_argparser.py)"
            }
            Reader::Hydra => "Hydra's instantiate passes the values to the config class as they are",
            Reader::Constructor => "the config class takes its keyword arguments as they are",
        }
    }
}

/// Why a value the schema rejects still passes the start-up of a TRL or transformers run, or
/// None when the run fails: the key's start-up check (`x-checked`: an enum conversion in
/// `__post_init__`, an explicit `raise`), a number out of range (the number reaches code that
/// checks it), or a string TRL's argparse cannot convert to the field's type.
fn passed_unchecked(reader: Reader, root: &Value, pointer: &str, instance: &Value) -> Option<String> {
    let path: Vec<String> = pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    let property = at_path(root, &path)?;
    if property.get("x-checked").is_some() {
        return None;
    }
    let allowed = allowed_types(property);
    let kind = json_type(instance);
    let fits = allowed.contains(&kind) || (kind == "integer" && allowed.contains(&"number"));
    if fits && matches!(kind, "integer" | "number") {
        return None;
    }
    let converted =
        ["integer", "number", "boolean"].iter().any(|t| allowed.contains(t)) && !allowed.contains(&"string");
    if reader == Reader::TrlParser && kind == "string" && converted {
        return None;
    }
    let what = if fits { "no start-up code checks this value" } else { "nothing checks the type" };
    Some(format!(
        "passed through unchecked: {}, and {what}, so it fails, if at all, only where the run uses it",
        reader.says()
    ))
}

/// The JSON types a schema allows, through `type`, `enum`, `const` and alternatives.
fn allowed_types(schema: &Value) -> Vec<&'static str> {
    let mut types = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => types.extend(static_type(t)),
        Some(Value::Array(ts)) => types.extend(ts.iter().filter_map(Value::as_str).filter_map(static_type)),
        _ => {}
    }
    let listed = schema.get("enum").and_then(Value::as_array).into_iter().flatten().chain(schema.get("const"));
    types.extend(listed.map(json_type));
    for alternative in alternatives(schema) {
        types.extend(allowed_types(alternative));
    }
    types
}

fn static_type(name: &str) -> Option<&'static str> {
    ["null", "boolean", "integer", "number", "string", "array", "object"].into_iter().find(|t| *t == name)
}

/// A value's JSON Schema type (`integer` for a whole number).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A short English description of what a schema allows: "an integer >= 1 or `auto`".
fn describe(schema: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    let values = schema.get("enum").and_then(Value::as_array);
    if let Some(values) = values {
        let listed: Vec<String> = values.iter().map(show).collect();
        parts.push(format!("one of {}", listed.join(", ")));
    }
    if let Some(value) = schema.get("const") {
        parts.push(show(value));
    }
    if values.is_none() && schema.get("const").is_none() {
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let range = range(schema);
        for t in types {
            let noun = match t {
                "integer" => "an integer",
                "number" => "a number",
                "string" => "a string",
                "boolean" => "true or false",
                "null" => "null",
                "array" => "a list",
                "object" => "a mapping",
                other => other,
            };
            let ranged = matches!(t, "integer" | "number") && !range.is_empty();
            parts.push(if ranged { format!("{noun} {range}") } else { noun.to_string() });
        }
    }
    for alt in alternatives(schema) {
        let text = describe(alt);
        if !text.is_empty() && !parts.contains(&text) {
            parts.push(text);
        }
    }
    match parts.len() {
        0 | 1 => parts.join(""),
        n => format!("{} or {}", parts[..n - 1].join(", "), parts[n - 1]),
    }
}

fn range(schema: &Value) -> String {
    let bound = |k: &str| schema.get(k).map(|v| v.to_string());
    match (bound("minimum"), bound("maximum"), bound("exclusiveMinimum"), bound("exclusiveMaximum")) {
        (Some(lo), Some(hi), _, _) => format!("between {lo} and {hi}"),
        (Some(lo), None, _, Some(hi)) => format!(">= {lo} and < {hi}"),
        (None, None, Some(lo), Some(hi)) => format!("> {lo} and < {hi}"),
        (Some(lo), None, _, None) => format!(">= {lo}"),
        (None, Some(hi), Some(lo), _) => format!("> {lo} and <= {hi}"),
        (None, Some(hi), None, _) => format!("<= {hi}"),
        (None, None, Some(lo), None) => format!("> {lo}"),
        (None, None, None, Some(hi)) => format!("< {hi}"),
        (None, None, None, None) => String::new(),
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{s}`"),
        Value::Null => "null".to_string(),
        other => format!("`{other}`"),
    }
}

/// Walks the document with the schema, collecting keys marked removed or deprecated.
/// Whether a removed key's validator fires on `value`: `"when": "truthy"` (Axolotl's
/// `if data.get(key):`) needs a truthy value, `"when": "not-null"` (`is not None`) any
/// value but null; without `when`, being present is enough (a dataclass parser rejects the
/// key). A placeholder (`${VAR}`) may turn out either way: it does not fire a conditional one.
fn fires(mark: &Value, value: &Node) -> bool {
    let scalar = value.as_scalar();
    let template = scalar.is_some_and(|s| s.is_template());
    match mark.get("when").and_then(Value::as_str) {
        Some("truthy") => !template && truthy(value),
        Some("not-null") => !template && !scalar.is_some_and(|s| s.is_null()),
        _ => true,
    }
}

/// Python's truth value of a YAML value as the framework loads it.
fn truthy(value: &Node) -> bool {
    if let Some(mapping) = value.as_mapping() {
        return !mapping.entries.is_empty();
    }
    if let Some(items) = value.as_sequence() {
        return !items.is_empty();
    }
    match value.as_scalar().map(|s| &s.kind) {
        Some(ScalarKind::Null) | None => false,
        Some(ScalarKind::Bool(b)) => *b,
        Some(ScalarKind::Int(i)) => *i != 0,
        Some(ScalarKind::Float(f)) => *f != 0.0,
        Some(_) => value.as_scalar().is_some_and(|s| !s.text.is_empty()),
    }
}

fn removed_keys(whole: &Schema, schema: &'static Value, mapping: &Mapping, out: &mut Vec<RemovedKey>) {
    for entry in &mapping.entries {
        // Only a marked key is reported, and only a mapping has keys below.
        if !whole.marked.contains(entry.key.as_str()) && entry.value.as_mapping().is_none() {
            continue;
        }
        let Some(sub) = property(schema, &entry.key) else {
            continue;
        };
        let marked = sub.get("x-removed").map(|m| (m, false)).or_else(|| sub.get("x-deprecated").map(|m| (m, true)));
        if let Some((mark, deprecated_only)) = marked.filter(|(mark, _)| fires(mark, &entry.value)) {
            let replacement = mark.get("replacement").and_then(Value::as_str).map(str::to_string);
            let value_fits_replacement = replacement
                .as_deref()
                .and_then(|r| property(schema, r))
                .and_then(fragment_validator)
                .is_some_and(|v| v.is_valid(&to_json(&entry.value)));
            out.push(RemovedKey {
                key: entry.key.clone(),
                key_span: entry.key_span,
                value_span: entry.value.span,
                since: mark.get("in").and_then(Value::as_str).and_then(parse_since),
                replacement_present: replacement.as_deref().is_some_and(|r| mapping.contains(r)),
                replacement,
                message: mark.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
                deprecated_only,
                value_fits_replacement,
                trainer_argument: false,
            });
        }
        if let Some(child) = entry.value.as_mapping() {
            removed_keys(whole, sub, child, out);
        }
    }
}

/// Adds the names of properties marked removed or deprecated anywhere in `schema`.
fn collect_marked(schema: &'static Value, out: &mut HashSet<&'static str>) {
    match schema {
        Value::Object(object) => {
            let properties = object.get("properties").and_then(Value::as_object).into_iter().flatten();
            for (name, sub) in properties {
                if sub.get("x-removed").is_some() || sub.get("x-deprecated").is_some() {
                    out.insert(name);
                }
            }
            object.values().for_each(|value| collect_marked(value, out));
        }
        Value::Array(items) => items.iter().for_each(|item| collect_marked(item, out)),
        _ => {}
    }
}

/// `"transformers 4.46"` → `("transformers", 4.46)`.
fn parse_since(text: &str) -> Option<(String, Version)> {
    let (framework, version) = text.trim().rsplit_once(' ')?;
    Some((framework.trim().to_ascii_lowercase(), Version::parse(version)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{self, Language};

    fn check_yaml(format: Format, text: &str) -> Findings {
        check(format, &syntax::parse(text, Language::Yaml))
    }

    #[test]
    // Test-only I/O: lists schema/ to compare it with what is embedded.
    #[allow(clippy::disallowed_methods)]
    fn every_schema_file_is_embedded_and_compiles() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_suffix(".json").map(str::to_string))
            .collect();
        on_disk.sort();
        let names = || SOURCES.iter().map(|(name, ..)| *name);
        let mut embedded: Vec<String> = names().map(str::to_string).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk, "add new schema files to schema::SOURCES");
        for name in names() {
            let schema = get(name).unwrap_or_else(|| panic!("{name} does not compile"));
            let id = schema.root["$id"].as_str().unwrap();
            assert_eq!(id, format!("https://oomlint.dev/schema/{name}.json"));
        }
    }

    #[test]
    // Test-only I/O: walks fixtures/ and ../shared/corpus for documents to validate.
    #[allow(clippy::disallowed_methods)]
    fn validation_reads_the_schemas_without_documentation_and_gets_the_same_answers() {
        // The fixtures, and the published configs of `../shared/corpus` where it is present.
        let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut documents: Vec<(Format, Value)> = Vec::new();
        let mut dirs: Vec<_> =
            [root.join("fixtures"), root.join("../shared/corpus")].into_iter().filter(|d| d.is_dir()).collect();
        while let Some(dir) = dirs.pop() {
            for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else { continue };
                let Some(language) = crate::format::language_of(&path) else { continue };
                let document = crate::format::document(&text, language);
                let format = crate::format::detect(&path, &text, &document);
                if let (Some(_), Some(root)) = (for_format(format), document.root.as_ref()) {
                    documents.push((format, to_json(root)));
                }
            }
        }
        assert!(documents.len() > 50, "{} fixtures", documents.len());
        let errors = |validator: &jsonschema::Validator, value: &Value| -> Vec<String> {
            validator.iter_errors(value).map(|e| format!("{} {} {e}", e.instance_path(), e.schema_path())).collect()
        };
        let mut with_errors = 0;
        for (name, full, lean_text) in &SOURCES {
            let full: Value = serde_json::from_str(full).unwrap();
            let embedded: Value = serde_json::from_str(lean_text).unwrap();
            assert_eq!(embedded, lean::lean(&full), "{name}: the build script wrote another schema");
            let documented = jsonschema::options().with_draft(jsonschema::Draft::Draft202012).build(&full).unwrap();
            let validator = &get(name).unwrap().validator;
            for (_, value) in documents.iter().filter(|(format, _)| format.name() == *name) {
                let expected = errors(&documented, value);
                with_errors += usize::from(!expected.is_empty());
                assert_eq!(errors(validator, value), expected, "{name}");
            }
        }
        assert!(with_errors >= 5, "only {with_errors} documents with schema errors");
    }

    #[test]
    fn lean_drops_documentation_keywords_but_not_properties_of_that_name() {
        let schema = serde_json::json!({
            "title": "t", "description": "d", "x-source": "s",
            "properties": {
                "title": {"type": "string", "description": "a key called title", "default": "x"},
                "default": {"anyOf": [{"const": 1, "title": "one"}, {"items": {"examples": [1], "type": "integer"}}]},
                "old": {"deprecated": true, "x-removed": {"in": "4.46", "description": "kept: marks are data"}}
            },
            "enum": [{"description": "an enum value is data"}]
        });
        let expected = serde_json::json!({
            "properties": {
                "title": {"type": "string"},
                "default": {"anyOf": [{"const": 1}, {"items": {"type": "integer"}}]},
                "old": {"deprecated": true, "x-removed": {"in": "4.46", "description": "kept: marks are data"}}
            },
            "enum": [{"description": "an enum value is data"}]
        });
        assert_eq!(lean::lean(&schema), expected);
    }

    #[test]
    fn unknown_keys_point_at_the_key_with_a_suggestion() {
        let text = "checkpoint_dir: x\nprecison: bf16-true\ntrain:\n  micro_batch_sise: 4\n  zzz: 1\n";
        let found = check_yaml(Format::LitgptLora, text);
        let keys: Vec<(&str, &str, Option<String>)> = found
            .unknown_keys
            .iter()
            .map(|u| (u.key.as_str(), &text[u.span.start..u.span.end], u.suggestion()))
            .collect();
        assert!(keys.contains(&("precison", "precison", Some("precision".into()))), "{keys:?}");
        assert!(keys.contains(&("micro_batch_sise", "micro_batch_sise", Some("micro_batch_size".into()))), "{keys:?}");
        assert!(keys.contains(&("zzz", "zzz", None)), "{keys:?}");
        assert_eq!(found.unknown_keys.iter().find(|u| u.key == "zzz").unwrap().parent, "train");
        let misplaced = check_yaml(Format::LitgptLora, "checkpoint_dir: x\nmicro_batch_size: 4\n");
        assert_eq!(misplaced.unknown_keys[0].belongs_under().as_deref(), Some("train"));
    }

    #[test]
    fn removed_keys_fire_as_their_validators_do() {
        let keys = |text: &str| -> Vec<String> {
            check_yaml(Format::Axolotl, text).removed_keys.into_iter().map(|r| r.key).collect()
        };
        // Truthy validators (`if data.get(key):`).
        assert_eq!(
            keys("base_model: m\ns2_attention:\nmax_packed_sequence_len: 0\nflash_attn_rms_norm: false\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            keys("base_model: m\ns2_attention: true\nmax_packed_sequence_len: 2048\n"),
            ["s2_attention", "max_packed_sequence_len"]
        );
        assert_eq!(keys("base_model: m\ns2_attention: ${S2}\n"), Vec::<String>::new(), "a placeholder may be empty");
    }

    #[test]
    fn placeholders_are_values_not_known_yet() {
        let text = "base_model: m\nload_in_4bit: ${LOAD_IN_4BIT}\nmicro_batch_size: \"{{ mbs }}\"\nbf16: $BF16\nfp16: yes please\n";
        let findings = check_yaml(Format::Axolotl, text);
        let messages: Vec<&str> = findings.invalid_values.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].starts_with("`fp16`"), "{messages:?}");
        for (text, template) in [
            ("${A}", true),
            ("a-${A:-1}-b", true),
            ("{{ x }}", true),
            ("$VAR_1", true),
            ("$1.50", false),
            ("cost: $", false),
            ("{x}", false),
        ] {
            assert_eq!(crate::syntax::is_template(text), template, "{text}");
        }
    }

    #[test]
    fn invalid_values_name_what_is_allowed() {
        let text = "checkpoint_dir: x\nlogger_name: csvv\nlora_dropout: 1.5\ntrain:\n  micro_batch_size: four\n";
        let found = check_yaml(Format::LitgptLora, text);
        let by_text = |t: &str| found.invalid_values.iter().find(|v| &text[v.span.start..v.span.end] == t).unwrap();
        let logger = by_text("csvv");
        assert!(logger.message.contains("one of `csv`, `tensorboard`"), "{}", logger.message);
        assert_eq!(logger.suggestion.as_deref(), Some("csv"));
        assert!(by_text("1.5").message.contains("between 0 and 1"), "{}", by_text("1.5").message);
        assert!(by_text("four").message.contains("an integer"), "{}", by_text("four").message);
    }

    #[test]
    fn integers_beyond_64_bits_are_shown_as_written() {
        let cases = [
            (Language::Yaml, "checkpoint_dir: x\nlora_dropout: 123456789012345678901234567890\n"),
            (Language::Yaml, "checkpoint_dir: x\nlora_dropout: 0x1_0000_0000_0000_0000\n"),
            (Language::Json, "{\"checkpoint_dir\": \"x\", \"lora_dropout\": -99999999999999999999}"),
        ];
        for (language, text) in cases {
            let found = check(Format::LitgptLora, &syntax::parse(text, language));
            let literal = text.rsplit_once(": ").map(|(_, v)| v.trim_end_matches(['}', '\n'])).unwrap();
            assert_eq!(found.invalid_values.len(), 1, "{text}");
            let invalid = &found.invalid_values[0];
            assert_eq!(&text[invalid.span.start..invalid.span.end], literal);
            assert!(invalid.message.ends_with(&format!("not `{literal}`")), "{}", invalid.message);
        }
    }

    #[test]
    fn trl_and_axolotl_accept_quoted_numbers() {
        let quoted = check_yaml(Format::TrlSft, "model_name_or_path: x\nlearning_rate: \"2e-5\"\n");
        assert_eq!(quoted.invalid_values, Vec::new());
        let wrong = check_yaml(Format::TrlSft, "model_name_or_path: x\nlearning_rate: fast\n");
        assert_eq!(wrong.invalid_values.len(), 1);
        let axolotl = check_yaml(Format::Axolotl, "base_model: x\nlearning_rate: \"0.0002\"\nwarmup_steps: \"0.1\"\n");
        assert_eq!(axolotl.invalid_values.len(), 1, "pydantic converts the rate, but not 0.1 to an int");
    }

    #[test]
    fn removed_keys_carry_version_and_replacement() {
        let found = check_yaml(Format::TrlSft, "model_name_or_path: x\nevaluation_strategy: steps\n");
        let removed = &found.removed_keys[0];
        assert_eq!(removed.key, "evaluation_strategy");
        assert_eq!(removed.replacement.as_deref(), Some("eval_strategy"));
        let declared =
            get("trl-sft").unwrap().root["properties"]["evaluation_strategy"]["x-removed"]["in"].as_str().unwrap();
        assert_eq!(removed.since, parse_since(declared));
        assert_eq!(removed.since.as_ref().unwrap().0, "transformers");
        assert!(removed.value_fits_replacement && !removed.replacement_present);
    }

    #[test]
    fn lookups_for_hover_and_completion() {
        let doc = property_doc(Format::LitgptLora, &["train", "micro_batch_size"]).unwrap();
        assert!(doc.description.is_some());
        assert!(doc.source.is_some());
        let quantize = property_doc(Format::LitgptLora, &["quantize"]).unwrap();
        assert!(quantize.enum_values.contains(&Value::from("bnb.nf4")));
        let train = properties_at(Format::LitgptLora, &["train"]);
        assert!(train.iter().any(|p| p.name == "global_batch_size"));
        assert!(properties_at(Format::Unknown, &[]).is_empty());
    }
}
