//! One file through the whole pipeline: bytes → document → format → plan → rules.

use crate::diagnostic::Diagnostic;
use crate::format::{self, Format};
use crate::plan::Plan;
use crate::rules::{self, unreadable_input};
use crate::span::LineIndex;
use crate::syntax::{self, Document, Language};
use std::path::{Path, PathBuf};

/// Everything oomlint knows about one file.
pub struct Analysis {
    pub path: PathBuf,
    /// The analysed text (empty or a valid prefix when the input was rejected).
    pub text: String,
    pub line_index: LineIndex,
    pub document: Document,
    pub format: Format,
    pub plan: Option<Plan>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Options that change how a file is read.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Forces the format (e.g. from `oomlint.toml`'s `format` table).
    pub format: Option<Format>,
}

/// Analyses raw bytes read from `path`.
pub fn analyze_bytes(path: &Path, bytes: &[u8], options: &Options) -> Analysis {
    match unreadable_input::reject(bytes) {
        None => analyze_text(path, String::from_utf8_lossy(bytes).into_owned(), options),
        Some(rejection) => {
            let prefix = bytes.get(..rejection.0).unwrap_or_default();
            let text = if bytes.len() > unreadable_input::MAX_FILE_BYTES {
                String::new()
            } else {
                String::from_utf8_lossy(prefix).into_owned()
            };
            let document = Document { language: Language::Yaml, root: None, comments: Vec::new(), problems: Vec::new() };
            let ctx = rules::Context { text: &text, document: &document, format: Format::Unknown, plan: None, rejected: Some(&rejection) };
            let diagnostics = rules::check(&ctx);
            Analysis {
                path: path.to_path_buf(),
                line_index: LineIndex::new(&text),
                text,
                document,
                format: Format::Unknown,
                plan: None,
                diagnostics,
            }
        }
    }
}

/// Analyses text; the language comes from the file name (a modeline's format can say otherwise).
pub fn analyze_text(path: &Path, text: String, options: &Options) -> Analysis {
    let forced = options.format.or_else(|| format::detect::modeline_format(&text));
    let language = format::language_of(path)
        .or_else(|| forced.map(Format::language))
        .unwrap_or(Language::Yaml);
    let document = syntax::parse(&text, language);
    let format = forced.unwrap_or_else(|| format::detect(path, &text, &document));
    let plan = if document.is_incomplete() { None } else { format::build_plan(format, &document, &text) };
    // Files of no known format get no findings: oomlint runs over whole repositories.
    let diagnostics = if format == Format::Unknown {
        Vec::new()
    } else {
        let ctx = rules::Context { text: &text, document: &document, format, plan: plan.as_ref(), rejected: None };
        rules::check(&ctx)
    };
    Analysis { path: path.to_path_buf(), line_index: LineIndex::new(&text), text, document, format, plan, diagnostics }
}
