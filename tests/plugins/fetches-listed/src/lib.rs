//! Fetches each URL its manifest lists under `hostile-fetch` and says what each answered.

use mesh_adopt_sdk::host::{fetch, say};

hostile_kit::adopt_only!(|ctx| {
    let manifest: serde_json::Value = serde_json::from_slice(&ctx.manifest).unwrap_or_default();
    let urls = manifest["hostile-fetch"].as_array().cloned().unwrap_or_default();
    for url in urls.iter().filter_map(|u| u.as_str()) {
        match fetch(url) {
            Ok(response) => say(&format!("{url}: status {} body {}", response.status, response.body)),
            Err(e) => say(&format!("{url}: {}", e.reason())),
        }
    }
    Ok(mesh_adopt_sdk::Report { summary: "fetched".into() })
});
