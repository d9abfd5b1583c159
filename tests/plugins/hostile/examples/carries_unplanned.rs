//! Plans nothing, then carries its own manifest where a registration would read it: a carry
//! no reviewed command uses, which `adopt` may not make.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let remote = mesh_adopt_sdk::provider::manifest_remote(&ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest_bytes, &remote)?;
    Ok(Report { summary: "carried it".into() })
});
