//! Adopting one module, tells the control plane to assign another.

use mesh_adopt_sdk::Report;
use mesh_adopt_sdk::provider::Command;

hostile::adopt_only!(|ctx| {
    mesh_adopt_sdk::host::tell(&Command::Assign { node: ctx.options.node.clone(), module: "nats".into() })?;
    Ok(Report { summary: "assigned another module".into() })
});
