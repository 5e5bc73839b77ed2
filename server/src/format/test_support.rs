//! Helpers shared by the format builders' unit tests.

use super::Reader;
use crate::plan::{Plan, Sourced};
use crate::syntax::{self, Language};

/// Parses `text` as `language` and builds its plan with `build`.
pub fn plan_with(text: &str, language: Language, build: fn(&Reader) -> Plan) -> Plan {
    let doc = syntax::parse(text, language);
    build(&Reader::new(doc.root_mapping().expect("a mapping at the top")))
}

/// The text of the value that set `s`.
pub fn spanned<'t, T>(text: &'t str, s: &Sourced<T>) -> &'t str {
    let span = s.value_span().expect("set by the file");
    &text[span.start..span.end]
}
