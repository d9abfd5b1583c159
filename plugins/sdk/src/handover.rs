//! A genesis credential handed over to the module as one of its secrets: carried to
//! `/accepting-<secret>`, then accepted, just before the push.
//!
//! A server genesis raised already has its password; the mesh cannot make up that value, and a
//! push without it would seal random bytes where the working one has to be. One [`Handover`]
//! gives the plan its command, `check` its refusals and `adopt` its before-push step, so what
//! the operator reviews is what runs.
//!
//! ```no_run
//! # use mesh_adopt_sdk::{Context, Plan, Refusal, Report, provider::Provider, handover::Handover};
//! fn superuser(ctx: &Context) -> Handover<'_> {
//!     Handover::new(ctx, "superuser", "store-superuser", "the store's superuser")
//! }
//!
//! fn check(ctx: &Context) -> Result<Plan, Refusal> {
//!     let handover = superuser(ctx);
//!     handover.check()?;
//!     Ok(Plan {
//!         summary: vec![handover.summary()],
//!         commands: Provider::new(ctx, "").commands(vec![handover.command()])?,
//!     })
//! }
//!
//! fn adopt(ctx: &Context) -> Result<(), Refusal> {
//!     Provider::new(ctx, "").install(|| superuser(ctx).deliver())
//! }
//! ```

use crate::host::{Error, carry_secret, credential, say};
use crate::provider::{Command, accept_command, tell_command};
use crate::{Context, Refusal, refuse};

/// One genesis credential to be accepted as one module secret.
#[derive(Debug, Clone, Copy)]
pub struct Handover<'a> {
    ctx: &'a Context,
    secret: &'a str,
    credential: &'a str,
    what: &'a str,
}

impl<'a> Handover<'a> {
    /// The genesis credential `credential` (granted in the manifest's
    /// `adopt.grants.credentials`) becomes the module's secret `secret` (declared in its
    /// `secrets`); `what` names it for the operator, e.g. "the store's superuser".
    pub fn new(ctx: &'a Context, secret: &'a str, credential: &'a str, what: &'a str) -> Self {
        Handover { ctx, secret, credential, what }
    }

    /// The `secret accept …` command, as the plan lists it before the push.
    pub fn command(&self) -> Command {
        self.accept()
    }

    /// The plan's line for it.
    pub fn summary(&self) -> String {
        format!("carry genesis credential `{}` in as secret `{}` before the push", self.credential, self.secret)
    }

    /// For `check`: refuses unless the manifest declares the secret (the node would not take
    /// it otherwise) and the host can hand the credential over now. The credential is asked
    /// for, which `check` may do, so a credential the manifest does not grant is refused here
    /// with the host's words on how to grant it.
    pub fn check(&self) -> Result<(), Refusal> {
        let module = self.ctx.module.as_str();
        let declared = &self.ctx.manifest;
        if !declared.secrets.iter().any(|s| s == self.secret) {
            let listed = if declared.secrets.is_empty() {
                "none".to_string()
            } else {
                declared.secrets.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            };
            return Err(refuse(
                "secret-not-declared",
                format!(
                    "the `{module}` module's manifest declares no secret `{}` (it declares {listed}), so the \
                 node would not accept {} as one of its secrets: add \"{}\" to `secrets` in its \
                 manifest.json. Nothing has been registered",
                    self.secret, self.what, self.secret
                ),
            ));
        }
        credential(self.credential).map_err(|e| self.missing(&e))?;
        Ok(())
    }

    /// For `adopt`, as the provider sequence's before-push step: carries the credential in
    /// and accepts it, then says so.
    pub fn deliver(&self) -> Result<(), Refusal> {
        let handle = credential(self.credential).map_err(|e| self.missing(&e))?;
        let accept = self.accept();
        let Command::SecretAccept { from, .. } = &accept else { unreachable!("an accept command") };
        carry_secret(&handle, from)?;
        tell_command(&accept)?;
        say(&format!("accepted {}: {}, as genesis made it", self.secret, self.what));
        Ok(())
    }

    fn accept(&self) -> Command {
        accept_command(self.ctx, self.secret)
    }

    /// The refusal for a credential the host cannot hand over.
    fn missing(&self, error: &Error) -> Refusal {
        refuse(
            "credential-unavailable",
            format!(
                "{} (genesis credential `{}`) cannot be had ({}), so the `{}` module would have nothing \
             to open its server with, and the mesh cannot make up the one the server already has",
                self.what,
                self.credential,
                error.reason(),
                self.ctx.module
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::context;

    fn ctx(secrets: &[&str]) -> Context {
        let mut ctx = context("postgres");
        ctx.manifest.secrets = secrets.iter().map(|s| s.to_string()).collect();
        ctx
    }

    #[test]
    fn the_plan_and_the_step_name_one_accept() {
        let ctx = ctx(&["superuser"]);
        let handover = Handover::new(&ctx, "superuser", "store-superuser", "the store's superuser");
        assert_eq!(
            handover.command().to_string(),
            "secret accept node-1 postgres superuser --from /accepting-superuser"
        );
        assert_eq!(
            handover.summary(),
            "carry genesis credential `store-superuser` in as secret `superuser` before the push"
        );
    }

    #[test]
    fn a_secret_the_manifest_does_not_declare_is_refused_before_the_credential_is_asked_for() {
        for (secrets, declared) in [(&[][..], "none"), (&["a", "b"][..], "`a`, `b`")] {
            let ctx = ctx(secrets);
            let refusal =
                Handover::new(&ctx, "superuser", "store-superuser", "the store's superuser").check().unwrap_err();
            assert_eq!(refusal.code, "secret-not-declared");
            assert_eq!(
                refusal.message,
                format!(
                    "the `postgres` module's manifest declares no secret `superuser` (it declares {declared}), so \
                     the node would not accept the store's superuser as one of its secrets: add \"superuser\" to \
                     `secrets` in its manifest.json. Nothing has been registered"
                )
            );
        }
    }
}
