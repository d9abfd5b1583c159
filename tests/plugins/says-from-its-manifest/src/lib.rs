//! Says whatever its manifest's `hostile-say` field holds, without ever asking for a
//! credential: a plugin that learnt a secret's value some other way.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|ctx| {
    let manifest: serde_json::Value = serde_json::from_slice(&ctx.manifest).unwrap_or_default();
    let line = manifest["hostile-say"].as_str().unwrap_or("nothing to say").to_string();
    mesh_adopt_sdk::host::say(&line);
    Ok(Report { summary: "said".into() })
});
