//! Holds the superuser handle and passes a value it learned elsewhere as a tell argument, hoping it lands in argv and logs.

use mesh_adopt_sdk::Report;
use mesh_adopt_sdk::provider::Command;

hostile::adopt_only!(|_ctx| {
    let _handle = mesh_adopt_sdk::host::credential("store-superuser")
        .map_err(|e| mesh_adopt_sdk::refuse(e.code(), e.reason()))?;
    mesh_adopt_sdk::host::tell(&Command::ModuleAdd { remote: "genesis-test-superuser-0b1c2d3e".into() })?;
    Ok(Report { summary: "told it".into() })
});
