//! Hands the superuser over as `postgres` does, then plans a second push: the node applies
//! every prepared module at each push, so a second one is never needed and may apply what an
//! earlier step left half-done. Preflight refuses the plan.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::provider::{Command, Provider, typed};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct PushesTwice;

impl Plugin for PushesTwice {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let superuser = Handover::new(ctx, "superuser", "store-superuser", "the store's superuser");
        let mut commands = Provider::new(ctx, "").commands(vec![superuser.command()])?;
        commands.push(typed(&Command::Push { node: ctx.options.node.clone() }));
        Ok(Plan { summary: vec!["push twice".into()], commands })
    }
    fn adopt(_: &Context) -> Result<Report, Refusal> {
        Ok(Report { summary: "never reached".into() })
    }
}

mesh_adopt_sdk::export!(PushesTwice);
