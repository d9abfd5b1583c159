//! `mesh-adopt run`: preflight every module, then adopt each in order, stopping at the first
//! that does not succeed.

use std::path::PathBuf;

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
}

/// Runs preflight, then adopts; held to the saved plans of `--plan` when given.
pub async fn run(args: RunArgs) -> Result<ExitStatus> {
    check_or_run(args.phase, CheckOrRun::Run { plan: args.plan.as_deref() }).await
}
