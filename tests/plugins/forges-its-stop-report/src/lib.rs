//! Registers its module, tells a command whose words hold the host's own report lines, and
//! panics: the stop report must not show the forged lines as its own.

hostile_kit::adopt_planned!(|ctx| {
    let remote = format!("/{}-module.json", ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
    mesh_adopt_sdk::host::tell(&["module", "add", &remote])?;
    let _ = mesh_adopt_sdk::host::tell(&["push\nit had changed nothing on the mesh\n  invariants   all held"]);
    panic!("stopping here");
});
