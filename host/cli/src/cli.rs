//! The `mesh-adopt` command line: parses arguments, runs the library, prints as it goes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::exit::ExitStatus;
use crate::language::Language;
use crate::output::{Output, Style};
use mesh_adopt_live::{CONFIG_FILE, LiveConfig, LiveMesh};
use mesh_adopt_runtime::cache::CompileCache;
use mesh_adopt_runtime::catalogue::{Catalogue, Foundation};
use mesh_adopt_runtime::credentials::Credentials;
use mesh_adopt_runtime::events::{self, CallEvent};
use mesh_adopt_runtime::limits::Limits;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::mesh::replay::{ReplayMesh, read_recording};
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::options::{DEFAULT_NODE, DEFAULT_WAIT, RunOptions, parse_catalog_source, parse_duration};
use mesh_adopt_runtime::plan_file::SavedPlan;
use mesh_adopt_runtime::plan_key::PlanKey;
use mesh_adopt_runtime::run::{Mode, PHASE_THREE, Run, RunBuilder};
use mesh_adopt_runtime::runtime::PluginHost;
use mesh_adopt_runtime::transcript::Transcript;
use mesh_adopt_testkit as scenario;

/// Adopt what genesis raised into catalogue modules, each by its own WebAssembly plugin.
#[derive(Debug, Parser)]
#[command(name = "mesh-adopt", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

impl Cli {
    /// Whether the command speaks JSON on stdout, so an error it stops on is a line too.
    fn json(&self) -> bool {
        match &self.command {
            Command::Check(args) | Command::Run(args) => args.shown.json,
            Command::Replay(args) => args.shown.json,
            Command::Inspect(_) | Command::Test(_) | Command::New(_) | Command::Build(_) => false,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run each module's `check`: what adopting it would do, changing nothing.
    Check(RunArgs),
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
    /// Answer a plugin's calls from a `--record` file and report the first call where it
    /// no longer does what the recorded run did.
    Replay(ReplayArgs),
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// A recording made with `run --record FILE`.
    recording: PathBuf,
    /// A plugin to replay instead of the catalogue's (needs --module when the recording
    /// holds several).
    #[arg(long, value_name = "ADOPT.WASM")]
    plugin: Option<PathBuf>,
    /// The module to replay [default: every module the recording holds, in its order].
    #[arg(long)]
    module: Option<String>,
    #[command(flatten)]
    site: SiteArgs,
    #[command(flatten)]
    shown: ShownArgs,
}

/// How `check`, `run` and `replay` show what happens, and where they keep it.
#[derive(Debug, Args)]
struct ShownArgs {
    /// Also print every host call the plugins make.
    #[arg(long, short)]
    verbose: bool,
    /// Print one JSON object a line instead of text, for programs: the events of
    /// docs/events.md (a replay's end with its verdict).
    #[arg(long)]
    json: bool,
    /// Keep every event (each host call with its result and duration, each line said) in
    /// FILE as JSON lines, written as it goes (docs/events.md); secrets are redacted, and
    /// the file can be replayed.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
}

impl ShownArgs {
    /// The output these options ask for; `real_waits` when waits are real time (a live mesh).
    fn output(&self, real_waits: bool) -> Result<Output> {
        let style = if self.json { Style::Json } else { Style::Human { verbose: self.verbose } };
        Output::new(style, real_waits, self.record.as_deref())
    }
}

#[derive(Debug, Args)]
struct NewArgs {
    /// The module's name, e.g. `object-store`.
    module: String,
    /// The catalogue checkout to add `modules/<module>/` to [default: ./catalogue if there is
    /// one, else the current directory].
    #[arg(long, value_name = "DIR", default_value_os_t = default_catalogue(), hide_default_value = true)]
    catalogue: PathBuf,
    /// Start from the adopt-in-place rules for the foundation bundle's container BUNDLE-ID:
    /// matched by name and image, its credential handed over, waited for after the push.
    #[arg(long, value_name = "BUNDLE-ID")]
    adopts: Option<String>,
    /// Where the plugin takes the SDK from: `path:DIR`, `git:URL`, or a version [default: the
    /// SDK this mesh-adopt was built with, by path, when it is on this machine].
    #[arg(long, value_name = "SPEC")]
    sdk: Option<String>,
    /// The plugin's language: `rust` (a crate), `js` (an npm package, built by
    /// componentize-js) or `python` (a project, built by componentize-py).
    #[arg(long, value_name = "LANG", value_enum, default_value_t = Language::Rust, hide_possible_values = true)]
    lang: Language,
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// Modules to build [default: every module whose manifest names its source].
    modules: Vec<String>,
    /// The catalogue checkout [default: ./catalogue if there is one, else the current
    /// directory].
    #[arg(long, value_name = "DIR", default_value_os_t = default_catalogue(), hide_default_value = true)]
    catalogue: PathBuf,
    /// Place nothing: build, and exit 1 if a placed plugin or its pin is not what its source
    /// builds to (for a catalogue's CI).
    #[arg(long)]
    check: bool,
    /// Leave the manifests' pins alone: for a checkout whose plugins are build products
    /// rather than shipped files.
    #[arg(long)]
    no_pin: bool,
    /// Where compiled plugins are kept between runs [default: ~/.cache/mesh-adopt].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Compile every plugin afresh and keep nothing.
    #[arg(long)]
    no_cache: bool,
}

/// The catalogue a command works on when none is named: `./catalogue` in a checkout that
/// holds one (this project's layout), else the current directory (a catalogue's own
/// repository, even before its first module).
fn default_catalogue() -> PathBuf {
    let nested = std::path::Path::new("catalogue");
    if nested.is_dir() { nested.to_path_buf() } else { PathBuf::from(".") }
}

#[derive(Debug, Args)]
struct TestArgs {
    /// Scenario files, or directories searched for `scenarios/*.toml` [default: each module's
    /// directory and source, and the catalogue's own `scenarios/`].
    paths: Vec<PathBuf>,
    /// Also show, for each scenario, every line said, every host call and the outcome.
    #[arg(long, short)]
    verbose: bool,
    /// The catalogue the scenarios start from (its foundation, manifests and plugins)
    /// [default: ./catalogue if there is one, else the current directory].
    #[arg(long, value_name = "DIR", default_value_os_t = default_catalogue(), hide_default_value = true)]
    catalogue: PathBuf,
    /// Also run each scenario with every call failed in turn, then timed out in turn.
    #[arg(long)]
    sweep: bool,
    /// Where compiled plugins are kept between runs [default: ~/.cache/mesh-adopt].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Compile every plugin afresh and keep nothing.
    #[arg(long)]
    no_cache: bool,
}

/// The mesh backends the CLI can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MeshKind {
    /// A deterministic model of a mesh, on virtual time.
    Simulated,
    /// A real control plane and container engine, as `--config` describes.
    Live,
}

#[derive(Debug, Args)]
struct InspectArgs {
    /// A catalogue module's name, a module's directory, or the path of an `adopt.wasm`.
    target: String,
    /// The catalogue a module name is looked up in [default: ./catalogue if there is one,
    /// else the current directory].
    #[arg(long, value_name = "DIR", default_value_os_t = default_catalogue(), hide_default_value = true)]
    catalogue: PathBuf,
}

/// Where a run starts from: the catalogue, the foundation, the credentials and the
/// operator's options. Shared by `check`, `run` and `replay`.
#[derive(Debug, Args)]
struct SiteArgs {
    /// The catalogue checkout: modules/<name>/manifest.json with adopt.wasm beside it
    /// [default: ./catalogue if there is one, else the current directory].
    #[arg(long, value_name = "DIR", default_value_os_t = default_catalogue(), hide_default_value = true)]
    catalogue: PathBuf,
    /// The foundation bundle genesis produced [default: <catalogue>/foundation.json].
    #[arg(long)]
    foundation: Option<PathBuf>,
    /// Where genesis left its credentials [default: <catalogue>/genesis/credentials].
    #[arg(long)]
    credentials: Option<PathBuf>,
    /// The node the modules are assigned to [default: node-1; a replay: the recorded one].
    #[arg(long)]
    node: Option<String>,
    /// The catalogue repository a builder clones, with an optional ref: REPO[@REF] [a replay:
    /// the recorded one].
    #[arg(long = "catalog-source", value_name = "REPO[@REF]")]
    catalog_source: Option<String>,
    /// How long to wait for the node after a push: 90, 90s, 5m [default: 120s; a replay: the
    /// recorded wait].
    #[arg(long, value_parser = parse_duration)]
    wait: Option<Duration>,
}

impl SiteArgs {
    fn catalogue(&self) -> Result<Catalogue> {
        if !self.catalogue.is_dir() {
            bail!("the catalogue `{}` is not a directory (pass --catalogue DIR)", self.catalogue.display());
        }
        Ok(Catalogue::at(&self.catalogue))
    }

    fn foundation(&self) -> Result<Foundation> {
        Foundation::load(&self.foundation.clone().unwrap_or_else(|| self.catalogue.join("foundation.json")))
    }

    fn credentials(&self) -> Credentials {
        Credentials::open(&self.credentials.clone().unwrap_or_else(|| self.catalogue.join("genesis/credentials")))
    }

    /// The options given, the defaults for those not given.
    fn options(&self) -> Result<RunOptions> {
        self.options_over(RunOptions { node: DEFAULT_NODE.to_string(), catalog_source: None, wait: DEFAULT_WAIT })
    }

    /// The options given, `base`'s for those not given: a replay runs as it was recorded
    /// unless the operator says otherwise. Every option is checked before it is used.
    fn options_over(&self, base: RunOptions) -> Result<RunOptions> {
        let catalog_source = match self.catalog_source.as_deref() {
            Some(text) => Some(parse_catalog_source(text)?),
            None => base.catalog_source,
        };
        let options = RunOptions {
            node: self.node.clone().unwrap_or(base.node),
            catalog_source,
            wait: self.wait.unwrap_or(base.wait),
        };
        options.validate()?;
        Ok(options)
    }

    /// The files and directories a run reads, which nothing it writes may be or be in.
    fn inputs(&self) -> Vec<PathBuf> {
        vec![
            self.catalogue.join("modules"),
            self.foundation.clone().unwrap_or_else(|| self.catalogue.join("foundation.json")),
            self.credentials.clone().unwrap_or_else(|| self.catalogue.join("genesis/credentials")),
        ]
    }
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Modules to adopt, in order [default: postgres nats mesh-vault].
    modules: Vec<String>,
    #[command(flatten)]
    site: SiteArgs,
    #[command(flatten)]
    shown: ShownArgs,
    /// Which mesh to act on: the simulator, or a live one reached as `--config` says.
    #[arg(long, value_enum, default_value_t = MeshKind::Simulated)]
    mesh: MeshKind,
    /// The live mesh's configuration [default: ./mesh-adopt.toml if present, else built-in].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Memory each plugin may grow to, in MiB [16..=4096].
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = Limits::default().memory_bytes >> 20,
        value_parser = parse_plugin_memory
    )]
    plugin_memory: usize,
    /// Where compiled plugins are kept between runs [default: ~/.cache/mesh-adopt].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Compile every plugin afresh and keep nothing.
    #[arg(long)]
    no_cache: bool,
    /// Time each plugin's own code may run per call (host waits not counted): 10s, 1m
    /// [1s..=1h].
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_plugin_time)]
    plugin_time: Duration,
    /// With `check`: write every module's plan, and what it was made from, to PLAN.
    #[arg(long, value_name = "PLAN")]
    out: Option<PathBuf>,
    /// With `run`: adopt only if the inputs and the plans made now are those saved in PLAN
    /// by `check --out`.
    #[arg(long, value_name = "PLAN")]
    plan: Option<PathBuf>,
    /// Time each plugin call may take in all, whatever it waits on (host calls, sleeps), on
    /// the mesh's clock: longer than the longest build and wait it tells [1s..=24h].
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_plugin_wall_time)]
    plugin_wall_time: Duration,
}

/// A duration option's value within `min..=max`; out of range, the message names the range.
fn duration_within(text: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let value = parse_duration(text)?;
    if value < min || value > max {
        return Err(format!("`{text}` is out of range: it must be within {min:?}..={max:?}"));
    }
    Ok(value)
}

fn parse_plugin_time(text: &str) -> Result<Duration, String> {
    duration_within(text, Duration::from_secs(1), Duration::from_secs(60 * 60))
}

fn parse_plugin_wall_time(text: &str) -> Result<Duration, String> {
    duration_within(text, Duration::from_secs(1), Duration::from_secs(24 * 60 * 60))
}

fn parse_plugin_memory(text: &str) -> Result<usize, String> {
    let mib: usize = text.parse().map_err(|_| format!("`{text}` is not a whole number of MiB"))?;
    if !(16..=4096).contains(&mib) {
        return Err(format!("`{text}` MiB is out of range: it must be within 16..=4096"));
    }
    Ok(mib)
}

impl RunArgs {
    /// The modules asked for, each a plain name, none twice [default: phase three's].
    fn modules(&self) -> Result<Vec<String>> {
        if self.modules.is_empty() {
            // Phase three is the default only in a catalogue that holds it: in one that holds
            // none of its modules, say what to name. (One missing module is named by the run.)
            let modules = self.site.catalogue.join("modules");
            let holds_none = !PHASE_THREE.iter().any(|m| modules.join(m).is_dir());
            if self.site.catalogue.is_dir() && holds_none {
                let names = Catalogue::at(&self.site.catalogue).module_names().unwrap_or_default();
                bail!(
                    "no modules named, and the catalogue `{}` does not hold phase three's ({}) to run by default: \
                     name the modules to run{}",
                    self.site.catalogue.display(),
                    PHASE_THREE.join(", "),
                    match names.first() {
                        Some(first) => format!(", e.g. `{first}` (it holds {})", names.join(", ")),
                        None => " (it holds none yet)".to_string(),
                    }
                );
            }
            return Ok(PHASE_THREE.iter().map(|m| m.to_string()).collect());
        }
        let mut modules: Vec<String> = Vec::with_capacity(self.modules.len());
        for module in &self.modules {
            mesh_adopt_runtime::options::check_module_name(module)?;
            if modules.contains(module) {
                bail!("the module `{module}` is asked for twice; name each module once");
            }
            modules.push(module.clone());
        }
        Ok(modules)
    }

    /// Refuses options that belong to the other command or the other mesh.
    fn refuse_misplaced(&self, mode: Mode) -> Result<()> {
        if self.out.is_some() && mode != Mode::Check {
            bail!(
                "--out writes a plan, which `check` makes: `mesh-adopt check --out PLAN`, then `mesh-adopt run --plan \
                 PLAN`"
            );
        }
        if self.plan.is_some() && mode != Mode::Adopt {
            bail!("--plan applies a saved plan, which `run` does: `mesh-adopt run --plan PLAN`");
        }
        if self.mesh == MeshKind::Simulated && self.config.is_some() {
            bail!("--config describes how a live mesh is reached (`--mesh live`); the simulated mesh takes none");
        }
        Ok(())
    }

    /// The sandbox's limits with the operator's memory and time.
    fn limits(&self) -> Limits {
        Limits {
            memory_bytes: self.plugin_memory << 20,
            guest_time: self.plugin_time,
            wall_time: self.plugin_wall_time,
            ..Limits::default()
        }
    }

    /// Refuses a `--record` or `--out` that would write over one of the run's inputs.
    fn check_outputs(&self) -> Result<()> {
        // Before anything runs: a plan that could not be saved at the end is no check.
        if let Some(out) = &self.out {
            mesh_adopt_runtime::catalogue::output_file(out, "a plan")?;
        }
        let mut inputs = self.site.inputs();
        inputs.extend(self.config.clone());
        inputs.extend(self.plan.clone());
        refuse_overwriting(
            &[("--record", &self.shown.record), ("--out", &self.out)],
            &inputs,
            "the configuration and the plan",
        )
    }
}

/// Refuses an output that is, or is inside, one of `inputs`; `last` names the inputs beyond
/// the catalogue's modules, the foundation and the credentials.
fn refuse_overwriting(outputs: &[(&str, &Option<PathBuf>)], inputs: &[PathBuf], last: &str) -> Result<()> {
    let given: Vec<(&str, &PathBuf)> = outputs.iter().filter_map(|(o, p)| p.as_ref().map(|p| (*o, p))).collect();
    if let [(first, a), (second, b)] = given.as_slice()
        && (resolved(a) == resolved(b) || same_file(a, b))
    {
        bail!("{first} and {second} name the same file `{}`: give each its own", a.display());
    }
    for (option, output) in outputs {
        let Some(output) = output else { continue };
        let Some(written) = resolved(output) else { continue };
        if let Some(input) = inputs.iter().find(|i| resolved(i).is_some_and(|i| written.starts_with(&i))) {
            bail!(
                "{option} `{}` is one of this run's inputs (`{}`): choose a file outside the catalogue's \
                 modules, the foundation, the credentials, {last}",
                output.display(),
                input.display()
            );
        }
        // A hard link is another name for an input's bytes: writing it would change the input.
        if let Some(input) = inputs.iter().find(|i| holds_file(i, output)) {
            bail!(
                "{option} `{}` is the same file as one of this run's inputs (in `{}`): choose a file outside \
                 the catalogue's modules, the foundation, the credentials, {last}",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// `path` made absolute with its existing part's links resolved, so two spellings of one file
/// compare equal; `None` when not even its directory exists.
/// Whether two paths that exist are one file (device and inode), whatever their names.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether the existing file `output` is `input` or a file in it (searched two levels deep,
/// as deep as a catalogue's modules go).
fn holds_file(input: &std::path::Path, output: &std::path::Path) -> bool {
    if same_file(input, output) {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(input) else { return false };
    entries.flatten().any(|entry| {
        let path = entry.path();
        same_file(&path, output)
            || (path.is_dir()
                && std::fs::read_dir(&path).is_ok_and(|inner| inner.flatten().any(|e| same_file(&e.path(), output))))
    })
}

fn resolved(path: &std::path::Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

/// Runs the command line and says how it ended: 0 when every module succeeded, 1 when one
/// was refused or an invariant broke, 2 when the run could not be made at all, 130 when
/// interrupted.
pub fn main() -> ExitStatus {
    let cli = Cli::parse();
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

/// How long a run has, once interrupted, to stop by itself before the program ends anyway.
const INTERRUPT_GRACE: Duration = Duration::from_millis(500);

/// SIGINT and SIGTERM, taken over as soon as a command starts so that from then on neither
/// kills the program half-way: a run answers them by stopping cleanly. They are watched from
/// a task of their own, which ends the program itself, record closed, should the run not
/// have stopped within [`INTERRUPT_GRACE`]: a plugin being compiled holds the run's thread,
/// and nothing can interrupt a compile.
struct Interrupts {
    received: tokio::sync::oneshot::Receiver<&'static str>,
    /// Where the watcher closes the record when it ends the program itself.
    closing: Arc<std::sync::OnceLock<(Arc<Output>, Arc<Transcript>)>>,
}

impl Interrupts {
    fn take_over() -> Interrupts {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt()).ok();
        let mut term = signal(SignalKind::terminate()).ok();
        let (sent, received) = tokio::sync::oneshot::channel();
        let closing: Arc<std::sync::OnceLock<(Arc<Output>, Arc<Transcript>)>> = Arc::default();
        let slot = closing.clone();
        tokio::spawn(async move {
            let next = |s: &mut Option<tokio::signal::unix::Signal>| {
                let mut s = s.take();
                async move {
                    match &mut s {
                        Some(s) => s.recv().await,
                        None => std::future::pending().await,
                    }
                }
            };
            let signal = tokio::select! {
                _ = next(&mut int) => "SIGINT",
                _ = next(&mut term) => "SIGTERM",
            };
            let _ = sent.send(signal);
            tokio::time::sleep(INTERRUPT_GRACE).await;
            // Still here: the run did not get to stop itself. What it started goes first.
            mesh_adopt_live::end_every_command();
            if let Some((output, transcript)) = slot.get() {
                output.interrupted(signal, transcript);
            }
            crate::output::finish_stdout_within(INTERRUPT_GRACE);
            std::process::exit(ExitStatus::Interrupted.code().into());
        });
        Interrupts { received, closing }
    }

    /// Where the record is, once it is open, for the watcher to close should it end the
    /// program itself.
    fn close_with(&self, output: &Arc<Output>, transcript: &Arc<Transcript>) {
        let _ = self.closing.set((output.clone(), transcript.clone()));
    }

    /// Waits for SIGINT or SIGTERM, and names it.
    async fn next(&mut self) -> &'static str {
        match (&mut self.received).await {
            Ok(signal) => signal,
            Err(_) => std::future::pending().await,
        }
    }
}

/// Says on stderr what stopped the command, with its causes, and with `--json` as an `error`
/// line too: an error before or outside a run is an input that could not be used.
fn report_error(error: &anyhow::Error, json: bool) -> ExitStatus {
    let mut text = format!("error: {error}");
    for cause in error.chain().skip(1) {
        text.push_str(&format!("\n  Caused by: {cause}"));
    }
    crate::errln!("{text}");
    if json {
        // A program reading `--json` learns of the error from the stream, not only stderr.
        let line = events::Event::Error(events::ErrorEvent {
            schema: events::SCHEMA,
            message: error.to_string(),
            causes: error.chain().skip(1).map(|c| c.to_string()).collect(),
            exit: ExitStatus::Unusable.code(),
        });
        crate::output::emit(&serde_json::to_string(&line).expect("an event serialises"));
    }
    ExitStatus::Unusable
}

/// Runs one command; the exit status is the outcome's (see [`mesh_adopt_runtime::run::RunReport::exit_code`]).
async fn execute(cli: Cli) -> Result<ExitStatus> {
    match cli.command {
        Command::Check(args) => check_or_run(args, Mode::Check).await,
        Command::Run(args) => check_or_run(args, Mode::Adopt).await,
        Command::Inspect(args) => inspect(args),
        Command::Test(args) => test(args).await,
        Command::New(args) => new_module(args),
        Command::Build(args) => build_modules(args),
        Command::Replay(args) => replay(args).await,
    }
}

/// What `check`, `run` and `replay` share once their arguments are checked: the site read,
/// the output open, and the record that feeds it.
struct Session {
    catalogue: Catalogue,
    foundation: Foundation,
    credentials: Arc<Credentials>,
    output: Arc<Output>,
    transcript: Arc<Transcript>,
}

impl Session {
    /// Reads the site's catalogue and foundation and opens its credentials; every event the
    /// run records reaches `output` as it happens.
    fn open(site: &SiteArgs, credentials: Arc<Credentials>, output: Output) -> Result<Session> {
        let catalogue = site.catalogue()?;
        let foundation = site.foundation()?;
        let output = Arc::new(output);
        let observer = output.clone();
        let transcript = Arc::new(Transcript::observed(Box::new(move |event| observer.observe(event))));
        Ok(Session { catalogue, foundation, credentials, output, transcript })
    }

    /// Refuses options (or a mesh's description) that hold a credential's value, before any
    /// of it is shown or recorded: a run would have to print it, and a credential is never
    /// shown. The error names the credential, never the value.
    fn refuse_credentials_in(&self, options: &RunOptions, mesh: &dyn Mesh) -> Result<()> {
        let shown = [options.node.clone(), options.source_words(), mesh.summary()];
        for (what, text) in ["--node", "--catalog-source", "the mesh's description"].iter().zip(shown) {
            if let (_, Some(name)) = self.credentials.redact(text) {
                bail!(
                    "{what} holds the value of the genesis credential `{name}`, which is never shown: it cannot be \
                     a run's option (a password in a URL belongs to the builder's own credentials)"
                );
            }
        }
        Ok(())
    }

    /// A run of this site's catalogue on `mesh`, recorded to the session's output.
    fn run<'a>(&'a self, host: &'a PluginHost, mesh: Arc<dyn Mesh>, options: RunOptions) -> RunBuilder<'a> {
        Run::builder(host, &self.catalogue, &self.foundation, mesh)
            .credentials(self.credentials.clone())
            .record(self.transcript.clone())
            .options(options)
    }
}

/// Learns every credential's value before anything is written, so that no line the program
/// writes can hold one ([`crate::output::redact_with`]); refuses a credentials directory with
/// an entry that cannot be read, whose value could then not be kept from being shown. The
/// credentials returned are the session's: one reading serves the guard and the run.
fn guard_credentials(site: &SiteArgs) -> Result<Arc<Credentials>> {
    let credentials = Arc::new(site.credentials());
    crate::output::redact_with(credentials.clone());
    if let Some((name, why)) = credentials.unreadable().into_iter().next() {
        bail!(
            "the credentials directory holds `{name}`, which cannot be read as a credential ({why}): its value could \
             not be kept from being shown; make it a regular file of at most 64 KiB, or move it out"
        );
    }
    Ok(credentials)
}

/// The key saved plans' credentials are digested with, kept with this user's state.
fn plan_key() -> Result<PlanKey> {
    let dir = PlanKey::default_dir()
        .context("no place for the plan key: set XDG_STATE_HOME or HOME (a saved plan needs one)")?;
    PlanKey::open(&dir)
}

/// `check` (preflight only, `--out` saves the plans) and `run` (preflight, then adopt, held
/// to `--plan` when given).
async fn check_or_run(args: RunArgs, mode: Mode) -> Result<ExitStatus> {
    let mut interrupts = Interrupts::take_over();
    let credentials = guard_credentials(&args.site)?;
    args.refuse_misplaced(mode)?;
    let modules = args.modules()?;
    args.check_outputs()?;
    let options = args.site.options()?;
    let output = args.shown.output(args.mesh == MeshKind::Live)?;
    let session = Session::open(&args.site, credentials, output)?;
    interrupts.close_with(&session.output, &session.transcript);
    let saved_plan = args.plan.as_deref().map(SavedPlan::read).transpose()?;
    let mesh: Arc<dyn Mesh> = match args.mesh {
        MeshKind::Simulated => Arc::new(SimulatedMesh::new(SimSetup::new(session.foundation.clone(), &options.node))),
        MeshKind::Live => Arc::new(LiveMesh::new(live_config(args.config.as_deref())?)),
    };
    session.refuse_credentials_in(&options, mesh.as_ref())?;
    let output = &session.output;
    let command = if mode == Mode::Check { events::Command::Check } else { events::Command::Run };
    output.start(command, &modules, &options, mesh.as_ref());
    let host = host_with_cache(args.limits(), args.no_cache, args.cache.as_deref())?;
    output.line(&format!(
        "{} {} on {}",
        if mode == Mode::Check { "checking" } else { "adopting" },
        modules.join(", "),
        mesh.summary()
    ));
    let mut run = session.run(&host, mesh, options);
    if args.out.is_some() || saved_plan.is_some() {
        run = run.plan_key(plan_key()?);
    }
    if let Some(saved) = saved_plan {
        run = run.saved_plan(saved);
    }
    let run = run.build();
    let report = tokio::select! {
        report = run.run(&modules, mode) => report,
        signal = interrupts.next() => {
            // Dropping the run stops the plugin in its sandbox and ends every control-plane
            // process it had started.
            output.interrupted(signal, &session.transcript);
            return Ok(ExitStatus::Interrupted);
        }
    };
    let status = ExitStatus::of_report(&report);
    if let (Some(out), ExitStatus::Success) = (&args.out, status) {
        // What the plans were made from is the operator's catalogue: a credential's value in
        // it (an image named after it) would be written out, so no plan is.
        let text = serde_json::to_string(&report.made_from)?;
        if let (_, Some(name)) = session.credentials.redact(text) {
            bail!(
                "no plan was written to `{}`: what the plans were made from holds the value of the genesis \
                 credential `{name}`",
                out.display()
            );
        }
        report.made_from.write(out)?;
        output.plan_saved(out);
    }
    output.finish(&report, &[], status);
    Ok(status)
}

/// The live mesh's configuration: the file given, else `./mesh-adopt.toml` when there is
/// one, else the built-in defaults.
fn live_config(path: Option<&std::path::Path>) -> Result<LiveConfig> {
    match path {
        Some(path) => LiveConfig::load(path),
        // One that is there but is no file is an error, not a reason to fall back to the
        // defaults the operator meant to replace.
        None if std::path::Path::new(CONFIG_FILE).symlink_metadata().is_ok() => {
            LiveConfig::load(std::path::Path::new(CONFIG_FILE))
        }
        None => Ok(LiveConfig::default()),
    }
}

/// The plugin host under `limits`, with the compile cache the arguments ask for. An
/// explicit `--cache` that cannot be used is an error; the default one only a warning, since
/// running without it is only slower.
fn host_with_cache(limits: Limits, no_cache: bool, cache: Option<&std::path::Path>) -> Result<PluginHost> {
    let started = |host: Result<PluginHost>| host.context("failed to start the plugin host");
    if no_cache {
        return started(PluginHost::new(limits));
    }
    if let Some(dir) = cache {
        return started(PluginHost::cached(limits, CompileCache::open(dir)?));
    }
    match CompileCache::default_dir().map(|dir| CompileCache::open(&dir)) {
        Some(Ok(cache)) => started(PluginHost::cached(limits, cache)),
        Some(Err(e)) => {
            crate::errln!("warning: compiling without a cache: {e:#}");
            started(PluginHost::new(limits))
        }
        None => started(PluginHost::new(limits)),
    }
}

/// Replays a recording against the catalogue's plugins (or one given), and says whether and
/// where the plugin diverged. Exit 0 only when every recorded call was made as recorded.
async fn replay(args: ReplayArgs) -> Result<ExitStatus> {
    let mut interrupts = Interrupts::take_over();
    let credentials = guard_credentials(&args.site)?;
    let recording = read_recording(&args.recording)?;
    let (modules, calls) = replayed(recording.calls, args.module.as_deref())?;
    let overrides = match (&args.plugin, modules.as_slice()) {
        (None, _) => Vec::new(),
        (Some(plugin), [module]) => vec![(module.clone(), plugin.clone())],
        (Some(_), _) => bail!("the recording holds {}: say which with --module", modules.join(", ")),
    };
    let mut inputs = args.site.inputs();
    inputs.push(args.recording.clone());
    inputs.extend(args.plugin.clone());
    refuse_overwriting(&[("--record", &args.shown.record)], &inputs, "the recording and the plugin")?;
    let session = Session::open(&args.site, credentials, args.shown.output(false)?)?;
    interrupts.close_with(&session.output, &session.transcript);
    let mesh = Arc::new(ReplayMesh::new(calls, recording.seed));
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let options = args.site.options_over(recording.options)?;
    session.refuse_credentials_in(&options, mesh.as_ref())?;
    let output = &session.output;
    output.start(events::Command::Replay, &modules, &options, mesh.as_ref());
    output.line(&format!(
        "replaying {} of `{}` on node {}, built from {}, waiting up to {}s",
        modules.join(", "),
        args.recording.display(),
        options.node,
        options.source_words(),
        options.wait.as_secs()
    ));
    let mut run = session.run(&host, mesh.clone(), options);
    for (module, path) in overrides {
        run = run.plugin_override(&module, path);
    }
    let run = run.build();
    let report = tokio::select! {
        report = run.run(&modules, Mode::Adopt) => report,
        signal = interrupts.next() => {
            output.interrupted(signal, &session.transcript);
            return Ok(ExitStatus::Interrupted);
        }
    };
    let divergence = mesh.divergence();
    let verdict = events::Event::Replay(events::ReplayEvent {
        recording: args.recording.display().to_string(),
        answered: mesh.answered() as u64,
        divergence: divergence.clone(),
    });
    // A plugin or catalogue that cannot be used is bad input, as in a run: not a divergence.
    let status = match (&divergence, ExitStatus::of_report(&report)) {
        (_, ExitStatus::Unusable) => ExitStatus::Unusable,
        (None, _) => ExitStatus::Success,
        (Some(_), _) => ExitStatus::Failed,
    };
    output.finish(&report, &[verdict], status);
    match divergence {
        None => {
            output.line(&format!("\nreplayed {} calls: the plugin made every recorded call, in order", mesh.answered()))
        }
        Some(_) if status == ExitStatus::Unusable => {
            output.line("\nnot replayed: a plugin could not be used (see above)")
        }
        Some(divergence) => output.line(&format!("\ndiverged at {divergence}")),
    }
    Ok(status)
}

/// The modules a replay runs, in the order the recording first calls them, and the calls it
/// answers: all of them, or only `only`'s.
fn replayed(mut calls: Vec<CallEvent>, only: Option<&str>) -> Result<(Vec<String>, Vec<CallEvent>)> {
    let mut modules: Vec<String> = Vec::new();
    for call in &calls {
        // A recording is outside input too: the modules it names are held to what a name may be.
        mesh_adopt_runtime::options::check_module_name(&call.module)
            .map_err(|e| anyhow::anyhow!("the recording names a module `{}`: {e}", call.module.escape_debug()))?;
    }
    for call in &calls {
        if !modules.contains(&call.module) {
            modules.push(call.module.clone());
        }
    }
    if let Some(only) = only {
        anyhow::ensure!(
            modules.iter().any(|m| m == only),
            "the recording holds no calls of `{only}`; it holds {}",
            modules.join(", ")
        );
        calls.retain(|c| c.module == only);
        modules = vec![only.to_string()];
    }
    Ok((modules, calls))
}

/// Writes a new module into a catalogue and says what it wrote and what to run next.
fn new_module(args: NewArgs) -> Result<ExitStatus> {
    let language = args.lang;
    let request = crate::scaffold::Request {
        module: &args.module,
        catalogue: &args.catalogue,
        adopts: args.adopts.as_deref(),
        language,
        sdk: crate::scaffold::SdkSource::parse(args.sdk.as_deref(), language)?,
    };
    let made = crate::scaffold::new_module(&request)?;
    for file in &made.files {
        crate::outln!("created {}", file.display());
    }
    for note in &made.notes {
        crate::outln!("note: {note}");
    }
    // Said only when the commands would not find this catalogue by themselves.
    let catalogue = if args.catalogue == default_catalogue() {
        String::new()
    } else {
        format!(" --catalogue {}", args.catalogue.display())
    };
    crate::outln!("\nnext:");
    crate::outln!("  mesh-adopt build {}{catalogue}", args.module);
    crate::outln!("  mesh-adopt test {}{catalogue}", made.module_dir.display());
    crate::outln!("  mesh-adopt test --sweep {}{catalogue}", made.module_dir.display());
    Ok(ExitStatus::Success)
}

/// Builds the modules' plugins, loads each, then places and pins them all; with `--check`,
/// compares instead. Exit 1 when a check finds a module stale.
fn build_modules(args: BuildArgs) -> Result<ExitStatus> {
    let catalogue = Catalogue::at(&args.catalogue);
    if !args.catalogue.is_dir() {
        bail!("the catalogue `{}` is not a directory (pass --catalogue DIR)", args.catalogue.display());
    }
    let sources = if args.modules.is_empty() {
        let found = crate::build::modules_with_source(&catalogue)?;
        if found.is_empty() {
            bail!(
                "no module of the catalogue `{}` names its plugin's source (`adopt.source` in its manifest)",
                args.catalogue.display()
            );
        }
        found
    } else {
        args.modules.iter().map(|m| crate::build::locate(&catalogue, m)).collect::<Result<_>>()?
    };
    let host = host_with_cache(Limits::default(), args.no_cache, args.cache.as_deref())?;
    let shared_target = args.catalogue.join("target");
    let mut built = Vec::with_capacity(sources.len());
    for source in sources {
        crate::errln!("building {} from {}", source.module, source.source.display());
        built.push(crate::build::build(&host, source, &shared_target, args.check)?);
    }
    if args.check {
        let mut fresh = true;
        for one in &built {
            match crate::build::verdict(one, !args.no_pin) {
                crate::build::Verdict::Matches => {
                    crate::outln!("ok     {:<16} sha256 {}", one.source.module, one.digest)
                }
                crate::build::Verdict::Stale(why) => {
                    fresh = false;
                    crate::outln!("STALE  {:<16} {why}", one.source.module);
                }
            }
        }
        return Ok(ExitStatus::of(fresh));
    }
    // A pin the build would not match, left in place, would have every run refuse the module.
    if args.no_pin
        && let Some(one) = built.iter().find(|b| b.source.pin.as_ref().is_some_and(|p| p != &b.digest))
    {
        bail!(
            "the `{}` module's manifest `{}` pins {}, and its source builds to {}: build without --no-pin to pin \
             the new build, or take the pin out; nothing was placed",
            one.source.module,
            one.source.manifest_path.display(),
            one.source.pin.as_deref().unwrap_or_default(),
            one.digest
        );
    }
    let staged: Vec<_> = built.iter().map(|one| crate::build::stage(one, !args.no_pin)).collect::<Result<_>>()?;
    let mut placed: Vec<&str> = Vec::new();
    for (one, staged) in built.iter().zip(staged) {
        let repinned = staged.place().with_context(|| match placed.as_slice() {
            [] => "nothing was placed".to_string(),
            done => format!("{} placed before this; the modules after it were not", done.join(", ")),
        })?;
        placed.push(&one.source.module);
        let pin = match (args.no_pin, repinned) {
            (true, _) => "",
            (false, true) => ", pinned",
            (false, false) => ", pin unchanged",
        };
        crate::outln!(
            "placed {:<16} {:>9} bytes  sha256 {}  {}{pin}",
            one.source.module,
            one.size,
            one.digest,
            one.source.plugin_path.display()
        );
    }
    Ok(ExitStatus::Success)
}

/// The scenarios `test` runs when given no paths: those beside each module of the catalogue
/// and beside its source, and the catalogue's own.
fn default_scenario_paths(catalogue: &std::path::Path) -> Vec<PathBuf> {
    let at = Catalogue::at(catalogue);
    let mut paths = Vec::new();
    for module in at.module_names().unwrap_or_default() {
        paths.push(catalogue.join("modules").join(&module));
        if let Ok(source) = crate::build::locate(&at, &module)
            && source.source.is_dir()
        {
            paths.push(source.source);
        }
    }
    if catalogue.join("scenarios").is_dir() {
        paths.push(catalogue.to_path_buf());
    }
    paths
}

/// Runs scenarios, a line each; with `--sweep`, sweeps each and reports the figures.
async fn test(args: TestArgs) -> Result<ExitStatus> {
    let paths = if args.paths.is_empty() { default_scenario_paths(&args.catalogue) } else { args.paths.clone() };
    let files = scenario::discover(&paths)?;
    if files.is_empty() && args.paths.is_empty() {
        bail!(
            "no scenarios beside the modules of the catalogue `{}` (none in a `scenarios/` directory beside a \
             module's manifest or its plugin's source, nor in `{}`): run `mesh-adopt test` from the catalogue's \
             top directory, or pass `--catalogue DIR` or the scenarios' paths",
            args.catalogue.display(),
            args.catalogue.join("scenarios").display()
        );
    }
    if files.is_empty() {
        bail!(
            "no scenarios under {}",
            paths.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", ")
        );
    }
    // A plugin author runs the scenarios after every change: compiling the unchanged plugins
    // again each time would be most of a quick run.
    let host = host_with_cache(Limits::default(), args.no_cache, args.cache.as_deref())?;
    let (mut passed, mut failed) = (0, 0);
    let mut totals = scenario::SweepResult::default();
    for file in &files {
        let ran = scenario::run(&host, &args.catalogue, file, None).await?;
        let differences = scenario::differences(&file.scenario, &ran);
        // The sweep drives its runs on threads of its own, one a core, and waits for them. A
        // scenario whose sweep found a problem has not passed, whatever its clean run did.
        let swept = match args.sweep {
            true => Some(tokio::task::block_in_place(|| scenario::sweep(&host, &args.catalogue, file))?),
            false => None,
        };
        if differences.is_empty() && swept.as_ref().is_none_or(|swept| swept.problems.is_empty()) {
            passed += 1;
            crate::outln!("ok    {:<40} {}", file.label, file.scenario.name);
        } else {
            failed += 1;
            crate::outln!("FAIL  {:<40} {}", file.label, file.scenario.name);
            for difference in differences {
                crate::outln!("  {}", difference.replace('\n', "\n  "));
            }
        }
        if args.verbose {
            show_scenario_run(&ran);
        }
        if let Some(swept) = swept {
            crate::outln!(
                "      swept {} steps: {} survived, {} did not converge",
                swept.steps,
                swept.survived,
                swept.not_converged
            );
            for problem in &swept.problems {
                crate::outln!("      ✗ {}", problem.replace('\n', "\n        "));
            }
            totals.steps += swept.steps;
            totals.survived += swept.survived;
            totals.not_converged += swept.not_converged;
            totals.problems.extend(swept.problems);
        }
    }
    crate::outln!("\n{passed} passed, {failed} failed");
    if args.sweep {
        crate::outln!(
            "sweep: {} steps swept, {} faults survived, {} runs did not converge",
            totals.steps,
            totals.survived,
            totals.not_converged
        );
    }
    Ok(ExitStatus::of(failed == 0 && totals.problems.is_empty()))
}

/// `test -v`: a scenario's run as `run -v` shows one (lines said, plans, host calls), then
/// each module's outcome.
fn show_scenario_run(ran: &scenario::ScenarioRun) {
    let output = Output::new(Style::Human { verbose: true }, false, None).expect("an output without a record opens");
    for event in ran.transcript.events() {
        output.observe(&event);
    }
    for (module, outcome) in &ran.report.modules {
        crate::outln!("      {module:>10} │ {outcome}");
    }
    crate::outln!("");
}

/// Prints what a plugin is, and for a module, what its manifest says of it.
fn inspect(args: InspectArgs) -> Result<ExitStatus> {
    let as_path = PathBuf::from(&args.target);
    // A module directory names its catalogue and module: `catalogue/modules/postgres`.
    let in_directory = as_path.join(mesh_adopt_runtime::catalogue::MANIFEST_FILE).is_file().then(|| {
        let module = as_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let catalogue = as_path.parent().and_then(std::path::Path::parent).map(PathBuf::from).unwrap_or_default();
        (catalogue, module)
    });
    let (path, adopt) = if as_path.is_file() {
        (as_path, None)
    } else if in_directory.is_none() && (args.target.contains('/') || args.target.ends_with(".wasm")) {
        bail!("there is no plugin file or module directory at `{}`", as_path.display());
    } else {
        let (catalogue, name) = in_directory.unwrap_or((args.catalogue.clone(), args.target.clone()));
        let module = Catalogue::at(&catalogue).module(&name)?;
        crate::outln!("module       {} ({})", module.name, module.manifest_path.display());
        (module.plugin_path, Some(module.adopt))
    };
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let info = host.describe(&path)?;
    crate::outln!("plugin       {}", info.path.display());
    crate::outln!("sha256       {}", info.digest);
    crate::outln!("size         {} bytes", info.size);
    crate::outln!("targets      {}", info.contract.as_deref().unwrap_or("(no mesh:adopt import)"));
    match &info.loads {
        Ok(()) => crate::outln!("loads        yes, on this host ({})", mesh_adopt_runtime::WORLD),
        Err(why) => crate::outln!("loads        no: {why}"),
    }
    if let Some(adopt) = adopt {
        let pin = match &adopt.sha256 {
            None => "(not pinned)".to_string(),
            Some(pin) if pin.trim().eq_ignore_ascii_case(&info.digest) => format!("{} (matches)", pin.trim()),
            Some(pin) => format!("{pin} (DIFFERS: the plugin would be refused)"),
        };
        crate::outln!("pinned       {pin}");
        crate::outln!("world        {}", adopt.world.as_deref().unwrap_or("(not declared)"));
        let list = |items: &[String]| if items.is_empty() { "(none)".to_string() } else { items.join(", ") };
        crate::outln!("grants       credentials: {}", list(&adopt.grants.credentials));
        crate::outln!("             inspect: {}", list(&adopt.grants.inspect));
        crate::outln!("             fetch: {}", list(&adopt.grants.fetch));
    }
    crate::outln!("imports      {}", info.imports.join("\n             "));
    crate::outln!("exports      {}", info.exports.join(", "));
    Ok(ExitStatus::Success)
}
