//! A schema as the validator needs it: without the keywords that only document it. The
//! build script (`build.rs`) writes every schema of `schema/` in this form, so that `check`
//! parses and compiles a fifth of the text; hover and completion read the full schema.
//!
//! Only keywords are dropped, never a property that happens to be called `title`: the walk
//! enters only the keywords whose values are schemas, and copies every other value as it is.

use serde_json::{Map, Value};

/// Annotations that assert nothing (JSON Schema 2020-12 meta-data vocabulary, and our
/// `x-source`). `deprecated` and the `x-removed`/`x-deprecated` marks stay: rules read them.
const DOCUMENTATION: [&str; 5] = ["description", "title", "default", "examples", "x-source"];

/// Keywords whose value is a schema, or an array of schemas (`items` in older drafts).
const SUBSCHEMA: [&str; 15] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "anyOf",
    "oneOf",
    "allOf",
    "prefixItems",
];

/// Keywords whose value maps names to schemas.
const SUBSCHEMA_MAP: [&str; 5] = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/// `schema` without its documentation keywords, at every level.
pub(crate) fn lean(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in object {
        let key = key.as_str();
        if DOCUMENTATION.contains(&key) {
            continue;
        }
        let kept = if SUBSCHEMA.contains(&key) {
            schemas(value)
        } else if SUBSCHEMA_MAP.contains(&key) {
            match value {
                Value::Object(named) => Value::Object(named.iter().map(|(name, s)| (name.clone(), lean(s))).collect()),
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.to_string(), kept);
    }
    Value::Object(out)
}

/// A schema, or each schema of an array.
fn schemas(value: &Value) -> Value {
    match value {
        Value::Array(list) => Value::Array(list.iter().map(lean).collect()),
        other => lean(other),
    }
}
