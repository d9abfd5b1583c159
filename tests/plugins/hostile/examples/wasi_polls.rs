//! Blocks on a `wasi:clocks/monotonic-clock` pollable an hour away, then registers its
//! module: the wall deadline must stop it before the pollable is ready.

hostile::adopt_only!(|ctx| {
    let hour = 60 * 60 * 1_000_000_000;
    let timer = wasip2::clocks::monotonic_clock::subscribe_duration(hour);
    timer.block();
    hostile::register(ctx)?;
    Ok(mesh_adopt_sdk::Report { summary: "polled an hour".into() })
});
