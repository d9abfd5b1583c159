//! What `check` and `run` share: the arguments of a phase (the modules, the site, the mesh,
//! the sandbox's limits) and the phase itself, preflight then, for `run`, adopt. What only
//! one of them takes (`check --out`, `run --plan`) is in its own arguments, so clap refuses
//! it on the other.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::Args;

use crate::args::{CacheArgs, CodeArg, CodeArgs, ShownArgs, SiteArgs};
use crate::exit::ExitStatus;
use crate::overwrite::refuse_overwriting;
use crate::session::Session;
use mesh_adopt_live::{CONFIG_FILE, LiveConfig, LiveMesh};
use mesh_adopt_runtime::Catalogue;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::options::parse_duration;
use mesh_adopt_runtime::plan::PlanKey;
use mesh_adopt_runtime::plan::SavedPlan;
use mesh_adopt_runtime::{Mode, PHASE_THREE};

/// The mesh backends the CLI can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MeshKind {
    /// A deterministic model of a mesh, on virtual time.
    Simulated,
    /// A real control plane and container engine, as `--config` describes.
    Live,
}

/// The arguments `check` and `run` both take, flattened into each one's own.
#[derive(Debug, Args)]
pub struct PhaseArgs {
    /// Modules to adopt, in order [default: postgres nats mesh-vault].
    pub modules: Vec<String>,
    /// Where the run starts from.
    #[command(flatten)]
    pub site: SiteArgs,
    /// How it is shown.
    #[command(flatten)]
    pub shown: ShownArgs,
    /// Which mesh to act on: the simulator, or a live one reached as `--config` says.
    #[arg(long, value_enum, default_value_t = MeshKind::Simulated)]
    pub mesh: MeshKind,
    /// The live mesh's configuration [default: ./mesh-adopt.toml if present, else built-in].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Memory each plugin may grow to, in MiB [16..=4096].
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = Limits::default().memory_bytes >> 20,
        value_parser = parse_plugin_memory
    )]
    pub plugin_memory: usize,
    /// Where compiled plugins are kept.
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Which native code plugins run as.
    #[command(flatten)]
    pub code: CodeArgs,
    /// Time each plugin's own code may run per call (host waits not counted): 10s, 1m
    /// [1s..=1h].
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_plugin_time)]
    pub plugin_time: Duration,
    /// Time each plugin call may take in all, whatever it waits on (host calls, sleeps), on
    /// the mesh's clock: longer than the longest build and wait it tells [1s..=24h].
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_plugin_wall_time)]
    pub plugin_wall_time: Duration,
}

/// A duration option's value within `min..=max`; out of range, the message names the range.
fn duration_within(text: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let value = parse_duration(text).map_err(|e| e.to_string())?;
    if value < min || value > max {
        return Err(format!("`{text}` is out of range: it must be within {min:?}..={max:?}"));
    }
    Ok(value)
}

/// Reads `--plugin-time`: a plugin's compute time per call, from a second to an hour.
fn parse_plugin_time(text: &str) -> Result<Duration, String> {
    duration_within(text, Duration::from_secs(1), Duration::from_secs(60 * 60))
}

/// Reads `--plugin-wall-time`: a plugin call's time in all, from a second to a day.
fn parse_plugin_wall_time(text: &str) -> Result<Duration, String> {
    duration_within(text, Duration::from_secs(1), Duration::from_secs(24 * 60 * 60))
}

/// Reads `--plugin-memory`: whole MiB, within what a sandbox can be given.
fn parse_plugin_memory(text: &str) -> Result<usize, String> {
    let mib: usize = text.parse().map_err(|_| format!("`{text}` is not a whole number of MiB"))?;
    if !(16..=4096).contains(&mib) {
        return Err(format!("`{text}` MiB is out of range: it must be within 16..=4096"));
    }
    Ok(mib)
}

impl PhaseArgs {
    /// The modules asked for, each a plain name, none twice [default: phase three's].
    fn modules(&self) -> Result<Vec<String>> {
        let catalogue = &self.site.catalogue_dir();
        if self.modules.is_empty() {
            // Phase three is the default only in a catalogue that holds it: in one that holds
            // none of its modules, say what to name. (One missing module is named by the run.)
            let modules = catalogue.join("modules");
            let holds_none = !PHASE_THREE.iter().any(|m| modules.join(m).is_dir());
            if catalogue.is_dir() && holds_none {
                let names = Catalogue::at(catalogue).module_names().unwrap_or_default();
                bail!(
                    "no modules named, and the catalogue `{}` does not hold phase three's ({}) to run by default: \
                     name the modules to run{}",
                    catalogue.display(),
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

    /// Refuses `--config` on the simulated mesh: the option is the live mesh's, and clap
    /// cannot tie an option to another's value.
    fn refuse_config_off_live(&self) -> Result<()> {
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

    /// Refuses a `--record` or `check --out` that would write over one of the run's inputs
    /// (`run --plan`'s among them).
    fn check_outputs(&self, phase: &CheckOrRun) -> Result<()> {
        // Before anything runs: a plan that could not be saved at the end is no check.
        if let Some(out) = phase.out() {
            mesh_adopt_runtime::files::output_file(out, "a plan")?;
        }
        let mut inputs = self.site.inputs();
        inputs.extend(self.config.clone());
        inputs.extend(phase.plan().map(Path::to_path_buf));
        refuse_overwriting(
            &[("--record", self.shown.record.as_deref()), ("--out", phase.out())],
            &inputs,
            "the configuration and the plan",
        )
    }
}

/// Which of the two commands runs the phase, with the saved plan only it takes.
pub enum CheckOrRun<'a> {
    /// `check`: preflight only; `--out` saves every module's plan to that file.
    Check {
        /// `--out PLAN`.
        out: Option<&'a Path>,
    },
    /// `run`: preflight, then adopt; `--plan` holds the run to the plans saved in that file.
    Run {
        /// `--plan PLAN`.
        plan: Option<&'a Path>,
        /// `--lock-timeout`: how long to wait for the mesh's lock another run holds.
        lock_timeout: Duration,
    },
}

impl CheckOrRun<'_> {
    /// What the run does: only check, or go on to adopt.
    fn mode(&self) -> Mode {
        match self {
            CheckOrRun::Check { .. } => Mode::Check,
            CheckOrRun::Run { .. } => Mode::Adopt,
        }
    }

    /// Where `check --out` saves the plans.
    fn out(&self) -> Option<&Path> {
        match self {
            CheckOrRun::Check { out } => *out,
            CheckOrRun::Run { .. } => None,
        }
    }

    /// The plans `run --plan` is held to.
    fn plan(&self) -> Option<&Path> {
        match self {
            CheckOrRun::Run { plan, .. } => *plan,
            CheckOrRun::Check { .. } => None,
        }
    }
}

/// The key saved plans' credentials are digested with, kept with this user's state.
fn plan_key() -> Result<PlanKey> {
    let dir = PlanKey::default_dir()
        .context("no place for the plan key: set XDG_STATE_HOME or HOME (a saved plan needs one)")?;
    Ok(PlanKey::open(&dir)?)
}

/// `check` (preflight only, `--out` saves the plans) and `run` (preflight, then adopt, held
/// to `--plan` when given).
pub async fn check_or_run(args: PhaseArgs, phase: CheckOrRun<'_>) -> Result<ExitStatus> {
    let mode = phase.mode();
    let guarded = Session::guard(&args.site)?;
    args.refuse_config_off_live()?;
    let modules = args.modules()?;
    args.check_outputs(&phase)?;
    let options = args.site.options()?;
    let session = guarded.open(&args.site, args.shown.output(args.mesh == MeshKind::Live)?)?;
    let saved_plan = phase.plan().map(SavedPlan::read).transpose()?;
    let mesh: Arc<dyn Mesh> = match args.mesh {
        MeshKind::Simulated => Arc::new(SimulatedMesh::new(SimSetup::new(session.foundation.clone(), &options.node))),
        MeshKind::Live => {
            let config = live_config(args.config.as_deref())?;
            session.clear_config(&config, live_config_file(args.config.as_deref()))?;
            Arc::new(LiveMesh::new(config))
        }
    };
    // Said before anything is shown, as any option that cannot be used is; the run refuses it too.
    mesh.serves(&options.node).map_err(anyhow::Error::msg)?;
    let cleared = session.clear(options, mesh)?;
    let output = &session.output;
    let host = args.cache.host(args.limits(), args.code.policy(CodeArg::Auto))?;
    output.line(&format!(
        "{} {} on {}",
        if mode == Mode::Check { "checking" } else { "adopting" },
        modules.join(", "),
        cleared.mesh().summary()
    ));
    let mut run = session.run(&host, cleared);
    if phase.out().is_some() || saved_plan.is_some() {
        run = run.plan_key(plan_key()?);
    }
    if let Some(saved) = saved_plan {
        run = run.saved_plan(saved);
    }
    if let CheckOrRun::Run { lock_timeout, .. } = &phase {
        run = run.lock_timeout(*lock_timeout);
    }
    let run = run.build();
    let Some(report) = session.drive(&run, &modules, mode).await else { return Ok(ExitStatus::Interrupted) };
    let status = report.exit_status();
    if let (Some(out), ExitStatus::Success) = (phase.out(), status) {
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
    output.finish(&run, &report, &[], status);
    Ok(status)
}

/// The live mesh's configuration: the file given, else `./mesh-adopt.toml` when there is
/// one, else the built-in defaults.
pub(crate) fn live_config(path: Option<&Path>) -> Result<LiveConfig> {
    match live_config_file(path) {
        Some(path) => Ok(LiveConfig::load(path)?),
        None => Ok(LiveConfig::default()),
    }
}

/// The file the live mesh's configuration is read from: the one given, else
/// `./mesh-adopt.toml` when there is one (one that is there but is no file is an error, not a
/// reason to fall back to the defaults the operator meant to replace); `None`: the built-in
/// defaults.
pub(crate) fn live_config_file(path: Option<&Path>) -> Option<&Path> {
    match path {
        Some(path) => Some(path),
        None if Path::new(CONFIG_FILE).symlink_metadata().is_ok() => Some(Path::new(CONFIG_FILE)),
        None => None,
    }
}
