//! Tells a command with a mebibyte of arguments.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let blob = "x".repeat(1 << 20);
        mesh_adopt_sdk::host::tell(&["module", "add", &blob])?;
        Ok(Report { summary: "told".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
