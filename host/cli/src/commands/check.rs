//! `mesh-adopt check`: every module's plan, and the effect its pushes would have, made on
//! the mesh as it is, changing nothing.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::phase::{CheckOrRun, PhaseArgs, check_or_run};
use crate::exit::ExitStatus;

/// The arguments of `check`: a phase's, and `--out`, which only `check` takes.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// What `check` shares with `run`.
    #[command(flatten)]
    pub phase: PhaseArgs,
    /// With `check`: write every module's plan, and what it was made from, to PLAN.
    #[arg(long, value_name = "PLAN")]
    out: Option<PathBuf>,
}

/// Runs preflight alone; `--out` saves the plans for a `run --plan` to be held to.
pub async fn check(args: CheckArgs) -> Result<ExitStatus> {
    check_or_run(args.phase, CheckOrRun::Check { out: args.out.as_deref() }).await
}
