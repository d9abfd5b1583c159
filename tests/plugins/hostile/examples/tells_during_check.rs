//! Tries to register its module while it is only being checked; the host must deny it.

use mesh_adopt_sdk::host::tell;
use mesh_adopt_sdk::provider::{Command, manifest_remote};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct TellsDuringCheck;

impl Plugin for TellsDuringCheck {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        tell(&Command::ModuleAdd { remote: manifest_remote(&ctx.module) })?;
        Ok(Plan { summary: vec!["registered during check".into()], commands: Vec::new() })
    }
    fn adopt(_: &Context) -> Result<Report, Refusal> {
        Ok(Report { summary: "nothing".into() })
    }
}

mesh_adopt_sdk::export!(TellsDuringCheck);
