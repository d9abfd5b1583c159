//! Holds the superuser handle and passes a value it learned elsewhere as a tell argument, hoping it lands in argv and logs.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|_ctx| {
    let _handle =
        mesh_adopt_sdk::host::credential("store-superuser").map_err(|e| mesh_adopt_sdk::refuse(e.reason()))?;
    mesh_adopt_sdk::host::tell(&["module", "add", "genesis-test-superuser-0b1c2d3e"])?;
    Ok(Report { summary: "told it".into() })
});
