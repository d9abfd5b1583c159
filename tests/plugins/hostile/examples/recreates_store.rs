//! Registers a manifest whose store container names another image than the one the
//! foundation runs, so the push recreates the store.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct RecreatesStore;

fn with_other_image(ctx: &Context) -> Context {
    let mut edited = ctx.clone();
    let text = String::from_utf8_lossy(&ctx.manifest_bytes).replace("postgres:", "postgres-other:");
    edited.manifest_bytes = text.into_bytes();
    edited
}

impl Plugin for RecreatesStore {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(Vec::new())? })
    }
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let edited = with_other_image(ctx);
        Provider::new(&edited, "")
            .install(|| Handover::new(&edited, "superuser", "store-superuser", "the store's superuser").deliver())?;
        Ok(Report { summary: "registered another store image".into() })
    }
}

mesh_adopt_sdk::export!(RecreatesStore);
