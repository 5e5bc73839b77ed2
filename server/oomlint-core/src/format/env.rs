//! Allocator and device variables wherever users set them: env files, shell scripts,
//! `env:` mappings inside YAML configs (TRL's `env`, GitHub Actions, ms-swift `ENV`), and the
//! environment a Python script or notebook sets for itself.

use crate::plan::{AllocatorSetting, Sourced};
use crate::syntax::python::{PyValue, Spanned, Static};
use crate::syntax::{Document, Entry, Language, Mapping, Node, Scalar, ScalarKind, ScalarStyle, Value};

/// Variable names PyTorch reads the caching-allocator config from, in priority order
/// (`c10/core/AllocatorConfig.cpp`: the first one present is parsed).
pub(crate) use crate::plan::ALLOCATOR_VARIABLES;

const ENV_BLOCK_KEYS: [&str; 3] = ["env", "ENV", "environment"];

/// Whether a YAML mapping has an `env:` block that sets an allocator or device variable.
pub(crate) fn has_env_block(root: &Mapping) -> bool {
    let mut found = false;
    visit_env_entries(root, 0, &mut |e| {
        found |= ALLOCATOR_VARIABLES.contains(&e.key.as_str()) || e.key == "CUDA_VISIBLE_DEVICES";
    });
    found
}

/// Calls `f` on every entry of every `env:` block (in YAML) at any depth up to 6.
fn visit_env_entries<'a>(mapping: &'a Mapping, depth: usize, f: &mut impl FnMut(&'a Entry)) {
    if depth > 6 {
        return;
    }
    for entry in &mapping.entries {
        if ENV_BLOCK_KEYS.contains(&entry.key.as_str()) {
            if let Some(env) = entry.value.as_mapping() {
                env.entries.iter().for_each(&mut *f);
            }
        }
        match &entry.value.value {
            Value::Mapping(m) => visit_env_entries(m, depth + 1, f),
            Value::Sequence(items) => {
                for m in items.iter().filter_map(Node::as_mapping) {
                    visit_env_entries(m, depth + 1, f);
                }
            }
            Value::Scalar(_) => {}
        }
    }
}

/// The variable assignments of a document: an env file's or shell script's lines, the
/// entries of YAML `env:` blocks, and what a script or notebook sets (`os.environ[…] = …`,
/// `%env`, `!export`) outside branches that never run, whatever the script trains with.
fn variable_entries(doc: &Document) -> Vec<Entry> {
    if let Some(program) = doc.program.as_deref() {
        return program
            .env
            .iter()
            .filter(|s| !s.dead)
            .filter_map(|s| {
                let Static::Known(Spanned { value: PyValue::Str(text, single), span }) = &s.value else {
                    return None;
                };
                let style = if *single { ScalarStyle::SingleQuoted } else { ScalarStyle::DoubleQuoted };
                let scalar = Scalar { text: text.clone(), style, kind: ScalarKind::Str };
                let value = Node { span: *span, value: Value::Scalar(scalar) };
                Some(Entry { key: s.name.clone(), key_span: s.name_span, value })
            })
            .collect();
    }
    let Some(root) = doc.root_mapping() else {
        return Vec::new();
    };
    match doc.language {
        Language::Env | Language::Shell => root.entries.clone(),
        Language::Yaml | Language::Python | Language::Notebook => {
            let mut entries = Vec::new();
            visit_env_entries(root, 0, &mut |e| entries.push(e.clone()));
            entries
        }
        Language::Json | Language::Toml => Vec::new(),
    }
}

/// Every allocator-config assignment in the document, in file order.
pub(crate) fn allocator_settings(doc: &Document, text: &str) -> Vec<AllocatorSetting> {
    variable_entries(doc)
        .into_iter()
        .filter(|e| ALLOCATOR_VARIABLES.contains(&e.key.as_str()))
        .filter_map(|e| {
            let scalar = e.value.as_scalar()?;
            let mut span = e.value.span;
            if matches!(scalar.style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) && span.len() >= 2 {
                let raw = &text[span.start..span.end];
                if raw.starts_with(['"', '\'']) && raw.ends_with(['"', '\'']) {
                    span = crate::span::Span::new(span.start + 1, span.end - 1);
                }
            }
            let verbatim = text.get(span.start..span.end) == Some(scalar.text.as_str());
            Some(AllocatorSetting {
                variable: e.key.clone(),
                value: scalar.text.clone(),
                key_span: e.key_span,
                value_span: span,
                verbatim,
            })
        })
        .collect()
}

/// The last `CUDA_VISIBLE_DEVICES` assignment.
pub(crate) fn visible_devices(doc: &Document) -> Option<Sourced<String>> {
    variable_entries(doc)
        .into_iter()
        .rev()
        .find(|e| e.key == "CUDA_VISIBLE_DEVICES")
        .and_then(|e| Some(Sourced::file(e.value.as_scalar()?.text.clone(), e.key_span, e.value.span)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    #[test]
    fn finds_settings_in_yaml_env_blocks_and_shell() {
        let text = "env:\n  PYTORCH_CUDA_ALLOC_CONF: \"expandable_segments:True\"\njobs:\n  t:\n    env:\n      CUDA_VISIBLE_DEVICES: \"0,1\"\n";
        let doc = syntax::parse(text, Language::Yaml);
        let settings = allocator_settings(&doc, text);
        assert_eq!(settings.len(), 1);
        let s = &settings[0];
        assert_eq!(&text[s.value_span.start..s.value_span.end], "expandable_segments:True");
        assert!(s.verbatim);
        assert_eq!(visible_devices(&doc).unwrap().value, "0,1");

        let sh = "export PYTORCH_ALLOC_CONF='max_split_size_mb:10'\n";
        let doc = syntax::parse(sh, Language::Shell);
        let settings = allocator_settings(&doc, sh);
        assert_eq!(&sh[settings[0].value_span.start..settings[0].value_span.end], "max_split_size_mb:10");
    }
}
