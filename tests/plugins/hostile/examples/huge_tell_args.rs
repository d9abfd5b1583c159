//! Tells a command with a mebibyte of arguments: a registration whose path is a mebibyte long.

use mesh_adopt_sdk::Report;
use mesh_adopt_sdk::provider::Command;

hostile::adopt_only!(|ctx| {
    let blob = "x".repeat(1 << 20);
    mesh_adopt_sdk::host::tell(&Command::ModuleAdd { remote: blob })?;
    Ok(Report { summary: "told".into() })
});
