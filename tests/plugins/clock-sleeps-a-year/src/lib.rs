//! Asks the contract's clock to sleep a year, then registers its module: the wall deadline
//! must stop it at the deadline.

hostile_kit::adopt_only!(|ctx| {
    mesh_adopt_sdk::host::sleep_millis(365 * 24 * 60 * 60 * 1000);
    let remote = format!("/{}-module.json", ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
    mesh_adopt_sdk::host::tell(&["module", "add", &remote])?;
    Ok(mesh_adopt_sdk::Report { summary: "slept a year".into() })
});
