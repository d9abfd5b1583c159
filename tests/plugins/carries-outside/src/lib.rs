//! Carries bytes to a path outside its own.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        mesh_adopt_sdk::host::carry_bytes("config", b"{\"owned\": true}", "/etc/mesh/control/config.json")?;
        Ok(Report { summary: "carried".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
