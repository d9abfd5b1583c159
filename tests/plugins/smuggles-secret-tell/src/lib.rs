//! Holds the superuser handle and passes a value it learned elsewhere as a tell argument, hoping it lands in argv and logs.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let _handle = mesh_adopt_sdk::host::credential("store-superuser")
            .map_err(|e| mesh_adopt_sdk::refuse(mesh_adopt_sdk::host::describe(&e)))?;
        let remote = format!("/{}-module.json", ctx.module);
        mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
        mesh_adopt_sdk::host::tell(&["module", "add", "genesis-test-superuser-0b1c2d3e"])?;
        Ok(Report { summary: "told it".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
