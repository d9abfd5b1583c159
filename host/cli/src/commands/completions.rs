//! `mesh-adopt completions SHELL`: the shell's completion script for the command, made from
//! the definitions the command line is parsed with, so it offers every command, option and
//! value the program takes and nothing it does not.

use anyhow::{Context as _, Result};
use clap::Args;
use clap_complete::Shell;

use crate::exit::ExitStatus;

/// The arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    shell: Shell,
}

/// The program's name as a shell completes it: the name `cargo install` gives the binary.
pub const PROGRAM: &str = "mesh-adopt";

/// The name bash's script is made under. clap_complete spells the states of a program whose
/// name holds a hyphen two ways in a bash script (`mesh__adopt__subcmd__run` where it finds
/// the command typed, `mesh__subcmd__adopt__subcmd__run` where it lists that command's
/// options), so no command's option would ever complete; the script is made for a name
/// without one, then bound to the program's ([`bound_to_program`]).
const BASH_NAME: &str = "mesh_adopt";

/// Prints the completion script of `command` (the whole command line's definition) for the
/// shell asked for, on stdout.
pub fn completions(args: CompletionsArgs, mut command: clap::Command) -> Result<ExitStatus> {
    let name = if args.shell == Shell::Bash { BASH_NAME } else { PROGRAM };
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    let mut script = String::from_utf8(script).context("the completion script is not UTF-8")?;
    if args.shell == Shell::Bash {
        script = bound_to_program(&script);
    }
    crate::output::emit(script.strip_suffix('\n').unwrap_or(&script));
    Ok(ExitStatus::Success)
}

/// A bash script made for [`BASH_NAME`], completing [`PROGRAM`]: its `complete` lines name
/// the program. Its function finds the program's words by the name bash hands it, whatever
/// that is, so nothing else of it changes.
fn bound_to_program(script: &str) -> String {
    let mut bound: String = script
        .lines()
        .map(|line| match line.trim_start().starts_with("complete -F ") {
            true => line.strip_suffix(BASH_NAME).map_or_else(|| line.to_string(), |head| format!("{head}{PROGRAM}")),
            false => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    bound.push('\n');
    bound
}
