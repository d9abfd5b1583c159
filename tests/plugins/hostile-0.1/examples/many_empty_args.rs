//! Tells a command of two million empty arguments: under the byte limit, far over any
//! command's length.

use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct ManyEmptyArgs;

impl Plugin for ManyEmptyArgs {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    fn adopt(_: &Context) -> Result<Report, Refusal> {
        let args = vec![""; 2_000_000];
        mesh_adopt_sdk::host::tell(&args)?;
        Ok(Report { summary: "told".into() })
    }
}

mesh_adopt_sdk::export!(ManyEmptyArgs);
