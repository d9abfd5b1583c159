//! The `postgres` module adopts the store genesis raised, in place.
//!
//! The node-engine keys containers on their name and compares a spec digest, so the module's
//! server container must carry the store's name and the very image the foundation runs:
//! anything else would replace the mesh's memory instead of adopting it. The superuser the
//! store was created with is carried in before the push, or the push would seal random bytes
//! where a working password has to be.

use mesh_adopt_sdk::foundation;
use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Container, Context, Plan, Plugin, Refusal, Report};

/// The bundle's identity for the store.
const STORE_ID: &str = "store";
/// What a store on another image would do, and what to do instead.
const OTHER_IMAGE: &str = "a different one would tear the mesh's store down and raise a new one on its data. \
                           Pin both to one postgres image";
/// The module secret the superuser is delivered as.
const SUPERUSER_SECRET: &str = "superuser";
/// The genesis credential holding the store's superuser password.
const SUPERUSER_CREDENTIAL: &str = "store-superuser";
const SUPERUSER_WHAT: &str = "the store's superuser";
const BUILD_NOTE: &str = "(the provisioner; the server is adopted, not built)";

struct Postgres;

/// The store, once the module's manifest is known to adopt it.
fn adoptable_store(ctx: &Context) -> Result<&Container, Refusal> {
    foundation::adopt_in_place(ctx, STORE_ID, "store", OTHER_IMAGE)
}

/// The superuser genesis made, handed to the module before its push.
fn superuser(ctx: &Context) -> Handover<'_> {
    Handover::new(ctx, SUPERUSER_SECRET, SUPERUSER_CREDENTIAL, SUPERUSER_WHAT)
}

impl Plugin for Postgres {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let store = adoptable_store(ctx)?;
        let superuser = superuser(ctx);
        superuser.check()?;
        Ok(Plan {
            summary: vec![
                format!("adopt `{}` ({}) in place: kept, not recreated", store.name, store.image),
                superuser.summary(),
            ],
            commands: Provider::new(ctx, BUILD_NOTE).commands(vec![superuser.command()])?,
        })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let store = adoptable_store(ctx)?;
        say(&format!("adopting {}: the store genesis raised, unchanged", store.name));
        Provider::new(ctx, BUILD_NOTE).install(|| superuser(ctx).deliver())?;
        let summary = format!("{} is now the {} module's store, kept in place", store.name, ctx.module);
        say(&format!("adopted {summary}"));
        Ok(Report { summary })
    }
}

mesh_adopt_sdk::export!(Postgres);
