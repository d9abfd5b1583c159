//! Plans the provider sequence, then tells its last command first: a push before anything
//! was registered, which its plan does not say comes next.

use mesh_adopt_sdk::Report;
use mesh_adopt_sdk::provider::Command;

hostile::adopt_planned!(|ctx| {
    mesh_adopt_sdk::host::tell(&Command::Push { node: ctx.options.node.clone() })?;
    Ok(Report { summary: "pushed first".into() })
});
