//! Tells a command of two million empty arguments: under the byte limit, far over any
//! command's length.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|ctx| {
    let args = vec![""; 2_000_000];
    mesh_adopt_sdk::host::tell(&args)?;
    Ok(Report { summary: "told".into() })
});
