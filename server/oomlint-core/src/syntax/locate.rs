//! What lies under a position: the mapping entry whose key or value holds it (the
//! language server's and the playground's hovers).

use super::{Document, Entry, Node, Value};

/// The innermost mapping entry whose key or value contains an offset.
#[derive(Debug)]
pub struct Located<'a> {
    /// Keys from the root to the entry, the entry's key last.
    pub path: Vec<&'a str>,
    pub entry: &'a Entry,
}

/// The entry under `offset` (the key's end counts as on the key).
pub fn entry_at(document: &Document, offset: usize) -> Option<Located<'_>> {
    entry_within(document.root.as_ref()?, offset, &[])
}

/// The innermost entry under `offset` in `node`'s mapping, below the keys `above`. The mappings
/// dotted flags open in a launch script span every word that sets one of their keys, so they
/// may overlap: the first with an entry under `offset` wins, else the first under it.
fn entry_within<'a>(node: &'a Node, offset: usize, above: &[&'a str]) -> Option<Located<'a>> {
    let Value::Mapping(mapping) = &node.value else { return None };
    let on_key = |e: &Entry| e.key_span.start <= offset && offset <= e.key_span.end;
    let mut found = None;
    for entry in
        mapping.entries.iter().filter(|e| on_key(e) || e.value.span.contains(offset) || offset == e.value.span.end)
    {
        let mut path = above.to_vec();
        path.push(entry.key.as_str());
        if on_key(entry) {
            return Some(Located { path, entry });
        }
        let inner = mapping_child(&entry.value)
            .filter(|child| child.span.contains(offset))
            .and_then(|child| entry_within(child, offset, &path));
        if inner.is_some() {
            return inner;
        }
        found.get_or_insert(Located { path, entry });
    }
    found
}

fn mapping_child(node: &Node) -> Option<&Node> {
    matches!(node.value, Value::Mapping(_)).then_some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{self, Language};

    const TEXT: &str = "model: m\ntrain:\n  micro_batch_size: 2  # per device\n  epochs: 4\neval:\n  interval: 1\n";

    #[test]
    fn finds_nested_entries_on_keys_and_values() {
        let document = syntax::parse(TEXT, Language::Yaml);
        let on_key = entry_at(&document, TEXT.find("batch").unwrap()).unwrap();
        assert_eq!(on_key.path, ["train", "micro_batch_size"]);
        let on_value = entry_at(&document, TEXT.find("2  #").unwrap()).unwrap();
        assert_eq!(on_value.path, ["train", "micro_batch_size"]);
        let parent = entry_at(&document, TEXT.find("train").unwrap()).unwrap();
        assert_eq!(parent.path, ["train"]);
        assert!(entry_at(&document, TEXT.find("# per").unwrap()).is_none_or(|l| l.path == ["train"]));
    }
}
