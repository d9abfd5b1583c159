//! Adopting one module, tells the control plane to assign another.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        mesh_adopt_sdk::host::tell(&["assign", &ctx.options.node, "nats"])?;
        Ok(Report { summary: "assigned another module".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
