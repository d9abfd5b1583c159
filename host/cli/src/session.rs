//! One session for each command that runs plugins (`check`, `run`, `replay`), which guards,
//! opens and drives its run, so that no command writes the guards itself.
//!
//! Its steps, in the order a command takes them: SIGINT and SIGTERM taken over and every
//! credential learnt before anything is written ([`Session::guard`]); the site read and the
//! output open, its record closed by an interrupt that ends the program ([`Guarded::open`]);
//! the run's options and mesh refused when they hold a credential's value
//! ([`Session::clear`]); and the run driven to its report, or stopped by an interrupt
//! ([`Session::drive`]). What a command does between these steps is its own.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use mesh_adopt_live::LiveConfig;
use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::RunOptions;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::record::transcript::Transcript;
use mesh_adopt_runtime::{Catalogue, Foundation};
use mesh_adopt_runtime::{Mode, Run, RunBuilder, RunReport};

use crate::args::SiteArgs;
use crate::interrupts::Interrupts;
use crate::output::Output;

/// A command that runs plugins, guarded from its start and not yet open: the interrupts
/// answered and the credentials known, so that nothing it writes can be cut off half-way or
/// hold a credential's value.
pub struct Guarded {
    /// SIGINT and SIGTERM, taken over.
    interrupts: Interrupts,
    /// The genesis credentials, the same the last redaction guards.
    credentials: Arc<Credentials>,
}

/// A run's site and output, open: what a command builds its run from.
pub struct Session {
    /// The catalogue, known to be a directory.
    pub catalogue: Catalogue,
    /// The foundation bundle, read.
    pub foundation: Foundation,
    /// The genesis credentials, the same the last redaction guards.
    pub credentials: Arc<Credentials>,
    /// Where the run is shown and recorded.
    pub output: Arc<Output>,
    /// The run's events, each reaching `output` as it happens.
    pub transcript: Arc<Transcript>,
    /// SIGINT and SIGTERM, answered by stopping the run.
    interrupts: Interrupts,
}

/// A run's options and mesh, neither holding a credential's value: the only inputs a
/// session makes a run from.
pub struct Cleared {
    /// The run's options.
    options: RunOptions,
    /// The mesh it acts on.
    mesh: Arc<dyn Mesh>,
}

impl Cleared {
    /// The run's options.
    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    /// The mesh the run acts on.
    pub fn mesh(&self) -> &dyn Mesh {
        self.mesh.as_ref()
    }
}

impl Session {
    /// The first step of a command that runs plugins, before anything is written: SIGINT and
    /// SIGTERM taken over (neither kills the program half-way from here), and every
    /// credential's value learnt, so that no line the program writes can hold one.
    pub fn guard(site: &SiteArgs) -> Result<Guarded> {
        let interrupts = Interrupts::take_over();
        let credentials = guard_credentials(site)?;
        let arguments: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
        refuse_values_in(&arguments, &credentials)?;
        Ok(Guarded { interrupts, credentials })
    }

    /// Refuses options (or a mesh's description) that hold a credential's value whole, before
    /// any of it is shown or recorded: a run would have to print it, and a credential is never
    /// shown. The error names the option and the credential, never the value.
    pub fn clear(&self, options: RunOptions, mesh: Arc<dyn Mesh>) -> Result<Cleared> {
        let shown = [
            ("--node", options.node.clone(), "a node's name is shown in every plan and line that names it"),
            (
                "--catalog-source",
                options.source_words(),
                "a builder's own credentials hold any password the repository needs, never its URL or ref",
            ),
            ("the mesh's description", mesh.summary(), "the description is shown at the head of every run"),
        ];
        for (what, text, why) in shown {
            if let (_, Some(name)) = self.credentials.redact(text) {
                bail!(
                    "{what} holds the value of the genesis credential `{name}`, which is never shown: {why}. \
                     Take the value out of {what}; if the credential's value is a word the run uses anyway, it is \
                     no secret: give the credential a value of its own"
                );
            }
        }
        Ok(Cleared { options, mesh })
    }

    /// Refuses a live mesh's configuration, read from `from` (`None`: the built-in one), any
    /// of whose commands or other texts holds a credential's value whole: every command it
    /// names reaches a process's arguments, and is shown in that command's errors. The error
    /// names the file, the key and the credential, never the value.
    pub fn clear_config(&self, config: &LiveConfig, from: Option<&Path>) -> Result<()> {
        let file = from.map_or("the built-in configuration".to_string(), |path| format!("`{}`", path.display()));
        for (key, text) in config.texts() {
            if let (_, Some(name)) = self.credentials.redact(text) {
                bail!(
                    "`{key}` in {file} holds the value of the genesis credential `{name}`, which is never shown: \
                     what the configuration gives a command reaches its arguments and is shown in its errors. Take \
                     the value out of `{key}`; if the credential's value is a word the run uses anyway, it is no \
                     secret: give the credential a value of its own"
                );
            }
        }
        Ok(())
    }

    /// A run of this site's catalogue on the cleared mesh and options, recorded to the
    /// session's output.
    pub fn run<'a>(&'a self, host: &'a PluginHost, cleared: Cleared) -> RunBuilder<'a> {
        Run::builder(host, &self.catalogue, &self.foundation, cleared.mesh)
            .credentials(self.credentials.clone())
            .record(self.transcript.clone())
            .events(self.output.clone())
            .options(cleared.options)
    }

    /// Runs `modules` in `mode` to its report, or, when SIGINT or SIGTERM comes first, stops
    /// it and says so on the output and in the record: then there is no report.
    pub async fn drive(&self, run: &Run<'_>, modules: &[String], mode: Mode) -> Option<RunReport> {
        tokio::select! {
            report = run.run(modules, mode) => Some(report),
            signal = self.interrupts.next() => {
                // Dropping the run stops the plugin in its sandbox and ends every control-plane
                // process it had started.
                self.output.interrupted(signal, &self.transcript);
                None
            }
        }
    }
}

impl Guarded {
    /// Reads the site's catalogue and foundation and opens the session on `output`; every
    /// event the run records reaches `output` as it happens, and an interrupt that has to end
    /// the program itself closes that record first.
    pub fn open(self, site: &SiteArgs, output: Output) -> Result<Session> {
        let catalogue = site.catalogue()?;
        let foundation = site.foundation()?;
        let output = Arc::new(output);
        let observer = output.clone();
        let transcript = Arc::new(Transcript::observed(Box::new(move |event| observer.observe(event))));
        let Guarded { interrupts, credentials } = self;
        interrupts.close_with(&output, &transcript);
        Ok(Session { catalogue, foundation, credentials, output, transcript, interrupts })
    }
}

/// Learns every credential's value before anything is written, so that no line the program
/// writes can hold one ([`crate::output::redact_with`]); refuses a credentials directory with
/// an entry that cannot be read, whose value could then not be kept from being shown. The
/// credentials returned are the session's: one reading serves the guard and the run.
fn guard_credentials(site: &SiteArgs) -> Result<Arc<Credentials>> {
    let credentials = Arc::new(site.credentials()?);
    crate::output::redact_with(credentials.clone());
    if let Some((name, why)) = credentials.unreadable().into_iter().next() {
        bail!(
            "the credentials directory holds `{name}`, which cannot be read as a credential ({why}): its value could \
             not be kept from being shown; make it a regular file of at most 64 KiB, or move it out"
        );
    }
    if let Some((credential, name)) = credentials.value_in_a_name() {
        bail!(
            "the value of the genesis credential `{credential}` is part of the credential name `{name}`, which is \
             shown wherever a value is redacted and asked for by name: the value cannot be kept from being shown; \
             give the credential a value of its own"
        );
    }
    Ok(credentials)
}

/// Refuses a command line any argument of which holds a credential's value whole (by the
/// redactor's own rule), before any lock is taken or command run: the command line names a
/// run's holder in this machine's lock, the mesh's lock and every other operator's `check`,
/// and what an option names (a record's, a plan's or a cache's path) is shown in lines and
/// errors. The error names the option and the credential, never the value.
fn refuse_values_in(arguments: &[String], credentials: &Credentials) -> Result<()> {
    for (at, argument) in arguments.iter().enumerate() {
        // An option's own name is the program's word, not a value an operator gave.
        let value = match argument.strip_prefix("--") {
            Some(option) => option.split_once('=').map_or("", |(_, value)| value),
            None => argument,
        };
        if let (_, Some(name)) = credentials.redact(value.to_string()) {
            let option = option_at(arguments, at);
            bail!(
                "{option} holds the value of the genesis credential `{name}`, which is never shown: a command line \
                 names a run wherever its lock does (this machine's lock, the mesh's, every operator's `check`), \
                 and what an option names is shown in its lines and errors. Take the value out of {option}; if the \
                 credential's value is a word the run uses anyway, it is no secret: give the credential a value of \
                 its own"
            );
        }
    }
    Ok(())
}

/// The option the argument at `at` gives, as the command line names it: `--record` for
/// `--record=FILE` or for the `FILE` after `--record` (an option the parser says takes a
/// value); else the argument's place.
fn option_at(arguments: &[String], at: usize) -> String {
    let argument = &arguments[at];
    if let Some(option) = argument.strip_prefix("--") {
        return format!("--{}", option.split('=').next().unwrap_or(option));
    }
    match at.checked_sub(1).and_then(|before| arguments[before].strip_prefix("--")) {
        Some(option) if takes_a_value(option) => format!("--{option}"),
        _ => format!("argument {} of the command line", at + 1),
    }
}

/// Whether the long option `--{long}` of any command takes a value, as the parser declares it.
fn takes_a_value(long: &str) -> bool {
    use clap::CommandFactory as _;
    let command = crate::cli::Cli::command();
    let arguments: Vec<clap::Arg> = command
        .get_arguments()
        .chain(command.get_subcommands().flat_map(clap::Command::get_arguments))
        .cloned()
        .collect();
    arguments.iter().any(|arg| arg.get_long() == Some(long) && arg.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_named_by_the_option_that_gives_it() {
        let args: Vec<String> = ["run", "--record", "r/x.rec", "--out=p", "postgres", "--json", "nats"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(option_at(&args, 2), "--record");
        assert_eq!(option_at(&args, 3), "--out");
        assert_eq!(option_at(&args, 4), "argument 5 of the command line");
        assert_eq!(option_at(&args, 6), "argument 7 of the command line", "`--json` takes no value");
    }
}
