//! `mesh-adopt replay`: a recorded run's plugins answered from its recording, to find the
//! first call where a plugin no longer does what it did. The replay reads the catalogue,
//! foundation and credentials the recording names, from wherever it is started, and goes as
//! far as the recorded run went: no further than where an interrupted one stopped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::Args;

use crate::args::{ShownArgs, SiteArgs};
use crate::exit::ExitStatus;
use crate::overwrite::refuse_overwriting;
use crate::session::Session;
use mesh_adopt_runtime::Limits;
use mesh_adopt_runtime::Mode;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::events::{self, CallEvent};
use mesh_adopt_runtime::mesh::replay::{Interruption, Recording, ReplayMesh, read_recording};

/// The arguments of `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A recording made with `run --record FILE`.
    recording: PathBuf,
    /// A plugin to replay instead of the catalogue's (needs --module when the recording
    /// holds several).
    #[arg(long, value_name = "ADOPT.WASM")]
    plugin: Option<PathBuf>,
    /// The module to replay [default: every module the recording holds, in its order].
    #[arg(long)]
    module: Option<String>,
    /// Where the replayed run starts from; its options default to the recorded ones.
    #[command(flatten)]
    site: SiteArgs,
    /// How the replay is shown.
    #[command(flatten)]
    pub shown: ShownArgs,
}

/// Replays a recording against the catalogue's plugins (or one given), and says whether and
/// where the plugin diverged. Exit 0 only when every recorded call was made as recorded.
pub async fn replay(mut args: ReplayArgs) -> Result<ExitStatus> {
    // The recording names the catalogue and credentials the replay reads: known before the
    // guard learns the credentials. Its errors wait for the guard, as they always did.
    let recording = read_recording(&args.recording);
    if let Ok(recording) = &recording {
        take_recorded_site(&mut args.site, recording, &args.recording)?;
    }
    let guarded = Session::guard(&args.site)?;
    let recording = recording?;
    let interrupted = recording.interrupted.clone();
    let (modules, calls) = replayed(recording.calls, args.module.as_deref())?;
    let overrides = match (&args.plugin, modules.as_slice()) {
        (None, _) => Vec::new(),
        (Some(plugin), [module]) => vec![(module.clone(), plugin.clone())],
        (Some(_), _) => bail!("the recording holds {}: say which with --module", modules.join(", ")),
    };
    let mut inputs = args.site.inputs();
    inputs.push(args.recording.clone());
    inputs.extend(args.plugin.clone());
    refuse_overwriting(&[("--record", args.shown.record.as_deref())], &inputs, "the recording and the plugin")?;
    let session = guarded.open(&args.site, args.shown.output(false)?)?;
    let rereads =
        recording.rereads.into_iter().filter(|r| args.module.as_ref().is_none_or(|m| *m == r.module)).collect();
    let mut mesh = ReplayMesh::new(calls, recording.seed).with_rereads(rereads);
    if let Some(stop) = interrupted {
        mesh = mesh.interrupted(only_of(stop, args.module.as_deref()));
    }
    let mesh = Arc::new(mesh);
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let cleared = session.clear(args.site.options_over(recording.options)?, mesh.clone())?;
    let output = &session.output;
    let options = cleared.options();
    output.line(&format!(
        "replaying {} of `{}` with the catalogue `{}` on node {}, built from {}, waiting up to {}s",
        modules.join(", "),
        args.recording.display(),
        session.catalogue.root().display(),
        options.node,
        options.source_words(),
        options.wait.as_secs()
    ));
    let mut run = session.run(&host, cleared);
    for (module, path) in overrides {
        run = run.plugin_override(&module, path);
    }
    let run = run.command(events::Command::Replay).build();
    let Some(report) = session.drive(&run, &modules, Mode::Adopt).await else { return Ok(ExitStatus::Interrupted) };
    let divergence = mesh.divergence();
    let verdict = events::Event::Replay(events::ReplayEvent {
        recording: args.recording.display().to_string(),
        answered: mesh.answered() as u64,
        divergence: divergence.clone(),
        interrupted: mesh.interruption(),
    });
    // A plugin or catalogue that cannot be used is bad input, as in a run: not a divergence.
    let status = match (&divergence, report.exit_status()) {
        (_, ExitStatus::Unusable) => ExitStatus::Unusable,
        (None, _) => ExitStatus::Success,
        (Some(_), _) => ExitStatus::Failed,
    };
    let ending = match status {
        ExitStatus::Failed => Some((mesh_adopt_runtime::report::Ending::ReplayDiverged, None)),
        _ => report.ending().map(|code| (code, report.remedy())),
    };
    output.finish_as(&run, &report, &[verdict], status, ending);
    match divergence {
        None => output.line(&format!(
            "\nreplayed {} calls: the plugin made every recorded call, in order{}",
            mesh.answered(),
            mesh.interruption().map_or(String::new(), |stop| format!(
                ", up to where the recorded run was interrupted ({}){}: the replay went no further",
                stop.signal,
                stop.during.map_or(String::new(), |call| format!(" during {call}"))
            ))
        )),
        Some(_) if status == ExitStatus::Unusable => {
            output.line("\nnot replayed: a plugin could not be used (see above)")
        }
        Some(divergence) => output.line(&format!("\ndiverged at {divergence}")),
    }
    Ok(status)
}

/// The catalogue, foundation and credentials the recording names, for those the command line
/// leaves to it: with `--catalogue`, none (the foundation and credentials default to that
/// catalogue's); without, the recorded catalogue, and the recorded foundation and
/// credentials unless `--foundation` or `--credentials` says otherwise. A recording that
/// names none (its run's catalogue was held in memory) leaves the defaults.
fn take_recorded_site(site: &mut SiteArgs, recording: &Recording, path: &Path) -> Result<()> {
    let Some(recorded) = recording.catalogue.as_ref().filter(|_| site.catalogue.is_none()) else { return Ok(()) };
    let dir = PathBuf::from(&recorded.dir);
    if !dir.is_dir() {
        bail!(
            "the recording `{}` was made with the catalogue `{}`, which is not a directory here (pass --catalogue DIR)",
            path.display(),
            dir.display()
        );
    }
    site.catalogue = Some(dir);
    site.foundation = site.foundation.take().or_else(|| recorded.foundation.as_ref().map(PathBuf::from));
    site.credentials = site.credentials.take().or_else(|| recorded.credentials.as_ref().map(PathBuf::from));
    Ok(())
}

/// Where the recorded run was interrupted, as a replay of `only` (one module's calls) sees it:
/// a call in flight of another module's is not one this replay makes.
fn only_of(stop: Interruption, only: Option<&str>) -> Interruption {
    match (&stop.during, only) {
        (Some((module, _)), Some(only)) if module != only => Interruption { during: None, ..stop },
        _ => stop,
    }
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
