//! The `oomlint` command line: a thin leaf over the analysis core.

mod check;
mod estimate;
mod explain;
mod gpu;
mod gpus;
mod levers;
mod plan;
mod rules;
mod server;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit status for usage and I/O errors.
pub const USAGE_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "oomlint",
    version,
    about = "Lint LLM training configs and predict their peak GPU memory before launch"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check config files or directories (walked recursively, honouring .gitignore).
    Check(check::CheckArgs),
    /// Estimate the peak GPU memory of one config, per component, with levers.
    Estimate(estimate::EstimateArgs),
    /// Explain a PyTorch CUDA out-of-memory message, a vLLM start-up memory error or a Ray
    /// OOM kill in a log (a file or `-` for stdin).
    Explain(explain::ExplainArgs),
    /// List the local GPUs through the NVIDIA driver (NVML) or AMD's ROCm SMI library.
    Gpus(gpus::GpusArgs),
    /// Print the normalized training plan of one config.
    Plan(plan::PlanArgs),
    /// List every rule.
    Rules,
    /// Print one rule's documentation.
    Rule {
        /// Rule code (OOM101) or name (litgpt-quantize-mixed-precision).
        rule: String,
    },
    /// Run the language server over stdio (diagnostics, hovers, fixes, completion).
    Server(server::ServerArgs),
}

/// Writes to stdout; a closed pipe (`oomlint … | head`) is not an error.
pub fn print(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Prints a one-line usage/I-O error and returns exit code 2.
pub fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("oomlint: error: {message}");
    ExitCode::from(USAGE_ERROR)
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { USAGE_ERROR } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Estimate(args) => estimate::run(&args),
        Command::Explain(args) => explain::run_with(&args, &levers::EstimatorLevers),
        Command::Gpus(args) => gpus::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Rules => rules::list(),
        Command::Rule { rule } => rules::show(&rule),
        Command::Server(args) => server::run(&args),
    }
}
