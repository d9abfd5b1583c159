//! The `mesh-adopt` command: parses arguments, drives the runtime and prints what happened.

mod build;
mod cli;
mod language;
mod output;
mod pin;
mod scaffold;
mod templates;

fn main() -> std::process::ExitCode {
    cli::main()
}
