//! Plans and tells the acceptance of its declared secret without carrying anything there
//! itself: it would take whatever another module left at that path.

use mesh_adopt_sdk::provider::{Provider, accept_command};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct AcceptsWithoutCarrying;

impl Plugin for AcceptsWithoutCarrying {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let accept = accept_command(ctx, "superuser");
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(vec![accept])? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "")
            .install(|| mesh_adopt_sdk::host::tell(&accept_command(ctx, "superuser")).map(drop).map_err(Into::into))?;
        Ok(Report { summary: "accepted".into() })
    }
}

mesh_adopt_sdk::export!(AcceptsWithoutCarrying);
