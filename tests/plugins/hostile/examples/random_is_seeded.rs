//! Says random numbers from WASI's random interfaces and from std's hasher seeds: on the
//! simulator the run's seed decides them, so two runs say the same.

use std::hash::{BuildHasher, Hasher};

hostile::adopt_only!(|ctx| {
    use mesh_adopt_sdk::host::say;
    say(&format!("random: {}", wasip2::random::random::get_random_u64()));
    say(&format!("insecure: {}", wasip2::random::insecure::get_insecure_random_u64()));
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(1);
    say(&format!("hasher: {}", hasher.finish()));
    Ok(mesh_adopt_sdk::Report { summary: "drew random numbers".into() })
});
