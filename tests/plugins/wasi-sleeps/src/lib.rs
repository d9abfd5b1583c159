//! Sleeps an hour through WASI (`std::thread::sleep`), then registers its module: the wall
//! deadline must stop it before it wakes.

use std::time::Duration;

hostile_kit::adopt_only!(|ctx| {
    std::thread::sleep(Duration::from_secs(60 * 60));
    let remote = format!("/{}-module.json", ctx.module);
    mesh_adopt_sdk::host::carry_bytes("manifest", &ctx.manifest, &remote)?;
    mesh_adopt_sdk::host::tell(&["module", "add", &remote])?;
    Ok(mesh_adopt_sdk::Report { summary: "slept an hour".into() })
});
