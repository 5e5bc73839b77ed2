//! Helpers shared by the format builders' unit tests.

use super::Reader;
use crate::plan::{Plan, Sourced};
use crate::syntax::{self, Language};
use std::path::Path;

/// Parses `text` as `language` and builds its plan with `build`.
pub(super) fn plan_with(text: &str, language: Language, build: fn(&Reader) -> Plan) -> Plan {
    let doc = syntax::parse(text, language);
    build(&Reader::new(doc.root_mapping().expect("a mapping at the top")))
}

/// The text of the value that set `s`.
pub(super) fn spanned<'t, T>(text: &'t str, s: &Sourced<T>) -> &'t str {
    let span = s.value_span().expect("set by the file");
    &text[span.start..span.end]
}

/// Calls `check(path, text, reader)` for every file of `../shared/corpus` whose manifest format
/// is `format`, parsed as `language` (`path` relative to the corpus). Prints a notice and checks
/// nothing when the corpus is absent.
// Test-only I/O: reads the corpus and says so on stderr when it is absent.
#[allow(clippy::disallowed_methods, clippy::disallowed_macros)]
pub(super) fn each_corpus_file(format: &str, language: Language, mut check: impl FnMut(&Path, &str, &Reader)) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let Ok(manifest) = std::fs::read_to_string(root.join("MANIFEST.tsv")) else {
        eprintln!("notice: {} is absent; corpus test skipped", root.display());
        return;
    };
    let files: Vec<&str> = manifest
        .lines()
        .skip(1)
        .filter_map(|line| {
            let columns: Vec<&str> = line.split('\t').collect();
            (columns.get(5) == Some(&format)).then_some(columns[0])
        })
        .collect();
    assert!(!files.is_empty(), "no {format} files in the corpus manifest");
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let doc = syntax::parse(&text, language);
        let mapping = doc.root_mapping().unwrap_or_else(|| panic!("{file} has no mapping"));
        check(Path::new(file), &text, &Reader::new(mapping));
    }
}
