//! The `mesh-adopt` command: parses arguments, drives the runtime and prints what happened.

mod cli;
mod output;
mod scaffold;

fn main() -> std::process::ExitCode {
    cli::main()
}
