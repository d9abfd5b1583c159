//! Sleeps an hour through WASI (`std::thread::sleep`), then registers its module: the wall
//! deadline must stop it before it wakes.

use std::time::Duration;

hostile::adopt_only!(|ctx| {
    std::thread::sleep(Duration::from_secs(60 * 60));
    hostile::register(ctx)?;
    Ok(mesh_adopt_sdk::Report { summary: "slept an hour".into() })
});
