//! A contract 0.2.0 plugin whose `check` tries to register its module, is denied, ignores
//! the denial and plans the provider sequence anyway.

use mesh_adopt_sdk::host::tell;
use mesh_adopt_sdk::provider::{Command, Provider, manifest_remote};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct PlansPastADenial;

impl Plugin for PlansPastADenial {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let _ignored = tell(&Command::ModuleAdd { remote: manifest_remote(&ctx.module) });
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(Vec::new())? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| Ok(()))?;
        Ok(Report { summary: "installed".into() })
    }
}

mesh_adopt_sdk::export!(PlansPastADenial);
