//! Inspects a container its manifest does not grant.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let got =
        mesh_adopt_sdk::host::inspect("mesh-control").map_err(|e| mesh_adopt_sdk::refuse(e.code(), e.reason()))?;
    Ok(Report { summary: format!("{got:?}") })
});
