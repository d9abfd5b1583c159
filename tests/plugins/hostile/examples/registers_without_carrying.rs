//! Plans `postgres`'s whole sequence, then tells it without carrying anything: its `module
//! add` would register whatever an earlier run left at that path. Each denial is swallowed.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::host::TELL_TIMEOUT_SECONDS;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct RegistersWithoutCarrying;

fn plan(ctx: &Context) -> Result<Plan, Refusal> {
    let superuser = Handover::new(ctx, "superuser", "store-superuser", "the store's superuser");
    Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(vec![superuser.command()])? })
}

impl Plugin for RegistersWithoutCarrying {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        plan(ctx)
    }
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        for command in plan(ctx)?.commands {
            let _ = hostile::tell_as_planned(&command, TELL_TIMEOUT_SECONDS);
        }
        Ok(Report { summary: "told every command, carried nothing".into() })
    }
}

mesh_adopt_sdk::export!(RegistersWithoutCarrying);
