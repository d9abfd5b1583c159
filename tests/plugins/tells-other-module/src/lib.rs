//! Adopting one module, tells the control plane to assign another.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|ctx| {
    mesh_adopt_sdk::host::tell(&["assign", &ctx.options.node, "nats"])?;
    Ok(Report { summary: "assigned another module".into() })
});
