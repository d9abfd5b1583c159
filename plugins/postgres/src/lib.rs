//! The `postgres` module adopts the store genesis raised, in place.
//!
//! The node-engine keys containers on their name and compares a spec digest, so the module's
//! server container must carry the store's name and the very image the foundation runs:
//! anything else would replace the mesh's memory instead of adopting it. The superuser the
//! store was created with is carried in before the push, or the push would seal random bytes
//! where a working password has to be.

use mesh_adopt_sdk::foundation;
use mesh_adopt_sdk::host::{credential, say};
use mesh_adopt_sdk::manifest;
use mesh_adopt_sdk::provider::{Provider, accept_command, deliver_credential, missing_credential};
use mesh_adopt_sdk::{Container, Context, Plan, Plugin, Refusal, Report, refuse};

/// The bundle's identity for the store.
const STORE_ID: &str = "store";
/// The module secret the superuser is delivered as.
const SUPERUSER_SECRET: &str = "superuser";
/// The genesis credential holding the store's superuser password.
const SUPERUSER_CREDENTIAL: &str = "store-superuser";
const SUPERUSER_WHAT: &str = "the store's superuser";
const BUILD_NOTE: &str = "(the provisioner; the server is adopted, not built)";

struct Postgres;

/// The store, once the module's manifest is known to adopt it.
fn adoptable_store(ctx: &Context) -> Result<&Container, Refusal> {
    let manifest = manifest::read(&ctx.module, &ctx.manifest)?;
    let store = foundation::container(&ctx.foundation, STORE_ID, "store", &ctx.module)?;
    let Some(server) = manifest.containers().find(|c| c.name == store.name) else {
        return Err(refuse(format!(
            "the `{}` module declares no container named `{}`, so nothing in it adopts the \
             foundation's store; its server container must carry the name genesis raised",
            ctx.module, store.name
        )));
    };
    if server.image != store.image {
        return Err(refuse(format!(
            "the `{}` module's container `{}` is pinned to image `{}`, but the foundation's store \
             runs `{}`. Adopting in place needs the same image: a different one would tear the \
             mesh's store down and raise a new one on its data. Pin both to one postgres image. \
             Nothing has been registered",
            ctx.module, store.name, server.image, store.image
        )));
    }
    Ok(store)
}

impl Plugin for Postgres {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let store = adoptable_store(ctx)?;
        credential(SUPERUSER_CREDENTIAL)
            .map_err(|e| missing_credential(&ctx.module, SUPERUSER_CREDENTIAL, SUPERUSER_WHAT, &e))?;
        let accept = accept_command(ctx, SUPERUSER_SECRET).words();
        Ok(Plan {
            summary: vec![
                format!("adopt `{}` ({}) in place: kept, not recreated", store.name, store.image),
                format!(
                    "carry genesis credential `{SUPERUSER_CREDENTIAL}` in as secret `{SUPERUSER_SECRET}` before the push"
                ),
            ],
            commands: Provider::new(ctx, BUILD_NOTE).commands(vec![accept])?,
        })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let store = adoptable_store(ctx)?;
        say(&format!("adopting {}: the store genesis raised, unchanged", store.name));
        Provider::new(ctx, BUILD_NOTE)
            .install(|| deliver_credential(ctx, SUPERUSER_SECRET, SUPERUSER_CREDENTIAL, SUPERUSER_WHAT))?;
        let summary = format!("{} is now the {} module's store, kept in place", store.name, ctx.module);
        say(&format!("adopted {summary}"));
        Ok(Report { summary })
    }
}

mesh_adopt_sdk::export!(Postgres);
