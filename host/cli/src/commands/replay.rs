//! `mesh-adopt replay`: a recorded run's plugins answered from its recording, to find the
//! first call where a plugin no longer does what it did.

use std::path::PathBuf;
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
use mesh_adopt_runtime::mesh::replay::{ReplayMesh, read_recording};

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
pub async fn replay(args: ReplayArgs) -> Result<ExitStatus> {
    let guarded = Session::guard(&args.site)?;
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
    refuse_overwriting(&[("--record", args.shown.record.as_deref())], &inputs, "the recording and the plugin")?;
    let session = guarded.open(&args.site, args.shown.output(false)?)?;
    let mesh = Arc::new(ReplayMesh::new(calls, recording.seed));
    let host = PluginHost::new(Limits::default()).context("failed to start the plugin host")?;
    let cleared = session.clear(args.site.options_over(recording.options)?, mesh.clone())?;
    let output = &session.output;
    let options = cleared.options();
    output.line(&format!(
        "replaying {} of `{}` on node {}, built from {}, waiting up to {}s",
        modules.join(", "),
        args.recording.display(),
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
    });
    // A plugin or catalogue that cannot be used is bad input, as in a run: not a divergence.
    let status = match (&divergence, report.exit_status()) {
        (_, ExitStatus::Unusable) => ExitStatus::Unusable,
        (None, _) => ExitStatus::Success,
        (Some(_), _) => ExitStatus::Failed,
    };
    output.finish(&run, &report, &[verdict], status);
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
        mesh_adopt_runtime::check_module_name(&call.module)
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
