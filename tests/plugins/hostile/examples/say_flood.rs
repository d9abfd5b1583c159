//! Says a hundred thousand lines; the say budget must cut it off.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    for i in 0..100_000 {
        mesh_adopt_sdk::host::say(&format!("line {i}"));
    }
    Ok(Report { summary: "flooded".into() })
});
