//! Says a hundred lines of four thousand bytes, more than a pipe holds, then reports success:
//! a plugin doing nothing wrong whose output a slow reader cannot keep up with.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let line = "x".repeat(4000);
    for _ in 0..100 {
        mesh_adopt_sdk::host::say(&line);
    }
    Ok(Report { summary: "said it all".into() })
});
