//! Installs `mesh-vault` by the plain provider sequence, but refuses whenever its container
//! already runs: so every second run of it refuses, though each first run adopts.

use mesh_adopt_sdk::host::inspect;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report, refuse};

struct RefusesOnceInstalled;

fn not_yet_installed() -> Result<(), Refusal> {
    match inspect("mesh-vault") {
        Ok(Some(_)) => Err(refuse("already-installed", "`mesh-vault` already runs; refusing to install it again")),
        _ => Ok(()),
    }
}

impl Plugin for RefusesOnceInstalled {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        not_yet_installed()?;
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(Vec::new())? })
    }
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| Ok(()))?;
        Ok(Report { summary: "installed".into() })
    }
}

mesh_adopt_sdk::export!(RefusesOnceInstalled);
