//! The `mesh-adopt` command: parses arguments, drives the runtime and prints what happened.
//!
//! [`cli`] parses the command line and hands each command to its module under [`commands`];
//! [`args`] holds the arguments several commands share, [`session`] and [`interrupts`] what
//! the commands that run plugins share, [`output`] how anything is shown, and [`exit`] the
//! statuses a command ends with. [`build`], [`scaffold`] and [`templates`] are the work of
//! `build` and `new`, [`language`] and [`pin`] what those two share.

mod args;
mod build;
mod cli;
mod commands;
mod exit;
mod interrupts;
mod language;
mod output;
mod overwrite;
mod pin;
mod scaffold;
mod session;
mod templates;

/// The one place an [`exit::ExitStatus`] becomes the process's exit code.
fn main() -> std::process::ExitCode {
    cli::main().into()
}
