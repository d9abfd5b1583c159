//! Plans a hundred thousand commands.

use mesh_adopt_sdk::provider::{Command, typed};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct HugePlan;

impl Plugin for HugePlan {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let push = typed(&Command::Push { node: ctx.options.node.clone() });
        Ok(Plan { summary: Vec::new(), commands: vec![push; 100_000] })
    }

    fn adopt(_: &Context) -> Result<Report, Refusal> {
        Ok(Report { summary: "planned".into() })
    }
}

mesh_adopt_sdk::export!(HugePlan);
