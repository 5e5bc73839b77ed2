//! `oomlint server`: the language server over stdio.

use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct ServerArgs {
    /// Speak over stdin/stdout (the only transport; accepted because editors pass it).
    #[arg(long = "stdio")]
    _stdio: bool,
}

pub fn run(_: &ServerArgs) -> ExitCode {
    crate::lsp::run_stdio()
}
