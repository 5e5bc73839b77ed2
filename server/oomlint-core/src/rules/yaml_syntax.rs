//! ## What it does
//! Reports text that is not valid in its language (YAML, JSON or TOML) at the
//! position where parsing stopped: tabs used for indentation, unclosed brackets or
//! quotes, a bad indentation level, nesting too deep, or an alias bomb.
//!
//! ## Why
//! The framework's loader (PyYAML `safe_load`, Python `json.load`, `tomllib`) raises
//! on the same text before training starts; everything after the error is unknown
//! to oomlint too, so other findings may be missing until it is fixed.
//!
//! ## Example
//! ```yaml
//! train:
//!   micro_batch_size: 4
//!  max_seq_length: 512   # one space less: no block is open at this indentation
//! ```
//! (A tab used for indentation is reported the same way, at the tab.)
//!
//! ## Fix
//! None: indent with spaces, close the bracket or quote.
//!
//! ## Source
//! PyYAML `yaml/scanner.py` ("found character '\t' that cannot start any token");
//! Python `json/decoder.py`; the parsers oomlint uses are saphyr-parser,
//! jsonc-parser (strict mode) and toml_edit.

use super::{Context, Reporter};
use crate::syntax::ProblemKind;

pub(super) fn check(ctx: &Context, out: &mut Reporter) {
    for problem in &ctx.document.problems {
        if problem.kind == ProblemKind::Syntax {
            out.report(problem.span, problem.message.clone());
        }
    }
}
