//! `mesh-adopt run`: preflight every module, then adopt each in order, stopping at the first
//! that does not succeed.

use anyhow::Result;

use mesh_adopt_runtime::run::Mode;

use super::phase::{PhaseArgs, check_or_run};
use crate::exit::ExitStatus;

/// Runs preflight, then adopts; held to the saved plans of `--plan` when given.
pub async fn run(args: PhaseArgs) -> Result<ExitStatus> {
    check_or_run(args, Mode::Adopt).await
}
