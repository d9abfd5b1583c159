//! The `mesh-adopt` command: parses arguments, drives the runtime and prints what happened.

mod build;
mod cli;
mod exit;
mod language;
mod output;
mod pin;
mod scaffold;
mod templates;

/// The one place an [`exit::ExitStatus`] becomes the process's exit code.
fn main() -> std::process::ExitCode {
    cli::main().into()
}
