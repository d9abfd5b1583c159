//! Asks for each credential its manifest lists under `hostile-credentials`, to reach past
//! the credentials directory, and carries what it gets.

use mesh_adopt_sdk::host::{carry_secret, credential};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report, refuse};

struct Hostile;

impl Plugin for Hostile {
    fn check(_: &Context) -> Result<Plan, Refusal> {
        Ok(Plan { summary: Vec::new(), commands: Vec::new() })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let manifest: serde_json::Value = serde_json::from_slice(&ctx.manifest).unwrap_or_default();
        let names = manifest["hostile-credentials"].as_array().cloned().unwrap_or_default();
        for name in names.iter().filter_map(|n| n.as_str()) {
            let secret = credential(name).map_err(|e| refuse(format!("credential `{name}`: {}", e.reason())))?;
            carry_secret(&secret, "/accepting-stolen")?;
        }
        Ok(Report { summary: "reached every credential".into() })
    }
}

mesh_adopt_sdk::export!(Hostile);
