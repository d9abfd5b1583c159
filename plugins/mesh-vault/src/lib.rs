//! The `mesh-vault` module: nothing to adopt and nothing to carry in. It is installed by the
//! plain provider sequence and from its first push keeps the export of every operator-sealed
//! secret on its own disk.

use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct MeshVault;

impl Plugin for MeshVault {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        Ok(Plan {
            summary: vec![format!("install `{}` from the catalogue; nothing adopted", ctx.module)],
            commands: Provider::new(ctx, "").commands(Vec::new())?,
        })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| Ok(()))?;
        let summary =
            format!("{} installed: the operator-sealed export lives on this node, outside the store", ctx.module);
        say(&summary);
        Ok(Report { summary })
    }
}

mesh_adopt_sdk::export!(MeshVault);
