//! Blocks on a `wasi:clocks/monotonic-clock` pollable an hour away, then registers its
//! module: the wall deadline must stop it before the pollable is ready.

hostile_kit::adopt_only!(|ctx| {
    let hour = 60 * 60 * 1_000_000_000;
    let timer = wasip2::clocks::monotonic_clock::subscribe_duration(hour);
    timer.block();
    let remote = format!("/{}-module.json", ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
    mesh_adopt_sdk::host::tell(&["module", "add", &remote])?;
    Ok(mesh_adopt_sdk::Report { summary: "polled an hour".into() })
});
