//! The `mesh-adopt` command line: parses arguments, runs the library, prints as it goes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::cache::CompileCache;
use crate::catalogue::{Catalogue, Foundation};
use crate::credentials::Credentials;
use crate::limits::Limits;
use crate::mesh::Mesh;
use crate::mesh::live::{CONFIG_FILE, LiveConfig, LiveMesh};
use crate::mesh::replay::{ReplayMesh, read_recording};
use crate::mesh::simulated::{SimSetup, SimulatedMesh};
use crate::output::{Output, Style};
use crate::run::{Mode, PHASE_THREE, Run, RunOptions};
use crate::runtime::PluginHost;
use crate::scenario;
use crate::transcript::Transcript;

/// Adopt what genesis raised into catalogue modules, each by its own WebAssembly plugin.
#[derive(Debug, Parser)]
#[command(name = "mesh-adopt", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
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
    /// Start a new module's plugin: crate, manifest and a first scenario that passes.
    New(NewArgs),
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
    /// Also print every host call the plugins make.
    #[arg(long, short)]
    verbose: bool,
}

#[derive(Debug, Args)]
struct NewArgs {
    /// The module's name, e.g. `object-store`.
    module: String,
    /// The plugins workspace to add the crate to.
    #[arg(long, default_value = "plugins")]
    plugins: PathBuf,
    /// The catalogue to add the module's manifest to.
    #[arg(long, default_value = "catalogue")]
    catalogue: PathBuf,
}

#[derive(Debug, Args)]
struct TestArgs {
    /// Scenario files, or directories searched for `scenarios/*.toml` [default: plugins and
    /// the catalogue].
    paths: Vec<PathBuf>,
    /// The catalogue the scenarios start from (its foundation, manifests and plugins).
    #[arg(long, default_value = "catalogue")]
    catalogue: PathBuf,
    /// Also run each scenario with every call failed in turn, then timed out in turn.
    #[arg(long)]
    sweep: bool,
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
    /// A catalogue module's name, or the path of an `adopt.wasm`.
    target: String,
    /// The catalogue a module name is looked up in.
    #[arg(long, default_value = "catalogue")]
    catalogue: PathBuf,
}

/// The node modules are assigned to when the operator names none.
const DEFAULT_NODE: &str = "node-1";
/// How long a plugin waits for the node after a push when the operator does not say.
const DEFAULT_WAIT: Duration = Duration::from_secs(120);

/// Where a run starts from: the catalogue, the foundation, the credentials and the
/// operator's options. Shared by `check`, `run` and `replay`.
#[derive(Debug, Args)]
struct SiteArgs {
    /// The catalogue checkout: modules/<name>/manifest.json with adopt.wasm beside it.
    #[arg(long, default_value = "catalogue")]
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
    fn options(&self) -> RunOptions {
        self.options_over(RunOptions { node: DEFAULT_NODE.to_string(), catalog_source: None, wait: DEFAULT_WAIT })
    }

    /// The options given, `base`'s for those not given: a replay runs as it was recorded
    /// unless the operator says otherwise.
    fn options_over(&self, base: RunOptions) -> RunOptions {
        RunOptions {
            node: self.node.clone().unwrap_or(base.node),
            catalog_source: self.catalog_source.as_deref().map(parse_catalog_source).or(base.catalog_source),
            wait: self.wait.unwrap_or(base.wait),
        }
    }
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Modules to adopt, in order [default: postgres nats mesh-vault].
    modules: Vec<String>,
    #[command(flatten)]
    site: SiteArgs,
    /// Also print every host call the plugins make.
    #[arg(long, short)]
    verbose: bool,
    /// Print one JSON object a line instead of text, for programs.
    #[arg(long)]
    json: bool,
    /// Keep every event of the run (each host call with its result and duration, each
    /// line said) in FILE as JSON lines, written as the run goes. Secrets are redacted.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
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

/// Parses `90`, `90s`, `5m` or `1h` into a duration.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = number.parse().map_err(|_| format!("`{text}` is not a duration like 90s, 5m or 1h"))?;
    let seconds = match unit {
        "s" => value,
        "m" => value * 60,
        "h" => value * 3600,
        _ => {
            return Err(format!("`{text}` has an unknown unit `{unit}`: use s, m or h"));
        }
    };
    Ok(Duration::from_secs(seconds))
}

/// Splits `REPO[@REF]`; an `@` followed by a host or path (as in `git@host:org/repo`) is part
/// of the repository.
pub fn parse_catalog_source(text: &str) -> (String, Option<String>) {
    match text.rsplit_once('@') {
        Some((repo, reference)) if !repo.is_empty() && !reference.is_empty() && !reference.contains([':', '/']) => {
            (repo.to_string(), Some(reference.to_string()))
        }
        _ => (text.to_string(), None),
    }
}

/// Runs the command line and turns the outcome into the process's exit code: 0 when every
/// module succeeded, 1 when one was refused or an invariant broke, 2 when the run could not
/// be made at all.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return report_error(&anyhow::anyhow!("failed to start the async runtime: {e}")),
    };
    match runtime.block_on(execute(cli)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => report_error(&error),
    }
}

fn report_error(error: &anyhow::Error) -> ExitCode {
    let mut text = format!("error: {error}");
    for cause in error.chain().skip(1) {
        text.push_str(&format!("\n  Caused by: {cause}"));
    }
    eprintln!("{text}");
    ExitCode::from(2)
}

async fn execute(cli: Cli) -> Result<bool> {
    let (args, mode) = match cli.command {
        Command::Check(args) => (args, Mode::Check),
        Command::Run(args) => (args, Mode::Adopt),
        Command::Inspect(args) => return inspect(args).map(|()| true),
        Command::Test(args) => return test(args).await,
        Command::New(args) => return new_module(args).map(|()| true),
        Command::Replay(args) => return replay(args).await,
    };
    let modules: Vec<String> = if args.modules.is_empty() {
        PHASE_THREE.iter().map(|m| m.to_string()).collect()
    } else {
        args.modules.clone()
    };
    let catalogue = args.site.catalogue()?;
    let foundation = args.site.foundation()?;
    let options = args.site.options();
    let mesh: Arc<dyn Mesh> = match args.mesh {
        MeshKind::Simulated => Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), &options.node))),
        MeshKind::Live => Arc::new(LiveMesh::new(live_config(args.config.as_deref())?)),
    };
    let style = if args.json { Style::Json } else { Style::Human { verbose: args.verbose } };
    let output = Arc::new(Output::new(style, args.mesh == MeshKind::Live, args.record.as_deref())?);
    output.record_run(&modules, &options, &mesh.summary());
    let observer = output.clone();
    let transcript = Arc::new(Transcript::observed(Box::new(move |event| observer.observe(event))));
    let limits = Limits {
        memory_bytes: args.plugin_memory << 20,
        guest_time: args.plugin_time,
        wall_time: args.plugin_wall_time,
        ..Limits::default()
    };
    let host = with_cache(PluginHost::new(limits).context("failed to start the plugin host")?, &args)?;

    if !args.json {
        println!(
            "{} {} on {}",
            if mode == Mode::Check { "checking" } else { "adopting" },
            modules.join(", "),
            mesh.summary()
        );
    }
    let run = Run {
        host: &host,
        catalogue: &catalogue,
        foundation: &foundation,
        credentials: Arc::new(args.site.credentials()),
        mesh,
        transcript,
        options,
        plugin_overrides: Vec::new(),
    };
    let report = run.run(&modules, mode).await;
    output.finish(&report);
    Ok(report.succeeded())
}

/// The live mesh's configuration: the file given, else `./mesh-adopt.toml` when there is
/// one, else the built-in defaults.
fn live_config(path: Option<&std::path::Path>) -> Result<LiveConfig> {
    match path {
        Some(path) => LiveConfig::load(path),
        None if std::path::Path::new(CONFIG_FILE).is_file() => LiveConfig::load(std::path::Path::new(CONFIG_FILE)),
        None => Ok(LiveConfig::default()),
    }
}

/// Adds the compile cache the arguments ask for. An explicit `--cache` that cannot be used
/// is an error; the default one only a warning, since running without it is only slower.
fn with_cache(host: PluginHost, args: &RunArgs) -> Result<PluginHost> {
    if args.no_cache {
        return Ok(host);
    }
    if let Some(dir) = &args.cache {
        return Ok(host.with_cache(CompileCache::open(dir)?));
    }
    match CompileCache::default_dir().map(|dir| CompileCache::open(&dir)) {
        Some(Ok(cache)) => Ok(host.with_cache(cache)),
        Some(Err(e)) => {
            eprintln!("warning: compiling without a cache: {e:#}");
            Ok(host)
        }
        None => Ok(host),
    }
}

/// Replays a recording against the catalogue's plugins (or one given), and says whether and
/// where the plugin diverged. Exit 0 only when every recorded call was made as recorded.
async fn replay(args: ReplayArgs) -> Result<bool> {
    let recording = read_recording(&args.recording)?;
    let mut calls = recording.calls;
    let mut modules: Vec<String> = Vec::new();
    for call in &calls {
        if !modules.contains(&call.module) {
            modules.push(call.module.clone());
        }
    }
    if let Some(only) = &args.module {
        anyhow::ensure!(
            modules.contains(only),
            "the recording holds no calls of `{only}`; it holds {}",
            modules.join(", ")
        );
        calls.retain(|c| &c.module == only);
        modules = vec![only.clone()];
    }
    let overrides = match (&args.plugin, modules.as_slice()) {
        (None, _) => Vec::new(),
        (Some(plugin), [module]) => vec![(module.clone(), plugin.clone())],
        (Some(_), _) => bail!("the recording holds {}: say which with --module", modules.join(", ")),
    };
    let catalogue = args.site.catalogue()?;
    let foundation = args.site.foundation()?;
    let mesh = Arc::new(ReplayMesh::new(calls));
    let output = Arc::new(Output::new(Style::Human { verbose: args.verbose }, false, None)?);
    let observer = output.clone();
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let options = match recording.options {
        Some(recorded) => args.site.options_over(recorded),
        None => args.site.options(),
    };
    println!(
        "replaying {} of `{}` on node {}, built from {}, waiting up to {}s",
        modules.join(", "),
        args.recording.display(),
        options.node,
        match &options.catalog_source {
            Some((repository, Some(reference))) => format!("{repository}@{reference}"),
            Some((repository, None)) => repository.clone(),
            None => "no catalogue source".into(),
        },
        options.wait.as_secs()
    );
    let run = Run {
        host: &host,
        catalogue: &catalogue,
        foundation: &foundation,
        credentials: Arc::new(args.site.credentials()),
        mesh: mesh.clone(),
        transcript: Arc::new(Transcript::observed(Box::new(move |event| observer.observe(event)))),
        options,
        plugin_overrides: overrides,
    };
    let report = run.run(&modules, Mode::Adopt).await;
    output.finish(&report);
    match mesh.divergence() {
        None => {
            println!("\nreplayed {} calls: the plugin made every recorded call, in order", mesh.answered());
            Ok(true)
        }
        Some(divergence) => {
            println!("\ndiverged at {divergence}");
            Ok(false)
        }
    }
}

/// Writes a new module's plugin and says what to do next.
fn new_module(args: NewArgs) -> Result<()> {
    let made = crate::scaffold::new_module(&args.module, &args.plugins, &args.catalogue)?;
    println!("created {}", made.plugin_dir.display());
    println!("created {}", made.manifest.display());
    println!("created {}", made.scenario.display());
    if !made.joined_workspace {
        println!("add \"{}\" to `members` in {}/Cargo.toml", args.module, args.plugins.display());
    }
    println!("\nnext: `just build-plugins`, then `mesh-adopt test {}`", made.plugin_dir.display());
    Ok(())
}

/// Runs scenarios, a line each; with `--sweep`, sweeps each and reports the figures.
async fn test(args: TestArgs) -> Result<bool> {
    let paths =
        if args.paths.is_empty() { vec![PathBuf::from("plugins"), args.catalogue.clone()] } else { args.paths.clone() };
    let files = scenario::discover(&paths)?;
    if files.is_empty() {
        bail!(
            "no scenarios under {}",
            paths.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", ")
        );
    }
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let (mut passed, mut failed) = (0, 0);
    let mut totals = scenario::SweepResult::default();
    for file in &files {
        let ran = scenario::run(&host, &args.catalogue, &file.scenario, None)
            .await
            .with_context(|| format!("failed to run the scenario `{}`", file.path.display()))?;
        let differences = scenario::differences(&file.scenario, &ran);
        if differences.is_empty() {
            passed += 1;
            println!("ok    {:<40} {}", file.label, file.scenario.name);
        } else {
            failed += 1;
            println!("FAIL  {:<40} {}", file.label, file.scenario.name);
            for difference in differences {
                println!("  {}", difference.replace('\n', "\n  "));
            }
        }
        if args.sweep {
            let swept = scenario::sweep(&host, &args.catalogue, &file.scenario).await?;
            println!(
                "      swept {} steps: {} survived, {} did not converge",
                swept.steps, swept.survived, swept.not_converged
            );
            for problem in &swept.problems {
                println!("      ✗ {}", problem.replace('\n', "\n        "));
            }
            totals.steps += swept.steps;
            totals.survived += swept.survived;
            totals.not_converged += swept.not_converged;
            totals.problems.extend(swept.problems);
        }
    }
    println!("\n{passed} passed, {failed} failed");
    if args.sweep {
        println!(
            "sweep: {} steps swept, {} faults survived, {} runs did not converge",
            totals.steps, totals.survived, totals.not_converged
        );
    }
    Ok(failed == 0 && totals.problems.is_empty())
}

/// Prints what a plugin is, and for a module, what its manifest says of it.
fn inspect(args: InspectArgs) -> Result<()> {
    let as_path = PathBuf::from(&args.target);
    let (path, adopt) = if as_path.is_file() {
        (as_path, None)
    } else {
        let module = Catalogue::at(&args.catalogue).module(&args.target)?;
        println!("module       {} ({})", module.name, module.manifest_path.display());
        (module.plugin_path, Some(module.adopt))
    };
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let info = host.describe(&path)?;
    println!("plugin       {}", info.path.display());
    println!("sha256       {}", info.digest);
    println!("size         {} bytes", info.size);
    println!("targets      {}", info.contract.as_deref().unwrap_or("(no mesh:adopt import)"));
    match &info.loads {
        Ok(()) => println!("loads        yes, on this host ({})", crate::bindings::WORLD),
        Err(why) => println!("loads        no: {why}"),
    }
    if let Some(adopt) = adopt {
        let pin = match &adopt.sha256 {
            None => "(not pinned)".to_string(),
            Some(pin) if pin.eq_ignore_ascii_case(&info.digest) => format!("{pin} (matches)"),
            Some(pin) => format!("{pin} (DIFFERS: the plugin would be refused)"),
        };
        println!("pinned       {pin}");
        println!("world        {}", adopt.world.as_deref().unwrap_or("(not declared)"));
        let list = |items: &[String]| if items.is_empty() { "(none)".to_string() } else { items.join(", ") };
        println!("grants       credentials: {}", list(&adopt.grants.credentials));
        println!("             inspect: {}", list(&adopt.grants.inspect));
        println!("             fetch: {}", list(&adopt.grants.fetch));
    }
    println!("imports      {}", info.imports.join("\n             "));
    println!("exports      {}", info.exports.join(", "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert!(parse_duration("5d").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn splits_catalog_source_refs() {
        assert_eq!(parse_catalog_source("https://h/cat.git@v2"), ("https://h/cat.git".into(), Some("v2".into())));
        assert_eq!(parse_catalog_source("git@h:org/cat.git"), ("git@h:org/cat.git".into(), None));
    }
}
