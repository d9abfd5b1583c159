//! `mesh-adopt run`: preflight every module, then adopt each in order, stopping at the first
//! that does not succeed.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use super::phase::{CheckOrRun, PhaseArgs, check_or_run};
use crate::exit::ExitStatus;

/// The arguments of `run`: a phase's, and `--plan`, which only `run` takes.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// What `run` shares with `check`.
    #[command(flatten)]
    pub phase: PhaseArgs,
    /// With `run`: adopt only if the inputs and the plans made now are those saved in PLAN
    /// by `check --out`.
    #[arg(long, value_name = "PLAN")]
    plan: Option<PathBuf>,
    /// How long to wait for the mesh's lock another run holds: 30s, 5m [default: 0, refused
    /// at once; at most 24h].
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = parse_lock_timeout)]
    lock_timeout: Duration,
}

/// Reads `--lock-timeout`: from nothing (refused at once) to a day.
fn parse_lock_timeout(text: &str) -> Result<Duration, String> {
    let value = mesh_adopt_runtime::options::parse_duration(text).map_err(|e| e.to_string())?;
    if value > Duration::from_secs(24 * 60 * 60) {
        return Err(format!("`{text}` is out of range: a run waits for the lock at most 24h"));
    }
    Ok(value)
}

/// Runs preflight, then adopts; held to the saved plans of `--plan` when given.
pub async fn run(args: RunArgs) -> Result<ExitStatus> {
    check_or_run(args.phase, CheckOrRun::Run { plan: args.plan.as_deref(), lock_timeout: args.lock_timeout }).await
}
