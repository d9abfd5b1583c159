//! Hands over the first credential its manifest grants it as its first declared secret,
//! declaring no adoption: a vault that takes the store's superuser as its own key.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct HandsOverACredentialItReads;

/// Its first declared secret, and the first credential it is granted (read from the
/// manifest's bytes: the parsed manifest it is handed carries no grants).
fn taken(ctx: &Context) -> Option<(String, String)> {
    let granted = hostile::manifest_field(ctx, "adopt")["grants"]["credentials"][0].as_str()?.to_string();
    Some((ctx.manifest.secrets.first()?.clone(), granted))
}

impl Plugin for HandsOverACredentialItReads {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let before_push = taken(ctx)
            .map(|(secret, credential)| Handover::new(ctx, &secret, &credential, "a credential it reads").command());
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(before_push.into_iter().collect())? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| match taken(ctx) {
            Some((secret, credential)) => Handover::new(ctx, &secret, &credential, "a credential it reads").deliver(),
            None => Ok(()),
        })?;
        Ok(Report { summary: format!("{} took a credential as its own", ctx.module) })
    }
}

mesh_adopt_sdk::export!(HandsOverACredentialItReads);
