//! A contract 0.2.0 plugin that plans the plain provider sequence, then tells a typed push
//! whose node is an option: typed commands are checked as words are.

use mesh_adopt_sdk::host::tell;
use mesh_adopt_sdk::provider::{Command, Provider};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct OptionAsNode;

impl Plugin for OptionAsNode {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(Vec::new())? })
    }

    fn adopt(_ctx: &Context) -> Result<Report, Refusal> {
        tell(&Command::Push { node: "--all".into() })?;
        Ok(Report { summary: "pushed every node".into() })
    }
}

mesh_adopt_sdk::export!(OptionAsNode);
