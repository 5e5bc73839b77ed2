//! What lies under the cursor: the mapping entry (for hovers) and, in YAML being typed,
//! the key path and whether a key or a value is being written (for completion).

use crate::span::Span;
use crate::syntax::{Document, Entry, Node, Value};

/// The entry whose value is exactly `span` (what a fix edits), anywhere in the document.
pub fn entry_with_value(document: &Document, span: Span) -> Option<&Entry> {
    let mut stack: Vec<&Node> = document.root.iter().collect();
    while let Some(node) = stack.pop() {
        match &node.value {
            Value::Mapping(mapping) => {
                if let Some(entry) = mapping.entries.iter().find(|e| e.value.span == span) {
                    return Some(entry);
                }
                stack.extend(mapping.entries.iter().map(|e| &e.value));
            }
            Value::Sequence(items) => stack.extend(items),
            Value::Scalar(_) => {}
        }
    }
    None
}

/// What the cursor is writing in a YAML block mapping.
#[derive(Debug, PartialEq, Eq)]
pub enum Writing {
    /// A key; `prefix` is the word typed so far.
    Key { prefix: Span },
    /// The value of `key`; `prefix` is the value typed so far.
    Value { key: String, prefix: Span },
}

/// The completion context at `offset` in YAML text: the parent keys and what is written.
#[derive(Debug, PartialEq, Eq)]
pub struct YamlContext {
    pub path: Vec<String>,
    pub writing: Writing,
    /// Keys already present in the same mapping.
    pub siblings: Vec<String>,
}

/// Reads the context from indentation alone, so it works while the text does not parse.
pub fn yaml_context(text: &str, offset: usize) -> Option<YamlContext> {
    let offset = crate::span::floor_char_boundary(text, offset.min(text.len()));
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    if before.contains('#') || before.trim_start().starts_with('-') {
        return None;
    }
    let indent = before.len() - before.trim_start_matches(' ').len();
    let writing = match before.find(':') {
        Some(colon) => {
            let key = before[..colon].trim();
            let value = &before[colon + 1..];
            let typed = value.trim_start();
            if key.is_empty() || typed.contains([':', '[', '{', '"', '\'']) {
                return None;
            }
            Writing::Value { key: key.to_string(), prefix: Span::new(offset - typed.len(), offset) }
        }
        None => {
            let word = before.trim_start_matches(' ');
            if !word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.') {
                return None;
            }
            Writing::Key { prefix: Span::new(offset - word.len(), offset) }
        }
    };
    let lines = Lines { text, line_start };
    let path = lines.parents(indent);
    let siblings = lines.siblings(indent);
    Some(YamlContext { path, writing, siblings })
}

struct Lines<'a> {
    text: &'a str,
    /// Start of the cursor's line.
    line_start: usize,
}

impl<'a> Lines<'a> {
    fn above(&self) -> impl Iterator<Item = &'a str> {
        self.text[..self.line_start].lines().rev()
    }

    fn below(&self) -> impl Iterator<Item = &'a str> {
        let rest = &self.text[self.line_start..];
        rest.lines().skip(1)
    }

    /// Keys of the enclosing block mappings, outermost first.
    fn parents(&self, indent: usize) -> Vec<String> {
        let mut path = Vec::new();
        let mut limit = indent;
        for line in self.above() {
            let Some((depth, key, rest)) = key_line(line) else { continue };
            if depth < limit {
                if !rest.is_empty() {
                    break;
                }
                path.push(key.to_string());
                limit = depth;
                if depth == 0 {
                    break;
                }
            }
        }
        path.reverse();
        path
    }

    /// Keys at `indent` in the same block, above and below the cursor.
    fn siblings(&self, indent: usize) -> Vec<String> {
        let mut keys = Vec::new();
        for lines in [Box::new(self.above()) as Box<dyn Iterator<Item = &str>>, Box::new(self.below())] {
            for line in lines {
                let Some((depth, key, _)) = key_line(line) else { continue };
                if depth < indent {
                    break;
                }
                if depth == indent {
                    keys.push(key.to_string());
                }
            }
        }
        keys
    }
}

/// `(indent, key, value text)` of a `key: value` line; `None` for blank, comment and list lines.
fn key_line(line: &str) -> Option<(usize, &str, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if trimmed.is_empty() || trimmed.starts_with(['#', '-']) {
        return None;
    }
    let colon = trimmed.find(": ").or_else(|| trimmed.strip_suffix(':').map(str::len))?;
    let key = trimmed[..colon].trim().trim_matches(['"', '\'']);
    let rest = trimmed[colon + 1..].trim();
    let rest = if rest.starts_with('#') { "" } else { rest };
    Some((line.len() - trimmed.len(), key, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_of_a_key_being_typed() {
        let text = "train:\n  epochs: 4\n  mic\n  max_seq_length: 9\neval:\n  interval: 1\n";
        let at = text.find("mic").unwrap() + 3;
        let context = yaml_context(text, at).unwrap();
        assert_eq!(context.path, ["train"]);
        assert_eq!(context.writing, Writing::Key { prefix: Span::new(at - 3, at) });
        assert_eq!(context.siblings, ["epochs", "max_seq_length"]);
    }

    #[test]
    fn context_of_a_value_being_typed() {
        let text = "train:\n  epochs: 4\nprecision: bf\n";
        let at = text.find("bf").unwrap() + 2;
        let context = yaml_context(text, at).unwrap();
        assert!(context.path.is_empty());
        assert_eq!(context.writing, Writing::Value { key: "precision".into(), prefix: Span::new(at - 2, at) });
        assert_eq!(context.siblings, ["train"]);
        assert!(yaml_context("a: [1, 2", 8).is_none());
        assert!(yaml_context("# comm", 5).is_none());
    }
}
