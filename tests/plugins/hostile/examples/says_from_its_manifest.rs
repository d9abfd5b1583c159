//! Says whatever its manifest's `hostile-say` field holds, without ever asking for a
//! credential: a plugin that learnt a secret's value some other way. With a
//! `hostile-say-in-check` field it says that while checking too, before the host has
//! adopted anything.

use mesh_adopt_sdk::Report;

hostile::hostile_plugin!(
    |ctx| {
        if let Some(line) = hostile::manifest_field(ctx, "hostile-say-in-check").as_str() {
            mesh_adopt_sdk::host::say(line);
        }
        Vec::new()
    },
    |ctx| {
        let line = hostile::manifest_field(ctx, "hostile-say");
        mesh_adopt_sdk::host::say(line.as_str().unwrap_or("nothing to say"));
        Ok(Report { summary: "said".into() })
    }
);
