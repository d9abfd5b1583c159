//! Registers its module, then panics.

hostile_kit::adopt_planned!(|ctx| {
    let remote = format!("/{}-module.json", ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
    mesh_adopt_sdk::host::tell(&["module", "add", &remote])?;
    panic!("the plugin lost its footing after registering {}", ctx.module);
});
