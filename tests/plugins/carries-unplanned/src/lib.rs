//! Plans nothing, then carries its own manifest where a registration would read it: a carry
//! no reviewed command uses, which `adopt` may not make.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|ctx| {
    let remote = format!("/{}-module.json", ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
    Ok(Report { summary: "carried it".into() })
});
