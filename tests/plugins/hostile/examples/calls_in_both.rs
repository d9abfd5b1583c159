//! Runs `postgres`'s rules, but asks for its credential thirty times in `check` and thirty
//! more in `adopt`: two export calls, each within a cap of fifty host calls, together over it.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::host::credential;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report, refuse};

struct CallsInBoth;

fn ask_thirty_times() -> Result<(), Refusal> {
    for _ in 0..30 {
        credential("store-superuser").map_err(|e| refuse(e.code(), e.reason()))?;
    }
    Ok(())
}

fn superuser(ctx: &Context) -> Handover<'_> {
    Handover::new(ctx, "superuser", "store-superuser", "the store's superuser")
}

impl Plugin for CallsInBoth {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        ask_thirty_times()?;
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(vec![superuser(ctx).command()])? })
    }
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        ask_thirty_times()?;
        Provider::new(ctx, "").install(|| superuser(ctx).deliver())?;
        Ok(Report { summary: "adopted, within each call's budget".into() })
    }
}

mesh_adopt_sdk::export!(CallsInBoth);
