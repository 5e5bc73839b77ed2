//! A schema property's documentation as Markdown, shared by hover and completion.

use crate::schema::PropertyDoc;
use serde_json::Value;

/// The value as a config would spell it (`bf16-true`, `null`, `4`).
pub fn spell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Description, default, valid values and the framework source of one property.
pub fn property_markdown(doc: &PropertyDoc) -> String {
    let mut parts = Vec::new();
    if doc.deprecated {
        parts.push("**Deprecated.**".to_string());
    }
    if let Some(title) = &doc.title {
        parts.push(format!("**{title}**"));
    }
    if let Some(description) = &doc.description {
        parts.push(description.clone());
    }
    let mut facts = Vec::new();
    if let Some(default) = &doc.default {
        facts.push(format!("default: `{}`", spell(default)));
    }
    if !doc.enum_values.is_empty() {
        let values: Vec<String> = doc.enum_values.iter().map(|v| format!("`{}`", spell(v))).collect();
        facts.push(format!("values: {}", values.join(", ")));
    }
    if let Some(source) = &doc.source {
        facts.push(format!("source: `{source}`"));
    }
    if !facts.is_empty() {
        parts.push(facts.join(" · "));
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_default_values_and_source() {
        let doc = PropertyDoc {
            name: "logger_name".into(),
            title: None,
            description: Some("Logger.".into()),
            default: Some(json!("csv")),
            enum_values: vec![json!("csv"), json!(null)],
            source: Some("litgpt/finetune/lora.py".into()),
            deprecated: false,
        };
        assert_eq!(
            property_markdown(&doc),
            "Logger.\n\ndefault: `csv` · values: `csv`, `null` · source: `litgpt/finetune/lora.py`"
        );
    }
}
