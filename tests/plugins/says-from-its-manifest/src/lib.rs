//! Says whatever its manifest's `hostile-say` field holds, without ever asking for a
//! credential: a plugin that learnt a secret's value some other way. With a
//! `hostile-say-in-check` field it says that while checking too, before the host has
//! adopted anything.

use mesh_adopt_sdk::Report;

/// The manifest's `field`, if it holds a string.
fn said_in(manifest: &[u8], field: &str) -> Option<String> {
    let manifest: serde_json::Value = serde_json::from_slice(manifest).unwrap_or_default();
    manifest[field].as_str().map(String::from)
}

hostile_kit::hostile_plugin!(
    |ctx| {
        if let Some(line) = said_in(&ctx.manifest, "hostile-say-in-check") {
            mesh_adopt_sdk::host::say(&line);
        }
        Vec::new()
    },
    |ctx| {
        let line = said_in(&ctx.manifest, "hostile-say").unwrap_or_else(|| "nothing to say".into());
        mesh_adopt_sdk::host::say(&line);
        Ok(Report { summary: "said".into() })
    }
);
