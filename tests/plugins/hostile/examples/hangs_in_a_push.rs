//! Plans one push and tells it allowing an hour: on a control plane that never answers, only
//! the wall deadline ends the call.

use mesh_adopt_sdk::provider::{Command, typed};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct HangsInAPush;

fn push(ctx: &Context) -> Command {
    Command::Push { node: ctx.options.node.clone() }
}

impl Plugin for HangsInAPush {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: vec![typed(&push(ctx))] })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        mesh_adopt_sdk::host::tell_within(&push(ctx), 3600)?;
        Ok(Report { summary: "pushed".into() })
    }
}

mesh_adopt_sdk::export!(HangsInAPush);
