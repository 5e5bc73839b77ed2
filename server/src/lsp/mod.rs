//! `oomlint server`: the language server, over stdio, on tower-lsp-server.
//!
//! A thin layer over the analysis core: every open document is analysed on open and on
//! every change (before the handler's first `.await`, under one lock, so edits are never
//! reordered) and its findings are published with the document's version. Hovers, code
//! actions, completion and the summary code lens read the stored analysis; nothing is
//! linted twice for one version. Jupyter notebooks are synced as notebooks
//! (`notebookDocument/*`): their code cells are analysed together and each cell gets the
//! findings that lie in it.

mod actions;
mod completion;
mod convert;
mod diagnostics;
mod framing;
mod locate;
mod options;
mod state;

use convert::Encoding;
use options::ClientOptions;
use serde_json::{json, Value};
use state::State;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

/// The command a summary code lens runs; also callable as `workspace/executeCommand`
/// with the document URI, answering the estimate as Markdown and JSON.
pub const SHOW_ESTIMATE: &str = "oomlint.showEstimate";

/// Files whose change alters how open documents are analysed: the project settings
/// (`settings::CONFIG_FILES`) and the dependency files version pins are read from
/// (`versions`). The server asks the client to watch them.
const PROJECT_FILES: [&str; 8] = [
    "**/oomlint.toml",
    "**/.oomlint.toml",
    "**/pyproject.toml",
    "**/requirements*.txt",
    "**/setup.cfg",
    "**/setup.py",
    "**/uv.lock",
    "**/poetry.lock",
];

/// The language server: the client handle and the state every handler shares.
pub struct Backend {
    client: Client,
    state: Mutex<State>,
    /// Set by `shutdown`; read after `exit` for the exit status.
    shut_down: Arc<AtomicBool>,
}

impl Backend {
    fn new(client: Client, shut_down: Arc<AtomicBool>) -> Self {
        Self { client, state: Mutex::new(State::new(crate::project::Project::from_environment())), shut_down }
    }

    /// The state; a handler that panicked while holding it does not poison the session.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Publishes the current findings of `uri` (the latest version, whichever handler asks).
    async fn publish(&self, uri: Uri) {
        let current = self.state().get(&uri).map(|d| (d.diagnostics.clone(), d.version));
        match current {
            Some((diagnostics, version)) => self.client.publish_diagnostics(uri, diagnostics, Some(version)).await,
            None => self.client.publish_diagnostics(uri, Vec::new(), None).await,
        }
    }

    /// Answers a frame [`framing`] found malformed with the JSON-RPC error it calls for.
    async fn invalid_message(&self, params: Value) -> Result<()> {
        Err(match params["kind"].as_str() {
            Some("parse") => tower_lsp_server::jsonrpc::Error::parse_error(),
            _ => tower_lsp_server::jsonrpc::Error::invalid_request(),
        })
    }

    /// Publishes every open document again and refreshes the summary lenses, after a
    /// change that may alter any analysis.
    async fn republish(&self, uris: Vec<Uri>) {
        self.show_messages().await;
        for uri in uris {
            self.publish(uri).await;
        }
        let refresh = self.state().code_lens_refresh;
        if refresh {
            let _ = self.client.code_lens_refresh().await;
        }
    }

    /// Shows the warnings the state collected (bad settings, unknown GPU names).
    async fn show_messages(&self) {
        let messages = self.state().take_messages();
        for message in messages {
            self.client.show_message(MessageType::WARNING, message).await;
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = Encoding::negotiate(&params.capabilities);
        let workspace = params.capabilities.workspace.as_ref();
        let refresh = workspace.and_then(|w| w.code_lens.as_ref());
        let watch = workspace.and_then(|w| w.did_change_watched_files.as_ref());
        let mut state = self.state();
        state.encoding = Some(encoding);
        state.code_lens_refresh = refresh.and_then(|c| c.refresh_support).unwrap_or(false);
        state.watches_files = watch.and_then(|w| w.dynamic_registration).unwrap_or(false);
        state.configure(ClientOptions::from_json(params.initialization_options.as_ref()));
        drop(state);
        Ok(InitializeResult {
            capabilities: capabilities(encoding),
            server_info: Some(ServerInfo { name: "oomlint".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let watches = self.state().watches_files;
        if watches {
            let watchers = PROJECT_FILES
                .iter()
                .map(|glob| FileSystemWatcher { glob_pattern: GlobPattern::String(glob.to_string()), kind: None })
                .collect();
            let registration = Registration {
                id: "oomlint-project-files".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(DidChangeWatchedFilesRegistrationOptions { watchers }).ok(),
            };
            // A client that refuses leaves the settings as first read, as without watching.
            let _ = self.client.register_capability(vec![registration]).await;
        }
        self.show_messages().await;
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        let uris = {
            let mut state = self.state();
            state.reread_project_files();
            state.uris()
        };
        self.republish(uris).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        self.state().open(document.uri.clone(), document.version, document.text);
        self.publish(document.uri).await;
        self.show_messages().await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let document = params.text_document;
        let known = self.state().change(&document.uri, document.version, params.content_changes).is_some();
        if known {
            self.publish(document.uri).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if self.state().close(&uri) {
            self.publish(uri).await;
        }
    }

    async fn notebook_did_open(&self, params: DidOpenNotebookDocumentParams) {
        let uris = self.state().open_notebook(params);
        for uri in uris {
            self.publish(uri).await;
        }
        self.show_messages().await;
    }

    async fn notebook_did_change(&self, params: DidChangeNotebookDocumentParams) {
        let uris = self.state().change_notebook(params);
        for uri in uris {
            self.publish(uri).await;
        }
    }

    async fn notebook_did_close(&self, params: DidCloseNotebookDocumentParams) {
        let uris = self.state().close_notebook(params);
        for uri in uris {
            self.publish(uri).await;
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if !ClientOptions::present_in(&params.settings) {
            return;
        }
        let uris = {
            let mut state = self.state();
            state.configure(ClientOptions::from_json(Some(&params.settings)));
            state.uris()
        };
        self.republish(uris).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let state = self.state();
        let Some(document) = state.get(&at.text_document.uri) else { return Ok(None) };
        let positions = document.positions(state.encoding());
        let offset = positions.offset(at.position);
        let hovered = crate::hover::Hovered {
            analysis: &document.analysis,
            options: &document.options,
            headroom: document.headroom,
        };
        let found = crate::hover::hover(&hovered, offset);
        Ok(found.map(|(markdown, span)| Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: markdown }),
            range: Some(positions.range(span)),
        }))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let state = self.state();
        let Some(document) = state.get(&params.text_document.uri) else { return Ok(None) };
        let positions = document.positions(state.encoding());
        let actions = actions::code_actions(document, &positions, params.range, &params.context);
        Ok(Some(actions))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        let state = self.state();
        let Some(document) = state.get(&at.text_document.uri) else { return Ok(None) };
        let positions = document.positions(state.encoding());
        let before = state.cells_before(&at.text_document.uri);
        let items = completion::complete(document, &positions, positions.offset(at.position), &before);
        Ok(Some(CompletionResponse::Array(items)))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let state = self.state();
        let uri = &params.text_document.uri;
        let Some(document) = state.get(uri) else { return Ok(None) };
        // A notebook's summary goes on its first code cell.
        let title = match (&document.analysis.estimate, state.notebook_estimate(uri)) {
            (_, Some((judged, true))) => {
                crate::estimate::breakdown::summary(&judged.estimate, judged.gpu.as_ref(), judged.headroom)
            }
            (Some(estimate), None) => {
                crate::estimate::breakdown::summary(estimate, document.analysis.gpu.as_ref(), document.headroom)
            }
            _ => return Ok(Some(Vec::new())),
        };
        Ok(Some(vec![CodeLens {
            range: Range::default(),
            command: Some(Command {
                title,
                command: SHOW_ESTIMATE.into(),
                arguments: Some(vec![json!(document.uri.as_str())]),
            }),
            data: None,
        }]))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        if params.command != SHOW_ESTIMATE {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                "unknown command {}",
                params.command
            )));
        }
        let uri = params.arguments.first().and_then(Value::as_str).and_then(|s| s.parse::<Uri>().ok());
        let Some(uri) = uri else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params("expected the document URI"));
        };
        let state = self.state();
        let Some(document) = state.get(&uri) else { return Ok(None) };
        let analysis = &document.analysis;
        let judged = match state.notebook_estimate(&uri) {
            Some((judged, _)) => Some((&judged.estimate, judged.gpu.as_ref(), judged.headroom)),
            None => analysis.estimate.as_ref().map(|e| (e, analysis.gpu.as_ref(), document.headroom)),
        };
        Ok(judged.map(|(estimate, gpu, headroom)| {
            json!({
                "summary": crate::estimate::breakdown::summary(estimate, gpu, headroom),
                "markdown": crate::estimate::breakdown::markdown(estimate, gpu, headroom),
                "estimate": estimate,
            })
        }))
    }
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            ..TextDocumentSyncOptions::default()
        })),
        // Jupyter notebooks' Python cells, synced as notebooks so that all cells are read as one program.
        notebook_document_sync: Some(OneOf::Left(NotebookDocumentSyncOptions {
            notebook_selector: vec![NotebookSelector::ByNotebook {
                notebook: Notebook::String("jupyter-notebook".into()),
                cells: Some(vec![NotebookCellSelector { language: "python".into() }]),
            }],
            save: None,
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions::default()),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::REFACTOR_REWRITE,
                actions::fix_all_kind(),
            ]),
            ..CodeActionOptions::default()
        })),
        code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![SHOW_ESTIMATE.into()],
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// Serves one session over `input`/`output` (stdio, or pipes in tests and fuzzing) until
/// `exit` or the end of input; returns whether `shutdown` was requested first. Must run
/// inside a tokio runtime (the input is read by a spawned task).
pub async fn serve<I, O>(input: I, output: O) -> bool
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin,
{
    let shut_down = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&shut_down);
    let (service, socket) = LspService::build(move |client| Backend::new(client, flag))
        .custom_method(framing::INVALID_MESSAGE, Backend::invalid_message)
        .finish();
    let (framed, forward) = tokio::io::duplex(1 << 16);
    tokio::spawn(pump(input, forward));
    Server::new(framed, output, socket).serve(service).await;
    shut_down.load(Ordering::SeqCst)
}

/// Copies `input` to the server through [`framing::Framer`]; closing `forward` at the
/// end of input ends the session.
async fn pump(mut input: impl tokio::io::AsyncRead + Unpin, mut forward: tokio::io::DuplexStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut framer = framing::Framer::default();
    let mut buffer = vec![0; 1 << 16];
    while let Ok(read @ 1..) = input.read(&mut buffer).await {
        for frame in framer.push(&buffer[..read]) {
            if forward.write_all(&frame).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watched_files_are_those_settings_and_pins_are_read_from() {
        let mut globs = globset::GlobSetBuilder::new();
        for glob in PROJECT_FILES {
            globs.add(globset::Glob::new(glob).unwrap());
        }
        let watched = globs.build().unwrap();
        let names = [
            "oomlint.toml",
            ".oomlint.toml",
            "pyproject.toml",
            "requirements.txt",
            "requirements-dev.txt",
            "requirements.in",
            "setup.cfg",
            "setup.py",
            "uv.lock",
            "poetry.lock",
            "Pipfile.lock",
            "config.toml",
            "train.yaml",
        ];
        for name in names {
            let read = crate::settings::CONFIG_FILES.contains(&name) || crate::versions::is_dependency_file(name);
            assert_eq!(watched.is_match(format!("project/configs/{name}")), read, "{name}");
        }
    }
}
