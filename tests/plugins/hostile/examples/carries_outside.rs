//! Carries bytes to a path outside its own.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    mesh_adopt_sdk::host::carry_bytes("config", b"{\"owned\": true}", "/etc/mesh/control/config.json")?;
    Ok(Report { summary: "carried".into() })
});
