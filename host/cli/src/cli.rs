//! The `mesh-adopt` command line: the commands clap parses, each handed to its module under
//! [`crate::commands`], and how the program ends: an error said (as a JSON line too with
//! `--json`), stdout finished, and the exit status returned for `main`.

use std::time::Duration;

use anyhow::Result;
use clap::{CommandFactory as _, Parser, Subcommand};

use crate::commands::build::{self, BuildArgs};
use crate::commands::cache::{self, CacheArgs};
use crate::commands::check::{self, CheckArgs};
use crate::commands::completions::{self, CompletionsArgs};
use crate::commands::inspect::{self, InspectArgs};
use crate::commands::manpage::{self, ManpageArgs};
use crate::commands::new::{self, NewArgs};
use crate::commands::replay::{self, ReplayArgs};
use crate::commands::run::{self, RunArgs};
use crate::commands::test::{self, TestArgs};
use crate::commands::unlock::{self, UnlockArgs};
use crate::exit::ExitStatus;
use mesh_adopt_runtime::events;

/// Adopt what genesis raised into catalogue modules, each by its own WebAssembly plugin.
#[derive(Debug, Parser)]
#[command(name = "mesh-adopt", version, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    command: Command,
}

impl Cli {
    /// Whether the command speaks JSON on stdout, so an error it stops on is a line too.
    fn json(&self) -> bool {
        match &self.command {
            Command::Check(CheckArgs { phase, .. }) | Command::Run(RunArgs { phase, .. }) => phase.shown.json,
            Command::Replay(args) => args.shown.json,
            Command::Inspect(_)
            | Command::Test(_)
            | Command::New(_)
            | Command::Build(_)
            | Command::Cache(_)
            | Command::Unlock(_)
            | Command::Completions(_)
            | Command::Manpage(_) => false,
        }
    }
}

/// The commands, in the order `--help` lists them.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run each module's `check`: what adopting it would do, changing nothing.
    Check(CheckArgs),
    /// Check and adopt each module in order, stopping at the first that does not succeed.
    Run(RunArgs),
    /// Show what a plugin targets, its digest, size, grants and imports, without running it.
    Inspect(InspectArgs),
    /// Run plugins' scenarios on the simulated mesh: a line each, a diff on failure.
    Test(TestArgs),
    /// Start a new module in a catalogue: its manifest, its plugin's source and scenarios
    /// that pass as written.
    New(NewArgs),
    /// Build each module's plugin from the source its manifest names, check it loads, place
    /// it beside the manifest and pin its digest there.
    Build(BuildArgs),
    /// Keep the compile cache: make optimised code ahead of runs, or hold it to a size.
    Cache(CacheArgs),
    /// Answer a plugin's calls from a `--record` file and report the first call where it
    /// no longer does what the recorded run did.
    Replay(ReplayArgs),
    /// Break the live mesh's lock a run killed outright left, by the id a refused run named;
    /// or clear a damaged lock file of this machine's (`--damaged FILE`).
    Unlock(UnlockArgs),
    /// Print the completion script for a shell: bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Write the manual pages into a directory: mesh-adopt.1, and one a command
    /// (mesh-adopt-run.1 and the others).
    Manpage(ManpageArgs),
}

/// Runs the command line and says how it ended: 0 when every module succeeded, 1 when one
/// was refused or an invariant broke, 2 when the run could not be made at all, 130 when
/// interrupted.
pub fn main() -> ExitStatus {
    let cli = Cli::try_parse().unwrap_or_else(|error| with_plan_tip(error).exit());
    let json = cli.json();
    let report_error = |error: &anyhow::Error| report_error(error, json);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return report_error(&anyhow::anyhow!("failed to start the async runtime: {e}")),
    };
    let status = match runtime.block_on(execute(cli)) {
        Ok(ExitStatus::Interrupted) => {
            crate::output::finish_stdout_within(Duration::from_secs(1));
            return ExitStatus::Interrupted;
        }
        Ok(status) => status,
        Err(error) => report_error(&error),
    };
    // The run is over and recorded; what is left is handing stdout its last lines, which
    // waits on the reader. An interrupt then ends the program as it would any other.
    // SAFETY: restoring the default disposition of two signals; no memory is involved.
    unsafe {
        use nix::sys::signal::{SigHandler, Signal, signal};
        let _ = signal(Signal::SIGINT, SigHandler::SigDfl);
        let _ = signal(Signal::SIGTERM, SigHandler::SigDfl);
    }
    crate::output::finish_stdout();
    status
}

/// clap's refusal of an option the command does not take, where the option is `--out` or
/// `--plan`, with a tip naming the command that takes it. Each is one command's own (`check
/// --out` saves plans, `run --plan` applies them), and clap's tip for it would be the nearest
/// spelling among the options the command does take (`--foundation` for `--out`), which
/// misleads; its usage line would show that option too. Every other error is clap's as it is.
fn with_plan_tip(error: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let Some(ContextValue::String(given)) = error.get(ContextKind::InvalidArg) else { return error };
    let tip = match given.split_once('=').map_or(given.as_str(), |(option, _)| option) {
        "--out" => {
            "--out writes a plan, which `check` makes: `mesh-adopt check --out PLAN`, then `mesh-adopt run --plan PLAN`"
        }
        "--plan" => "--plan applies a saved plan, which `run` does: `mesh-adopt run --plan PLAN`",
        _ => return error,
    };
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let mut cli = Cli::command();
    cli.build();
    // The command's usage as `--help` shows it; the top level takes no option before it.
    let typed = std::env::args().nth(1).unwrap_or_default();
    let Some(command) = cli.find_subcommand(&typed) else { return error };
    let mut refusal = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(command);
    for (kind, value) in error.context() {
        if !matches!(kind, ContextKind::SuggestedArg | ContextKind::Suggested | ContextKind::Usage) {
            refusal.insert(kind, value.clone());
        }
    }
    refusal.insert(ContextKind::Suggested, ContextValue::StyledStrs(vec![tip.into()]));
    refusal.insert(ContextKind::Usage, ContextValue::StyledStr(command.clone().render_usage()));
    refusal
}

/// Says on stderr what stopped the command, with its causes, and with `--json` as an `error`
/// line too: an error before or outside a run is an input that could not be used.
fn report_error(error: &anyhow::Error, json: bool) -> ExitStatus {
    let mut text = format!("error: {error}");
    for cause in error.chain().skip(1) {
        text.push_str(&format!("\n  Caused by: {cause}"));
    }
    // What mends it, where a typed error of the runtime's or the live mesh's says.
    let remedy = crate::output::remedy::of_error(error);
    if let Some(remedy) = &remedy {
        text.push_str(&format!("\n  remedy: {}", crate::output::remedy::words(remedy)));
    }
    crate::errln!("{text}");
    if json {
        // A program reading `--json` learns of the error from the stream, not only stderr.
        let line = events::Event::Error(events::ErrorEvent {
            schema: events::SCHEMA,
            message: error.to_string(),
            causes: error.chain().skip(1).map(|c| c.to_string()).collect(),
            exit: ExitStatus::Unusable.code(),
            remedy,
        });
        let line = serde_json::to_string(&line).expect("an event serialises");
        crate::output::emit(&mesh_adopt_runtime::record::line_bound::bounded(&line));
    }
    ExitStatus::Unusable
}

/// Runs one command; the exit status is the outcome's (see [`mesh_adopt_runtime::RunReport::exit_code`]).
async fn execute(cli: Cli) -> Result<ExitStatus> {
    // A command that runs plugins takes SIGINT and SIGTERM over itself, to stop its run and
    // close its record; every other has them taken over here, so that either ends it with
    // 130 too (its toolchains ended, said once), whatever it was doing.
    let answers_itself = matches!(cli.command, Command::Check(_) | Command::Run(_) | Command::Replay(_));
    let _interrupts = (!answers_itself).then(crate::interrupts::Interrupts::take_over);
    let result = match cli.command {
        Command::Check(args) => check::check(args).await,
        Command::Run(args) => run::run(args).await,
        Command::Inspect(args) => inspect::inspect(args),
        Command::Test(args) => test::test(args).await,
        Command::New(args) => new::new(args),
        Command::Build(args) => build::build(args),
        Command::Cache(args) => cache::cache(args),
        Command::Replay(args) => replay::replay(args).await,
        Command::Unlock(args) => unlock::unlock(args).await,
        Command::Completions(args) => completions::completions(args, Cli::command()),
        Command::Manpage(args) => manpage::manpage(args, Cli::command()),
    };
    match crate::interrupts::received() {
        // What the command returned after an interrupt (a build whose cargo it ended fails)
        // is not its outcome: the interrupt is.
        Some(signal) if !answers_itself => {
            crate::interrupts::say_interrupted(signal);
            Ok(ExitStatus::Interrupted)
        }
        _ => result,
    }
}
