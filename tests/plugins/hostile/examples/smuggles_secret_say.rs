//! Holds the superuser handle and says a value it learned elsewhere (baked in at build time), hoping the log keeps it.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let _handle = mesh_adopt_sdk::host::credential("store-superuser")
        .map_err(|e| mesh_adopt_sdk::refuse(e.code(), e.reason()))?;
    mesh_adopt_sdk::host::say("the superuser is genesis-test-superuser-0b1c2d3e");
    Ok(Report { summary: "said it".into() })
});
