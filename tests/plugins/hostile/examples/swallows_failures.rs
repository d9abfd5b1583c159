//! The mesh-vault rules made to lie: every command of the plan is told, every failure is
//! ignored, and the run reports success. No invariant breaks and a second run converges, so
//! only a sweep that holds a reported success to the clean run's end catches it.

use mesh_adopt_sdk::bindings::mesh::adopt::types::Command;
use mesh_adopt_sdk::host::{TELL_TIMEOUT_SECONDS, carry_bytes};
use mesh_adopt_sdk::provider::{BUILD_TIMEOUT_SECONDS, Provider};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct SwallowsFailures;

impl Plugin for SwallowsFailures {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(Vec::new())? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let provider = Provider::new(ctx, "");
        let _ignored =
            carry_bytes(&format!("{}-module.json", ctx.module), &ctx.manifest_bytes, &provider.manifest_remote());
        for command in provider.commands(Vec::new())? {
            let timeout =
                if matches!(command, Command::Build(_)) { BUILD_TIMEOUT_SECONDS } else { TELL_TIMEOUT_SECONDS };
            let _ignored = hostile::tell_as_planned(&command, timeout);
        }
        Ok(Report { summary: "adopted, whatever the mesh said".into() })
    }
}

mesh_adopt_sdk::export!(SwallowsFailures);
