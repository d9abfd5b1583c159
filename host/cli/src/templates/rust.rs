//! A Rust plugin's files: its crate's `Cargo.toml`, and the two plugin sources `new` starts
//! from (a module installed by the provider sequence, one that adopts a container in place).

use super::type_name;
use super::{Adopted, Handover};

/// The crate's `Cargo.toml`: a workspace of its own (so it builds the same wherever the
/// catalogue is checked out), with the release profile that keeps plugins small.
pub fn cargo_toml(module: &str, sdk: &str) -> String {
    format!(
        r#"[package]
name = "adopt-{module}"
version = "0.1.0"
description = "Adoption rules of the `{module}` catalogue module"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
mesh-adopt-sdk = {sdk}

# The plugin is a workspace of its own: `mesh-adopt build` builds it from the manifest's
# `adopt.source`, wherever the catalogue is checked out.
[workspace]

# Small plugins load fast and ship beside every manifest.
[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
strip = true
panic = "abort"
"#
    )
}

/// The installed module's plugin source: the provider sequence, with a place for the
/// module's own rules and step.
pub fn installed_lib_rs(module: &str) -> String {
    let ty = type_name(module);
    format!(
        r#"//! The `{module}` module: installed by the shared provider sequence. Add its own rules
//! here: read `ctx.manifest` and `ctx.foundation`, refuse with `refuse(..)` before anything
//! is registered, and do the module's own step in the closure passed to `install`.

use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{{Context, Plan, Plugin, Refusal, Report}};

struct {ty};

impl Plugin for {ty} {{
    fn check(ctx: &Context) -> Result<Plan, Refusal> {{
        Ok(Plan {{
            summary: vec![format!("install `{{}}` from the catalogue", ctx.module)],
            commands: Provider::new(ctx, "").commands(Vec::new())?,
        }})
    }}

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {{
        Provider::new(ctx, "").install(|| Ok(()))?;
        let summary = format!("{{}} installed", ctx.module);
        say(&summary);
        Ok(Report {{ summary }})
    }}
}}

mesh_adopt_sdk::export!({ty});
"#
    )
}

/// The adopt-in-place plugin's source, on the SDK's helpers.
pub fn adopt_lib_rs(module: &str, adopted: &Adopted, handover: Option<&Handover>) -> String {
    let ty = type_name(module);
    let handover_const = match handover {
        Some(h) => format!(
            "Some((\"{secret}\", \"{credential}\", \"the {id}'s {secret}\"))",
            secret = h.secret,
            credential = h.credential,
            id = adopted.bundle_id
        ),
        None => "None".to_string(),
    };
    format!(
        r#"//! The `{module}` module adopts the `{id}` container genesis raised, in place.
//!
//! The node keys containers on their name and compares their spec, so the module's server
//! must carry the name genesis gave it and run the very image the foundation runs: anything
//! else would replace the running server instead of adopting it. A credential the server was
//! made with is handed over before the push, and after it the module waits, bounded by
//! `--wait`, until the node runs its server.

use std::time::Duration;

use mesh_adopt_sdk::foundation::adopt_in_place;
use mesh_adopt_sdk::grants::Reads;
use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::wait::wait_for_image;
use mesh_adopt_sdk::{{Container, Context, Plan, Plugin, Refusal, Report}};

/// The foundation bundle's id for the container this module adopts.
const ADOPTED_ID: &str = "{id}";
/// What the operator calls it.
const WHAT: &str = "{id}";
/// The genesis credential handed over as one of the module's secrets: (secret, credential,
/// what it is), or `None` when the server needs none.
const HANDOVER: Option<(&str, &str, &str)> = {handover_const};
/// What the build is for, as the operator reads it.
const BUILD_NOTE: &str = "(the server is adopted, not built)";
/// How often the node is asked whether it runs the server after the push.
const POLL: Duration = Duration::from_secs(2);

struct {ty};

/// The adopted container, once the manifest is known to adopt it in place.
fn adoptable(ctx: &Context) -> Result<&Container, Refusal> {{
    adopt_in_place(
        ctx,
        ADOPTED_ID,
        WHAT,
        "a different one would replace the running server and raise a new one on its data. Pin both to one image",
    )
}}

fn handover(ctx: &Context) -> Option<Handover<'_>> {{
    HANDOVER.map(|(secret, credential, what)| Handover::new(ctx, secret, credential, what))
}}

impl Plugin for {ty} {{
    fn check(ctx: &Context) -> Result<Plan, Refusal> {{
        let server = adoptable(ctx)?;
        // What adopt reads after the push must be granted, or check refuses now, naming it.
        Reads::new().inspect(&server.name).check(ctx)?;
        let mut summary = vec![format!("adopt `{{}}` ({{}}) in place: kept, not recreated", server.name, server.image)];
        let mut before_push = Vec::new();
        if let Some(handover) = handover(ctx) {{
            handover.check()?;
            summary.push(handover.summary());
            before_push.push(handover.command());
        }}
        Ok(Plan {{ summary, commands: Provider::new(ctx, BUILD_NOTE).commands(before_push)? }})
    }}

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {{
        let server = adoptable(ctx)?;
        say(&format!("adopting {{}}: the {{WHAT}} genesis raised, unchanged", server.name));
        Provider::new(ctx, BUILD_NOTE).install(|| match handover(ctx) {{
            Some(handover) => handover.deliver(),
            None => Ok(()),
        }})?;
        let wait = Duration::from_secs(ctx.options.wait_seconds.into());
        wait_for_image(&server.name, &server.image, wait, POLL)?;
        let summary = format!("{{}} is now the {{}} module's {{WHAT}}, kept in place", server.name, ctx.module);
        say(&format!("adopted {{summary}}"));
        Ok(Report {{ summary }})
    }}
}}

mesh_adopt_sdk::export!({ty});
"#,
        id = adopted.bundle_id,
    )
}
