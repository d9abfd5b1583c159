//! Fetches a URL its manifest does not grant.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    #[allow(unreachable_code, unused_variables)]
    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let got = mesh_adopt_sdk::host::fetch("http://169.254.169.254/latest/meta-data/")
            .map_err(|e| mesh_adopt_sdk::refuse(mesh_adopt_sdk::host::describe(&e)))?;
        Ok(Report { summary: got.body })
    }
}

mesh_adopt_sdk::export!(Hostile);
