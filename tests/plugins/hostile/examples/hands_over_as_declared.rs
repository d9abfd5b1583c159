//! Runs the provider sequence for whatever module it is placed in, handing over every
//! credential its manifest's `adopts` declares just before the push, and knows no name of its
//! own: with it a catalogue whose every container, module and bundle id is renamed still runs,
//! so tests can show the host's rules hang on declarations, not on phase three's names.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct HandsOverAsDeclared;

/// Each `(secret, credential)` the manifest declares a container it adopts runs with.
fn declared(ctx: &Context) -> Vec<(&str, &str)> {
    ctx.manifest.adopts.iter().filter_map(|a| Some((a.secret.as_deref()?, a.credential.as_deref()?))).collect()
}

impl Plugin for HandsOverAsDeclared {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let mut before_push = Vec::new();
        for (secret, credential) in declared(ctx) {
            let handover = Handover::new(ctx, secret, credential, "a declared credential");
            handover.check()?;
            before_push.push(handover.command());
        }
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(before_push)? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| {
            for (secret, credential) in declared(ctx) {
                Handover::new(ctx, secret, credential, "a declared credential").deliver()?;
            }
            Ok(())
        })?;
        Ok(Report { summary: format!("{} installed as declared", ctx.module) })
    }
}

mesh_adopt_sdk::export!(HandsOverAsDeclared);
