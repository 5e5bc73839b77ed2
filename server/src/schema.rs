//! The JSON Schemas of `schema/`, embedded in the binary: validation of a spanned
//! document, and property lookups for hover and completion.
//!
//! A document is turned into a `serde_json::Value` with a side table from JSON pointer to
//! the key's and the value's span, validated with the `jsonschema` crate (offline: every
//! schema is registered under its `$id`, nothing is ever fetched), and each error is mapped
//! back to a span: an unexpected property becomes an [`UnknownKey`] at the key, a type,
//! enum or range error an [`InvalidValue`] at the value. Keys marked `x-removed` or
//! `x-deprecated` in the schema become [`RemovedKey`]s. Schemas compile once per process.

use crate::format::Format;
use crate::span::Span;
use crate::syntax::{Document, Mapping, Node, ScalarKind, ScalarStyle, Value as Tree};
use crate::versions::Version;
use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Every file under `schema/`, by name (a format name; a test checks the list is complete).
const SCHEMA_COUNT: usize = 14;

static SOURCES: [(&str, &str); SCHEMA_COUNT] = [
    ("accelerate", include_str!("../../schema/accelerate.json")),
    ("axolotl", include_str!("../../schema/axolotl.json")),
    ("deepspeed", include_str!("../../schema/deepspeed.json")),
    ("litgpt-adapter", include_str!("../../schema/litgpt-adapter.json")),
    ("litgpt-adapter-v2", include_str!("../../schema/litgpt-adapter-v2.json")),
    ("litgpt-full", include_str!("../../schema/litgpt-full.json")),
    ("litgpt-lora", include_str!("../../schema/litgpt-lora.json")),
    ("litgpt-pretrain", include_str!("../../schema/litgpt-pretrain.json")),
    ("llamafactory", include_str!("../../schema/llamafactory.json")),
    ("oomlint", include_str!("../../schema/oomlint.json")),
    ("transformers", include_str!("../../schema/transformers.json")),
    ("trl-dpo", include_str!("../../schema/trl-dpo.json")),
    ("trl-grpo", include_str!("../../schema/trl-grpo.json")),
    ("trl-sft", include_str!("../../schema/trl-sft.json")),
];

/// The names of the embedded schemas.
pub fn names() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(name, _)| *name)
}

/// A compiled schema.
pub struct Schema {
    pub name: &'static str,
    pub root: Value,
    validator: jsonschema::Validator,
}

/// Every schema, parsed (a schema that is not valid JSON is left out; a test catches it).
fn parsed() -> &'static Vec<(&'static str, Value)> {
    static PARSED: OnceLock<Vec<(&'static str, Value)>> = OnceLock::new();
    PARSED.get_or_init(|| {
        SOURCES.iter().filter_map(|(name, text)| Some((*name, serde_json::from_str(text).ok()?))).collect()
    })
}

/// All schemas registered by `$id`, so a `$ref` between them resolves without a fetch.
fn registry() -> Option<&'static jsonschema::Registry<'static>> {
    static REGISTRY: OnceLock<Option<jsonschema::Registry<'static>>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let resources = parsed().iter().filter_map(|(_, schema)| {
                let id = schema.get("$id")?.as_str()?.to_string();
                Some((id, jsonschema::Resource::from_contents(schema.clone())))
            });
            jsonschema::Registry::new().extend(resources).ok()?.prepare().ok()
        })
        .as_ref()
}

fn compile(schema: &Value) -> Option<jsonschema::Validator> {
    let options = jsonschema::options().with_draft(jsonschema::Draft::Draft202012).offline();
    match registry() {
        Some(registry) => options.with_registry(registry).build(schema).ok(),
        None => options.build(schema).ok(),
    }
}

/// The compiled schema called `name` (`trl-grpo`, `oomlint`), compiled on first use.
pub fn get(name: &str) -> Option<&'static Schema> {
    static COMPILED: [OnceLock<Option<Schema>>; SCHEMA_COUNT] = [const { OnceLock::new() }; SCHEMA_COUNT];
    let index = SOURCES.iter().position(|(n, _)| *n == name)?;
    COMPILED
        .get(index)?
        .get_or_init(|| {
            let (name, root) = parsed().iter().find(|(n, _)| *n == name)?.clone();
            Some(Schema { name, validator: compile(&root)?, root })
        })
        .as_ref()
}

/// The schema of a format, if it has one.
pub fn for_format(format: Format) -> Option<&'static Schema> {
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
    let root = &for_format(format)?.root;
    let (name, _) = path.split_last()?;
    Some(PropertyDoc::new(name, at_path(root, path)?))
}

/// Every property the object at `path` may have (the top level for an empty path).
pub fn properties_at(format: Format, path: &[&str]) -> Vec<PropertyDoc> {
    let Some(schema) = for_format(format).and_then(|s| at_path(&s.root, path)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    collect_properties(schema, &mut out);
    out
}

fn collect_properties(schema: &Value, out: &mut Vec<PropertyDoc>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.extend(
            props
                .iter()
                .filter(|(k, _)| !out.iter().any(|d| &d.name == *k))
                .map(|(k, v)| PropertyDoc::new(k, v))
                .collect::<Vec<_>>(),
        );
    }
    for alt in alternatives(schema) {
        collect_properties(alt, out);
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// The key's span, for values of mapping entries.
    pub key: Option<Span>,
    pub value: Span,
    /// Whether the value was written as a quoted string.
    pub quoted: bool,
}

/// A document as JSON, with the span of every value by JSON pointer.
pub struct Instance {
    pub value: Value,
    pub spans: HashMap<String, Located>,
}

impl Instance {
    /// Converts `node`; pointers are relative to it.
    pub fn new(node: &Node) -> Instance {
        let mut spans = HashMap::new();
        let value = to_json(node, None, &mut String::new(), &mut spans);
        Instance { value, spans }
    }
}

fn to_json(node: &Node, key: Option<Span>, pointer: &mut String, spans: &mut HashMap<String, Located>) -> Value {
    let quoted =
        node.as_scalar().is_some_and(|s| matches!(s.style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted));
    spans.insert(pointer.clone(), Located { key, value: node.span, quoted });
    match &node.value {
        Tree::Mapping(mapping) => {
            let mut object = Map::new();
            for entry in &mapping.entries {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&entry.key.replace('~', "~0").replace('/', "~1"));
                let value = to_json(&entry.value, Some(entry.key_span), pointer, spans);
                pointer.truncate(len);
                // Duplicate keys: the last value wins, as in PyYAML and `json.load`.
                object.insert(entry.key.clone(), value);
            }
            Value::Object(object)
        }
        Tree::Sequence(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let len = pointer.len();
                    pointer.push_str(&format!("/{i}"));
                    let value = to_json(item, None, pointer, spans);
                    pointer.truncate(len);
                    value
                })
                .collect(),
        ),
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

/// JSON has no infinities or NaN; they stand in as the largest finite numbers.
fn number(f: f64) -> Value {
    let finite = if f.is_nan() { 0.0 } else { f.clamp(f64::MIN, f64::MAX) };
    serde_json::Number::from_f64(finite).map_or(Value::Null, Value::Number)
}

/// A key the schema does not allow.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownKey {
    pub key: String,
    pub span: Span,
    /// The closest allowed key, when one is close enough.
    pub suggestion: Option<String>,
    /// The enclosing mapping's path (`train`), empty at the top level.
    pub parent: String,
    /// A nested mapping where this exact key is valid (`micro_batch_size` → `train`).
    pub belongs_under: Option<String>,
}

/// A value of the wrong type, outside an enum or a range, or a missing required key.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidValue {
    pub span: Span,
    pub message: String,
    /// The closest allowed value of an enum, when one is close enough.
    pub suggestion: Option<String>,
}

/// A key the framework removed or deprecated (`x-removed` / `x-deprecated`).
#[derive(Debug, Clone, PartialEq)]
pub struct RemovedKey {
    pub key: String,
    pub key_span: Span,
    pub value_span: Span,
    /// The framework and release that removed it (`("transformers", 4.46)`).
    pub since: Option<(String, Version)>,
    pub replacement: Option<String>,
    pub message: String,
    /// Deprecated only: still accepted by the newest release.
    pub deprecated_only: bool,
    /// The replacement key is already set in the same mapping.
    pub replacement_present: bool,
    /// The current value is valid for the replacement key.
    pub value_fits_replacement: bool,
}

/// Every schema finding of one document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    pub unknown_keys: Vec<UnknownKey>,
    pub invalid_values: Vec<InvalidValue>,
    pub removed_keys: Vec<RemovedKey>,
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
    let instance = Instance::new(node);
    let coerces = coerces_strings(format);
    for error in schema.validator.iter_errors(&instance.value) {
        let pointer = error.instance_path().as_str().to_string();
        let Some(at) = instance.spans.get(&pointer).copied() else {
            continue;
        };
        let sub = parent_schema(&schema.root, error.schema_path().as_str());
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                for key in unexpected {
                    let child = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                    let span = instance.spans.get(&child).and_then(|l| l.key).unwrap_or(at.value);
                    let suggestion = sub.and_then(|s| closest(key, allowed_keys(s)));
                    let belongs_under = sub.and_then(|s| nested_owner(s, key));
                    findings.unknown_keys.push(UnknownKey {
                        key: key.clone(),
                        span,
                        suggestion,
                        parent: display_path(&pointer),
                        belongs_under,
                    });
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let span = at.key.unwrap_or(Span::empty(at.value.start));
                let place =
                    if pointer.is_empty() { String::new() } else { format!(" in `{}`", display_path(&pointer)) };
                findings.invalid_values.push(InvalidValue {
                    span,
                    message: format!("missing required key `{name}`{place}"),
                    suggestion: None,
                });
            }
            _ => {
                if coerces && at.quoted && sub.is_some_and(|s| accepts_coerced(s, error.instance())) {
                    continue;
                }
                let finding = invalid_value(&pointer, at, sub, error.instance(), &error.to_string());
                if !findings.invalid_values.iter().any(|f| f.span == finding.span) {
                    findings.invalid_values.push(finding);
                }
            }
        }
    }
    if let Some(mapping) = node.as_mapping() {
        removed_keys(&schema.root, mapping, &mut findings.removed_keys);
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
fn accepts_coerced(schema: &Value, instance: &Value) -> bool {
    let Some(text) = instance.as_str() else {
        return false;
    };
    let coerced = match crate::syntax::yaml::resolve_plain(text) {
        ScalarKind::Int(i) => Value::from(i),
        ScalarKind::Float(f) => number(f),
        ScalarKind::Bool(b) => Value::Bool(b),
        _ => return false,
    };
    compile_fragment(schema).is_some_and(|v| v.is_valid(&coerced))
}

fn compile_fragment(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options().with_draft(jsonschema::Draft::Draft202012).offline().build(schema).ok()
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

fn allowed_keys(schema: &Value) -> Vec<String> {
    let mut docs = Vec::new();
    collect_properties(schema, &mut docs);
    docs.into_iter().filter(|d| !d.deprecated).map(|d| d.name).collect()
}

/// The property of `schema` whose own properties include `key` (one level down).
fn nested_owner(schema: &Value, key: &str) -> Option<String> {
    let mut children = Vec::new();
    collect_properties(schema, &mut children);
    children.into_iter().map(|c| c.name).find(|name| {
        property(schema, name).and_then(|child| property(child, key)).is_some_and(|p| p.get("x-removed").is_none())
    })
}

/// The candidate closest to `word` (case-insensitive match or Jaro-Winkler ≥ 0.85).
fn closest(word: &str, candidates: impl IntoIterator<Item = String>) -> Option<String> {
    let lower = word.to_lowercase();
    let mut best: Option<(f64, String)> = None;
    for candidate in candidates {
        let score = if candidate.to_lowercase() == lower {
            2.0
        } else {
            strsim::jaro_winkler(&lower, &candidate.to_lowercase())
        };
        if score >= 0.85 && best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

fn invalid_value(pointer: &str, at: Located, sub: Option<&Value>, instance: &Value, fallback: &str) -> InvalidValue {
    let name = display_path(pointer);
    let subject = if name.is_empty() { "the document".to_string() } else { format!("`{name}`") };
    let found = match instance {
        Value::String(s) => format!("`{s}`"),
        Value::Number(n) => format!("`{n}`"),
        Value::Bool(b) => format!("`{b}`"),
        Value::Null => "null".to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "a mapping".to_string(),
    };
    let message = match sub.map(describe).filter(|d| !d.is_empty()) {
        Some(expected) => format!("{subject} must be {expected}, not {found}"),
        None => format!("{subject}: {fallback}"),
    };
    let suggestion = match (sub, instance) {
        (Some(schema), Value::String(s)) => {
            closest(s, enum_values(schema).iter().filter_map(|v| v.as_str().map(str::to_string)))
        }
        _ => None,
    };
    InvalidValue { span: at.value, message, suggestion }
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
fn removed_keys(schema: &Value, mapping: &Mapping, out: &mut Vec<RemovedKey>) {
    for entry in &mapping.entries {
        let Some(sub) = property(schema, &entry.key) else {
            continue;
        };
        let marked = sub.get("x-removed").map(|m| (m, false)).or_else(|| sub.get("x-deprecated").map(|m| (m, true)));
        if let Some((mark, deprecated_only)) = marked {
            let replacement = mark.get("replacement").and_then(Value::as_str).map(str::to_string);
            let value_fits_replacement = replacement
                .as_deref()
                .and_then(|r| property(schema, r))
                .and_then(compile_fragment)
                .is_some_and(|v| v.is_valid(&Instance::new(&entry.value).value));
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
            });
        }
        if let Some(child) = entry.value.as_mapping() {
            removed_keys(sub, child, out);
        }
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
    fn every_schema_file_is_embedded_and_compiles() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_suffix(".json").map(str::to_string))
            .collect();
        on_disk.sort();
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
    fn unknown_keys_point_at_the_key_with_a_suggestion() {
        let text = "checkpoint_dir: x\nprecison: bf16-true\ntrain:\n  micro_batch_sise: 4\n  zzz: 1\n";
        let found = check_yaml(Format::LitgptLora, text);
        let keys: Vec<(&str, &str, Option<&str>)> = found
            .unknown_keys
            .iter()
            .map(|u| (u.key.as_str(), &text[u.span.start..u.span.end], u.suggestion.as_deref()))
            .collect();
        assert!(keys.contains(&("precison", "precison", Some("precision"))), "{keys:?}");
        assert!(keys.contains(&("micro_batch_sise", "micro_batch_sise", Some("micro_batch_size"))), "{keys:?}");
        assert!(keys.contains(&("zzz", "zzz", None)), "{keys:?}");
        assert_eq!(found.unknown_keys.iter().find(|u| u.key == "zzz").unwrap().parent, "train");
        let misplaced = check_yaml(Format::LitgptLora, "checkpoint_dir: x\nmicro_batch_size: 4\n");
        assert_eq!(misplaced.unknown_keys[0].belongs_under.as_deref(), Some("train"));
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
