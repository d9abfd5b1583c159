//! `mesh-adopt check`: every module's plan, and the effect its pushes would have, made on
//! the mesh as it is, changing nothing.

use anyhow::Result;

use mesh_adopt_runtime::run::Mode;

use super::phase::{PhaseArgs, check_or_run};
use crate::exit::ExitStatus;

/// Runs preflight alone; `--out` saves the plans for a `run --plan` to be held to.
pub async fn check(args: PhaseArgs) -> Result<ExitStatus> {
    check_or_run(args, Mode::Check).await
}
