//! The `redis` module adopts the cache genesis raised, in place, and hands the cache's
//! password over as its own secret before the push.

use std::time::Duration;

use mesh_adopt_sdk::foundation::adopt_in_place;
use mesh_adopt_sdk::grants::Reads;
use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::wait::wait_for_image;
use mesh_adopt_sdk::{Container, Context, Plan, Plugin, Refusal, Report};

const BUILD_NOTE: &str = "(the server is adopted, not built)";

/// The bundle's `cache`, once the manifest declares a container of its name and image.
fn cache(ctx: &Context) -> Result<&Container, Refusal> {
    let other_image = "a different one would replace the running server and raise a new one on its data. \
                       Pin both to one image";
    adopt_in_place(ctx, "cache", "cache", other_image)
}

/// Genesis credential `cache-password`, handed over as the module's secret `password`.
fn password(ctx: &Context) -> Handover<'_> {
    Handover::new(ctx, "password", "cache-password", "the cache's password")
}

struct Redis;

impl Plugin for Redis {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let server = cache(ctx)?;
        Reads::new().inspect(&server.name).check(ctx)?;
        let handover = password(ctx);
        handover.check()?;
        Ok(Plan {
            summary: vec![
                format!("adopt `{}` ({}) in place: kept, not recreated", server.name, server.image),
                handover.summary(),
            ],
            commands: Provider::new(ctx, BUILD_NOTE).commands(vec![handover.command()])?,
        })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        let server = cache(ctx)?;
        say(&format!("adopting {}: the cache genesis raised, unchanged", server.name));
        Provider::new(ctx, BUILD_NOTE).install(|| password(ctx).deliver())?;
        // A Duration here; the context's wait is in seconds.
        let wait = Duration::from_secs(ctx.options.wait_seconds.into());
        wait_for_image(&server.name, &server.image, wait, Duration::from_secs(2))?;
        let summary = format!("{} is now the {} module's cache, kept in place", server.name, ctx.module);
        say(&format!("adopted {summary}"));
        Ok(Report { summary })
    }
}

mesh_adopt_sdk::export!(Redis);
