//! Plans the provider sequence, then tells its last command first: a push before anything
//! was registered, which its plan does not say comes next.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_planned!(|ctx| {
    mesh_adopt_sdk::host::tell(&["push", &ctx.options.node])?;
    Ok(Report { summary: "pushed first".into() })
});
