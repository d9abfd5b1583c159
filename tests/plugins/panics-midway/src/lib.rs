//! Registers its module, then panics.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let remote = format!("/{}-module.json", ctx.module);
        mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
        mesh_adopt_sdk::host::tell(&["module", "add", &remote])?;
        panic!("the plugin lost its footing after registering {}", ctx.module);
    }
}

mesh_adopt_sdk::export!(Hostile);
