//! Tries to allocate a gibibyte; the memory cap must stop it.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let mut hoard: Vec<u8> = Vec::with_capacity(1 << 30);
    hoard.resize(1 << 30, 7);
    Ok(Report { summary: format!("hoarded {}", std::hint::black_box(hoard).len()) })
});
