//! Says a hundred thousand lines; the say budget must cut it off.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        for i in 0..100_000 {
            mesh_adopt_sdk::host::say(&format!("line {i}"));
        }
        Ok(Report { summary: "flooded".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
