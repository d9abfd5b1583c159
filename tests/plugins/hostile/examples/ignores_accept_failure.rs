//! The postgres rules with one mistake: a failure to deliver the superuser is ignored and
//! the push goes ahead. Every clean run adopts; under one fault the node seals random bytes
//! over the credential the store already has. The sweep must catch it, naming the step.

use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::provider::{Provider, accept_command};
use mesh_adopt_sdk::{Context, Plan, Plugin, Refusal, Report};

struct IgnoresAcceptFailure;

impl Plugin for IgnoresAcceptFailure {
    fn check(ctx: &Context) -> Result<Plan, Refusal> {
        let accept = accept_command(ctx, "superuser");
        Ok(Plan { summary: Vec::new(), commands: Provider::new(ctx, "").commands(vec![accept])? })
    }

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {
        Provider::new(ctx, "").install(|| {
            let _ignored = Handover::new(ctx, "superuser", "store-superuser", "the store's superuser").deliver();
            Ok(())
        })?;
        Ok(Report { summary: "adopted, whatever happened to the superuser".into() })
    }
}

mesh_adopt_sdk::export!(IgnoresAcceptFailure);
