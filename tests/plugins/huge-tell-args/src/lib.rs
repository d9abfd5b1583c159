//! Tells a command with a mebibyte of arguments.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|ctx| {
    let blob = "x".repeat(1 << 20);
    mesh_adopt_sdk::host::tell(&["module", "add", &blob])?;
    Ok(Report { summary: "told".into() })
});
