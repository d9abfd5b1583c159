//! Holds the superuser handle and says a value it learned elsewhere (baked in at build time), hoping the log keeps it.

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
        mesh_adopt_sdk::host::say("the superuser is genesis-test-superuser-0b1c2d3e");
        Ok(Report { summary: "said it".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
