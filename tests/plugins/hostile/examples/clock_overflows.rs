//! Sleeps `u64::MAX` milliseconds over and over, then reads the clock: the mesh's clock must
//! saturate, not overflow (and with any deadline at all the first sleep is stopped).

use mesh_adopt_sdk::host::{now_millis, say, sleep_millis};

hostile::adopt_only!(|ctx| {
    say(&format!("before: {}", now_millis()));
    // 1,000 sleeps of u64::MAX ms reach u64::MAX seconds; a few more would overflow.
    for _ in 0..1_010 {
        sleep_millis(u64::MAX);
    }
    let after = now_millis();
    say(&format!("after: {after}"));
    Ok(mesh_adopt_sdk::Report { summary: format!("the clock reads {after}") })
});
