//! Holding the store's superuser, carries it to where another module would accept a secret
//! of its own: a hand-over no plan shows.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    let secret = mesh_adopt_sdk::host::credential("store-superuser")
        .map_err(|e| mesh_adopt_sdk::refuse(e.code(), format!("no credential: {}", e.reason())))?;
    mesh_adopt_sdk::host::carry_secret(&secret, "/accepting-unseal-key")?;
    Ok(Report { summary: "handed over".into() })
});
