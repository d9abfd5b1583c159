//! Reads WASI's wall and monotonic clocks around a ninety-second WASI sleep: on the
//! simulator they are the mesh's virtual clock, so the sleep costs nothing and the numbers
//! repeat from run to run.

use std::time::{Duration, Instant, SystemTime};

hostile::adopt_only!(|ctx| {
    use mesh_adopt_sdk::host::{now_millis, say};
    let since_epoch = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (wall, mono, mesh) = (SystemTime::now(), Instant::now(), now_millis());
    say(&format!("wall before: {}", since_epoch(wall)));
    std::thread::sleep(Duration::from_secs(90));
    say(&format!("slept: {}s by the monotonic clock", mono.elapsed().as_secs()));
    say(&format!("wall after: {}", since_epoch(SystemTime::now())));
    say(&format!("mesh clock moved: {}ms", now_millis() - mesh));
    Ok(mesh_adopt_sdk::Report { summary: "read the clocks".into() })
});
