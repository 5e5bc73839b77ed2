//! `oomlint server`: the language server over stdio.

use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct ServerArgs {
    /// Speak over stdin/stdout (the only transport; accepted because editors pass it).
    #[arg(long = "stdio")]
    _stdio: bool,
}

/// Serves LSP over stdin/stdout until `exit` (or the input closes). Exits 0 after a
/// `shutdown` request, 1 otherwise, as the protocol asks.
pub fn run(_: &ServerArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(e) => return super::usage_error(format!("cannot start the server runtime: {e}")),
    };
    let shut_down = runtime.block_on(crate::lsp::serve(tokio::io::stdin(), tokio::io::stdout()));
    // The stdin reader may still wait on a client that keeps stdin open after `exit`.
    runtime.shutdown_background();
    if shut_down {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
