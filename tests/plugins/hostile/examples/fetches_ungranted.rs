//! Fetches a URL its manifest does not grant.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let got = mesh_adopt_sdk::host::fetch("http://169.254.169.254/latest/meta-data/")
        .map_err(|e| mesh_adopt_sdk::refuse(e.code(), e.reason()))?;
    Ok(Report { summary: got.body })
});
