//! The `mesh-adopt` command: parses arguments, drives the runtime and prints what happened.
//!
//! [`cli`] parses the command line and hands each command to its module under [`commands`],
//! where a command with more work than its one file keeps that work in a directory of its
//! own: `commands/build/` (a module's source located, built by its language's toolchain,
//! placed and pinned) and `commands/new/` (the module written from the templates in
//! `commands/new/templates/`), with the language both name in `commands/language.rs`.
//! [`args`] holds the arguments several commands share, [`session`] and [`interrupts`] what
//! the commands that run plugins share (the guards every run is made under, and the run
//! driven to its report), [`overwrite`] the refusal to write over a run's inputs, [`output`]
//! how anything is shown, and [`exit`] the statuses a command ends with.

// The runtime's typed errors are built once, on a path that has failed: their size costs
// nothing worth a box.
#![allow(clippy::result_large_err)]

mod args;
mod cli;
mod commands;
mod exit;
mod interrupts;
mod output;
mod overwrite;
mod session;

/// The one place an [`exit::ExitStatus`] becomes the process's exit code.
fn main() -> std::process::ExitCode {
    cli::main().into()
}
