//! Runs the provider sequence for `postgres` without delivering the superuser first, so the
//! push seals random bytes over the credential the running store already has.

use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct PushesBeforeSecret;

impl Plugin for PushesBeforeSecret {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(Vec::new())? })
    }
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| Ok(()))?;
        Ok(Report { summary: "pushed without the superuser".into() })
    }
}

mesh_adopt_sdk::export!(PushesBeforeSecret);
