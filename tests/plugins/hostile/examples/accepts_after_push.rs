//! Plans the superuser's hand-over after the push instead of before it: by then the node has
//! sealed fresh bytes over the password the running store has. Preflight refuses the plan.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::provider::{Provider, typed};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct AcceptsAfterPush;

impl Plugin for AcceptsAfterPush {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let superuser = Handover::new(ctx, "superuser", "store-superuser", "the store's superuser");
        let mut commands = Provider::new(ctx, "").commands(Vec::new())?;
        commands.push(typed(&superuser.command()));
        Ok(Plan { summary: vec!["accept after the push".into()], commands })
    }
    fn adopt(_: &Context) -> Result<Report, Refusal> {
        Ok(Report { summary: "never reached".into() })
    }
}

mesh_adopt_sdk::export!(AcceptsAfterPush);
