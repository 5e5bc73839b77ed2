//! Notebooks synced through `notebookDocument/*`: the server holds every cell in order,
//! analyses the code cells as one notebook (the same reading as `oomlint check
//! notebook.ipynb`: cells joined in order, IPython lines and `%env` understood) and gives
//! each cell the findings that lie in it, in the cell's own positions.
//!
//! Each cell is also an open document analysed alone (for hover and completion on its
//! text); its own findings and estimate are replaced by the notebook's, since a cell read
//! alone lacks the constants and imports of the others.

use super::{diagnostics, Judged, OpenDocument, State};
use crate::analysis::analyze_text;
use crate::diagnostic::{Diagnostic, Fix};
use crate::lsp::convert::uri_to_path;
use crate::syntax::notebook::{cell_sources, CellSource};
use serde_json::json;
use std::collections::HashMap;
use tower_lsp_server::ls_types::{
    self as lsp, DidChangeNotebookDocumentParams, DidCloseNotebookDocumentParams, DidOpenNotebookDocumentParams,
    NotebookCell, NotebookCellKind, Uri,
};

/// A synced notebook: its cells in order, and the estimate of the last analysis.
pub(super) struct Notebook {
    uri: Uri,
    /// Every cell's document and whether it is a code cell.
    cells: Vec<(Uri, bool)>,
    estimate: Option<Judged>,
}

fn cell_of(cell: &NotebookCell) -> (Uri, bool) {
    (cell.document.clone(), cell.kind == NotebookCellKind::CODE)
}

impl State {
    /// Opens a notebook and its cells; returns the cells whose findings to publish.
    pub fn open_notebook(&mut self, params: DidOpenNotebookDocumentParams) -> Vec<Uri> {
        for cell in params.cell_text_documents {
            self.open(cell.uri, cell.version, cell.text);
        }
        let notebook = params.notebook_document;
        let key = notebook.uri.as_str().to_string();
        let cells = notebook.cells.iter().map(cell_of).collect();
        self.notebooks.insert(key.clone(), Notebook { uri: notebook.uri, cells, estimate: None });
        self.analyze_notebook(&key)
    }

    /// Applies cell structure, kind and text changes; returns the cells to publish
    /// (closed cells included, to clear their findings).
    pub fn change_notebook(&mut self, params: DidChangeNotebookDocumentParams) -> Vec<Uri> {
        let key = params.notebook_document.uri.as_str().to_string();
        if !self.notebooks.contains_key(&key) {
            return Vec::new();
        }
        let mut closed = Vec::new();
        let Some(change) = params.change.cells else { return self.analyze_notebook(&key) };
        if let Some(structure) = change.structure {
            for document in structure.did_open.unwrap_or_default() {
                self.open(document.uri, document.version, document.text);
            }
            for document in structure.did_close.unwrap_or_default() {
                self.close(&document.uri);
                closed.push(document.uri);
            }
            if let Some(notebook) = self.notebooks.get_mut(&key) {
                let array = structure.array;
                let start = (array.start as usize).min(notebook.cells.len());
                let end = start.saturating_add(array.delete_count as usize).min(notebook.cells.len());
                let inserted = array.cells.unwrap_or_default();
                notebook.cells.splice(start..end, inserted.iter().map(cell_of));
            }
        }
        if let Some(notebook) = self.notebooks.get_mut(&key) {
            for cell in change.data.unwrap_or_default() {
                if let Some(known) = notebook.cells.iter_mut().find(|(uri, _)| *uri == cell.document) {
                    *known = cell_of(&cell);
                }
            }
        }
        for content in change.text_content.unwrap_or_default() {
            self.edit(&content.document.uri, content.document.version, content.changes);
        }
        let mut publish = self.analyze_notebook(&key);
        publish.extend(closed);
        publish
    }

    /// Closes a notebook and its cells; returns the cells whose findings to clear.
    pub fn close_notebook(&mut self, params: DidCloseNotebookDocumentParams) -> Vec<Uri> {
        self.notebooks.remove(params.notebook_document.uri.as_str());
        params.cell_text_documents.into_iter().filter(|cell| self.close(&cell.uri)).map(|cell| cell.uri).collect()
    }

    /// The code cells above `cell` in its synced notebook, each followed by a newline
    /// (empty for a document outside any notebook).
    pub fn cells_before(&self, cell: &Uri) -> String {
        let Some(notebook) = self.notebook_of(cell).and_then(|key| self.notebooks.get(&key)) else {
            return String::new();
        };
        let mut out = String::new();
        for (uri, code) in notebook.cells.iter().take_while(|(uri, _)| uri != cell) {
            if let Some(document) = self.get(uri).filter(|_| *code) {
                out.push_str(&document.analysis.text);
                out.push('\n');
            }
        }
        out
    }

    /// The estimate of the synced notebook that holds `cell`, and whether `cell` is its
    /// first open code cell (where the summary lens goes).
    pub fn notebook_estimate(&self, cell: &Uri) -> Option<(&Judged, bool)> {
        let notebook = self.notebooks.get(&self.notebook_of(cell)?)?;
        let first = notebook.cells.iter().find(|(uri, code)| *code && self.get(uri).is_some()).map(|c| &c.0);
        Some((notebook.estimate.as_ref()?, first == Some(cell)))
    }

    /// The synced notebook that holds `cell`.
    pub(super) fn notebook_of(&self, cell: &Uri) -> Option<String> {
        self.notebooks.iter().find(|(_, n)| n.cells.iter().any(|(uri, _)| uri == cell)).map(|(key, _)| key.clone())
    }

    /// Re-reads every synced notebook (after a settings change re-analysed the cells alone).
    pub(super) fn reanalyze_notebooks(&mut self) {
        for key in self.notebooks.keys().cloned().collect::<Vec<_>>() {
            self.analyze_notebook(&key);
        }
    }

    /// Analyses the code cells of one notebook together and gives every open cell its
    /// findings; returns the URIs of its open cells.
    pub(super) fn analyze_notebook(&mut self, key: &str) -> Vec<Uri> {
        let Some(notebook) = self.notebooks.get(key) else { return Vec::new() };
        let open: Vec<Uri> =
            notebook.cells.iter().filter(|(uri, _)| self.get(uri).is_some()).map(|c| c.0.clone()).collect();
        let code: Vec<Uri> = notebook
            .cells
            .iter()
            .filter(|(uri, code)| *code && self.get(uri).is_some())
            .map(|(uri, _)| uri.clone())
            .collect();
        let sources: Vec<&str> =
            code.iter().filter_map(|uri| self.get(uri)).map(|d| d.analysis.text.as_str()).collect();
        // Read as a notebook whatever the URI's file name says (`untitled:Untitled-1`).
        let mut path = uri_to_path(&notebook.uri);
        if path.extension().is_none_or(|e| !e.eq_ignore_ascii_case("ipynb")) {
            path.as_mut_os_string().push(".ipynb");
        }
        let text = notebook_json(&sources);
        let options = self.analysis_options(&path);
        let headroom = options.settings.with_modeline(&text).headroom;
        let analysis = analyze_text(&path, text, &options);
        let cells = cell_sources(&analysis.text);
        let mut found: HashMap<usize, Vec<Diagnostic>> = HashMap::new();
        for diagnostic in analysis.diagnostics.iter().filter(|d| self.options.reports(d)) {
            let Some((index, cell)) = cells.iter().enumerate().find(|(_, c)| c.span_of(diagnostic.span).is_some())
            else {
                continue;
            };
            found.entry(index).or_default().extend(in_cell(diagnostic, cell));
        }
        if let Some(notebook) = self.notebooks.get_mut(key) {
            notebook.estimate =
                analysis.estimate.clone().map(|estimate| Judged { estimate, gpu: analysis.gpu.clone(), headroom });
        }
        let encoding = self.encoding();
        for uri in &open {
            let index = code.iter().position(|c| c == uri);
            let Some(document) = self.documents.get_mut(uri.as_str()) else { continue };
            let findings = index.and_then(|i| found.remove(&i)).unwrap_or_default();
            set_findings(document, &findings, encoding);
        }
        open
    }
}

/// Replaces a cell's findings (and its estimate, which alone would be wrong).
fn set_findings(document: &mut OpenDocument, findings: &[Diagnostic], encoding: super::Encoding) {
    let positions = document.positions(encoding);
    let published: Vec<lsp::Diagnostic> =
        findings.iter().map(|d| diagnostics::to_lsp(d, &document.uri, &positions, &[])).collect();
    document.diagnostics = published;
    document.analysis.estimate = None;
}

/// The code cells as a notebook's JSON, one source string per cell.
fn notebook_json(sources: &[&str]) -> String {
    let cells: Vec<_> =
        sources.iter().map(|s| json!({"cell_type": "code", "metadata": {}, "outputs": [], "source": s})).collect();
    json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).to_string()
}

/// A finding of the notebook's JSON moved into one cell: its spans in the cell's text,
/// related places in other cells left out, fixes kept when every edit lies in the cell
/// (their text un-escaped from JSON).
fn in_cell(diagnostic: &Diagnostic, cell: &CellSource) -> Option<Diagnostic> {
    let mut moved = diagnostic.clone();
    moved.span = cell.span_of(diagnostic.span)?;
    moved.related.retain_mut(|r| cell.span_of(r.span).map(|span| r.span = span).is_some());
    moved.fixes = diagnostic.fixes.iter().filter_map(|fix| fix_in_cell(fix, cell)).collect();
    Some(moved)
}

fn fix_in_cell(fix: &Fix, cell: &CellSource) -> Option<Fix> {
    let mut moved = fix.clone();
    for edit in &mut moved.edits {
        edit.span = cell.span_of(edit.span)?;
        edit.content = serde_json::from_str(&format!("\"{}\"", edit.content)).ok()?;
    }
    Some(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::convert::Encoding;

    fn cell_diagnostics(state: &State, uri: &str) -> Vec<(String, lsp::Range, Vec<String>)> {
        let uri: Uri = uri.parse().unwrap();
        let document = state.get(&uri).expect("an open cell");
        document
            .diagnostics
            .iter()
            .map(|d| {
                let (_, data) = diagnostics::ours(d).expect("published by oomlint");
                let edits = data.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.new_text.clone())).collect();
                (data.rule, d.range, edits)
            })
            .collect()
    }

    #[test]
    fn an_untitled_notebook_is_read_as_one_and_fixes_land_in_the_cell() {
        let mut state = State { encoding: Some(Encoding::Utf8), ..State::default() };
        let first = "from transformers import TrainingArguments as T\nSCHEDULE = \"cosine_with_restart\"\n";
        let second = "args = T(output_dir=\"é\", lr_scheduler_type=SCHEDULE)\n";
        let params = serde_json::from_value(json!({
            "notebookDocument": {"uri": "untitled:Untitled-1", "notebookType": "jupyter-notebook", "version": 1,
                "cells": [{"kind": 2, "document": "vscode-notebook-cell:Untitled-1#a"},
                          {"kind": 2, "document": "vscode-notebook-cell:Untitled-1#b"}]},
            "cellTextDocuments": [
                {"uri": "vscode-notebook-cell:Untitled-1#a", "languageId": "python", "version": 1, "text": first},
                {"uri": "vscode-notebook-cell:Untitled-1#b", "languageId": "python", "version": 1, "text": second}
            ]
        }))
        .unwrap();
        assert_eq!(state.open_notebook(params).len(), 2);
        // The invalid value is the constant's literal in the first cell, its fix un-escaped there.
        let on_first = cell_diagnostics(&state, "vscode-notebook-cell:Untitled-1#a");
        assert_eq!(on_first.len(), 1, "{on_first:?}");
        let (rule, range, edits) = &on_first[0];
        assert_eq!(rule, "invalid-value");
        assert_eq!((range.start.line, range.start.character, range.end.character), (1, 11, 32));
        assert_eq!(edits, &["cosine_with_restarts"]);
        assert!(cell_diagnostics(&state, "vscode-notebook-cell:Untitled-1#b").is_empty());
        let cell: Uri = "vscode-notebook-cell:Untitled-1#b".parse().unwrap();
        assert_eq!(state.cells_before(&cell), format!("{first}\n"));
    }
}
