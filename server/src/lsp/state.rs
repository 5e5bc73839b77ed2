//! The server's state: open documents with their analysis, and the settings.
//!
//! Handlers mutate it synchronously under one `std::sync::Mutex` before their first
//! `.await`, so concurrent notifications cannot reorder edits; every analysis is stamped
//! with the version it was computed for. Notebooks synced cell by cell are in [`notebook`].

mod notebook;

use super::convert::{uri_to_path, Encoding, Positions};
use super::diagnostics;
use super::options::{resolve_gpu_setting, ClientOptions};
use crate::analysis::{analyze_text, Analysis, Options};
use crate::catalog::Gpu;
use crate::estimate::Estimate;
use crate::project::Project;
use crate::settings::Settings;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use tower_lsp_server::ls_types::{self as lsp, TextDocumentContentChangeEvent, Uri};

/// One open document and what oomlint knows about it.
pub struct OpenDocument {
    pub uri: Uri,
    pub version: i32,
    pub analysis: Analysis,
    /// The findings as published (after `select`/`ignore`).
    pub diagnostics: Vec<lsp::Diagnostic>,
    /// How it was analysed (for what-if analyses in hovers).
    pub options: Options,
    /// The free share of the GPU the user asks for (modeline, editor, project).
    pub headroom: Option<f64>,
}

impl OpenDocument {
    pub fn positions(&self, encoding: Encoding) -> Positions<'_> {
        Positions { text: &self.analysis.text, index: &self.analysis.line_index, encoding }
    }
}

/// An estimate with the GPU and headroom it is judged against.
pub struct Judged {
    pub estimate: Estimate,
    pub gpu: Option<Gpu>,
    pub headroom: Option<f64>,
}

#[derive(Default)]
pub struct State {
    pub encoding: Option<Encoding>,
    /// Whether the client accepts `workspace/codeLens/refresh`.
    pub code_lens_refresh: bool,
    /// Whether the client watches files for the server (dynamic registration of
    /// `workspace/didChangeWatchedFiles`).
    pub watches_files: bool,
    pub options: ClientOptions,
    /// The GPU `options.gpu` names, or why it names none.
    pub gpu: Option<Result<Gpu, String>>,
    /// The files around the open documents, read once until a watched one changes.
    project: Arc<Project>,
    documents: HashMap<String, OpenDocument>,
    /// Notebooks synced through `notebookDocument/*`, by URI.
    notebooks: HashMap<String, notebook::Notebook>,
    /// Warnings for the user not yet shown, and those already shown (each is shown once).
    messages: Vec<String>,
    shown: HashSet<String>,
}

impl State {
    /// A server state that reads the files around documents through `project`.
    pub fn new(project: Project) -> State {
        State { project: Arc::new(project), ..State::default() }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding.unwrap_or(Encoding::Utf16)
    }

    /// Applies new editor settings and re-analyses every open document.
    pub fn configure(&mut self, options: ClientOptions) {
        self.gpu = options.gpu.as_deref().map(resolve_gpu_setting);
        if let Some(Err(why)) = &self.gpu {
            self.warn(format!("oomlint: {why}; the editor's GPU setting is ignored"));
        }
        self.options = options;
        for uri in self.documents.keys().cloned().collect::<Vec<_>>() {
            self.reanalyze(&uri);
        }
        self.reanalyze_notebooks();
    }

    /// Forgets the project settings, version pins and checkpoints read so far and re-analyses every
    /// open document (a watched project file changed).
    pub fn reread_project_files(&mut self) {
        self.project = Arc::new(self.project.renewed());
        for uri in self.documents.keys().cloned().collect::<Vec<_>>() {
            self.reanalyze(&uri);
        }
        self.reanalyze_notebooks();
    }

    /// Takes the warnings not yet shown.
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.messages)
    }

    fn warn(&mut self, message: String) {
        if self.shown.insert(message.clone()) {
            self.messages.push(message);
        }
    }

    /// How `path` is analysed: the project's settings (the nearest `oomlint.toml` or
    /// `[tool.oomlint]`) and pins, with the editor's GPU (named or `auto`, resolved once per
    /// configuration) and headroom over the settings; a modeline in the file wins over both
    /// (see `analysis::Options`).
    fn analysis_options(&mut self, path: &Path) -> Options {
        let mut options = match self.project.options(path, None) {
            Ok(options) => options,
            Err(e) => {
                self.warn(format!("oomlint: {e}; using the default settings"));
                let fallback = Arc::new(Settings::default());
                self.project.options(path, Some(&fallback)).unwrap_or_default()
            }
        };
        options.default_gpu = self.gpu.as_ref().and_then(|gpu| gpu.as_ref().ok()).cloned();
        if let Some(headroom) = self.options.headroom {
            let mut settings = Settings::clone(&options.settings);
            settings.headroom = Some(headroom);
            options.settings = Arc::new(settings);
        }
        options
    }

    pub fn get(&self, uri: &Uri) -> Option<&OpenDocument> {
        self.documents.get(uri.as_str())
    }

    pub fn uris(&self) -> Vec<Uri> {
        self.documents.values().map(|d| d.uri.clone()).collect()
    }

    pub fn open(&mut self, uri: Uri, version: i32, text: String) -> &OpenDocument {
        let document = self.analyze(uri, version, text);
        let key = document.uri.as_str().to_string();
        self.documents.insert(key.clone(), document);
        &self.documents[&key]
    }

    /// Applies changes in order (whole-text or ranged); ranges out of bounds clamp. A cell
    /// of a synced notebook re-reads the notebook. Returns `None` for a document that is
    /// not open.
    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Option<&OpenDocument> {
        self.edit(uri, version, changes)?;
        if let Some(notebook) = self.notebook_of(uri) {
            self.analyze_notebook(&notebook);
        }
        self.get(uri)
    }

    /// Applies changes to one document and analyses it alone.
    fn edit(&mut self, uri: &Uri, version: i32, changes: Vec<TextDocumentContentChangeEvent>) -> Option<()> {
        let encoding = self.encoding();
        let document = self.documents.remove(uri.as_str())?;
        let mut text = document.analysis.text;
        for change in changes {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    let index = crate::span::LineIndex::new(&text);
                    let span = Positions { text: &text, index: &index, encoding }.span(range);
                    text.replace_range(span.start..span.end, &change.text);
                }
            }
        }
        self.open(document.uri, version, text);
        Some(())
    }

    pub fn close(&mut self, uri: &Uri) -> bool {
        self.documents.remove(uri.as_str()).is_some()
    }

    fn reanalyze(&mut self, key: &str) {
        if let Some(document) = self.documents.remove(key) {
            let fresh = self.analyze(document.uri, document.version, document.analysis.text);
            self.documents.insert(key.to_string(), fresh);
        }
    }

    fn analyze(&mut self, uri: Uri, version: i32, text: String) -> OpenDocument {
        let path = uri_to_path(&uri);
        let options = self.analysis_options(&path);
        let headroom = options.settings.with_modeline(&text).headroom;
        let analysis = analyze_text(&path, text, &options);
        let positions = Positions { text: &analysis.text, index: &analysis.line_index, encoding: self.encoding() };
        let diagnostics = analysis
            .diagnostics
            .iter()
            .filter(|d| self.options.reports(d))
            .map(|d| diagnostics::to_lsp(d, &uri, &positions, &analysis.linked_files))
            .collect();
        OpenDocument { uri, version, analysis, diagnostics, options, headroom }
    }
}
