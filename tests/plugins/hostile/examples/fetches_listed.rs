//! Fetches each URL its manifest lists under `hostile-fetch` and says what each answered.

use mesh_adopt_sdk::host::{fetch, say};

hostile::adopt_only!(|ctx| {
    let urls = hostile::manifest_field(ctx, "hostile-fetch");
    for url in urls.as_array().into_iter().flatten().filter_map(|u| u.as_str()) {
        match fetch(url) {
            Ok(response) => say(&format!("{url}: status {} body {}", response.status, response.body)),
            Err(e) => say(&format!("{url}: {}", e.reason())),
        }
    }
    Ok(mesh_adopt_sdk::Report { summary: "fetched".into() })
});
