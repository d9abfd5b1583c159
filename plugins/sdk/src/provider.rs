//! The sequence every provider module is installed by: carry and register the manifest,
//! build it from the catalogue source, issue its account, assign and prepare it on the node,
//! run the module's own step, push.
//!
//! The plan `check` shows and the calls `adopt` makes come from the same [`Provider`], so the
//! plan an operator reviews is the sequence that runs.

use crate::host::{say, tell, tell_within};
use crate::{Context, Refusal, refuse};

/// The ref built when the operator names none.
pub const DEFAULT_REF: &str = "main";

/// The build's own wait, passed to the control plane.
pub const BUILD_WAIT: &str = "1200s";

/// How long the host waits for the build command: longer than the build's own wait, so the
/// control plane reports its own timeout rather than being cut off mid-answer.
pub const BUILD_TIMEOUT_SECONDS: u32 = 1500;

/// One module's provider sequence.
pub struct Provider<'a> {
    ctx: &'a Context,
    build_note: &'a str,
}

impl<'a> Provider<'a> {
    /// `build_note` tells the operator what the build is for, e.g. that the server is adopted.
    pub fn new(ctx: &'a Context, build_note: &'a str) -> Self {
        Provider { ctx, build_note }
    }

    fn module(&self) -> &str {
        &self.ctx.module
    }

    fn node(&self) -> &str {
        &self.ctx.options.node
    }

    /// Where the manifest is carried to in the control plane.
    pub fn manifest_remote(&self) -> String {
        format!("/{}-module.json", self.module())
    }

    fn build_command(&self) -> Result<Vec<String>, Refusal> {
        let Some(source) = &self.ctx.options.catalog_source else {
            return Err(refuse(format!(
                "the `{}` module must be built, and no catalogue source was given to build it from \
                 (--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest \
                 is read; a builder clones the catalogue repository",
                self.module()
            )));
        };
        let reference = source.ref_.as_deref().unwrap_or(DEFAULT_REF);
        Ok(owned(&[
            "build",
            &source.repository,
            "--path",
            &format!("modules/{}", self.module()),
            "--ref",
            reference,
            "--wait",
            BUILD_WAIT,
        ]))
    }

    /// The commands the sequence tells, in order, with `before_push` where the module's own
    /// step goes. Refuses as `install` would when there is nothing to build from.
    pub fn commands(&self, before_push: Vec<Vec<String>>) -> Result<Vec<Vec<String>>, Refusal> {
        let (m, n) = (self.module(), self.node());
        let mut commands = vec![
            owned(&["module", "add", &self.manifest_remote()]),
            self.build_command()?,
            owned(&["module", "issue", m, "--node", n]),
            owned(&["assign", n, m]),
            owned(&["prepare", n, m]),
        ];
        commands.extend(before_push);
        commands.push(owned(&["push", n]));
        Ok(commands)
    }

    /// Runs the sequence; `before_push` is the module's own step, run just before the push.
    pub fn install(&self, before_push: impl FnOnce() -> Result<(), Refusal>) -> Result<(), Refusal> {
        let (m, n) = (self.module(), self.node());
        let remote = self.manifest_remote();
        crate::host::carry_bytes(&format!("{m}-module.json"), &self.ctx.manifest, &remote)?;
        tell(&["module", "add", &remote])?;
        say(&format!("registered {m}"));

        let build = self.build_command()?;
        say(format!("building {m} {}", self.build_note).trim_end());
        let build: Vec<&str> = build.iter().map(String::as_str).collect();
        tell_within(&build, BUILD_TIMEOUT_SECONDS)?;

        // An account is only for modules that speak on the bus; one that declares nothing to
        // say there is refused one, and that is no reason to stop.
        match tell(&["module", "issue", m, "--node", n]) {
            Ok(_) => say(&format!("account issued for {m}")),
            Err(_) => say(&format!("no account for {m}: it declares nothing to say on the bus")),
        }

        tell(&["assign", n, m])?;
        tell(&["prepare", n, m])?;
        say(&format!("prepared {m} on {n}"));
        before_push()?;
        tell(&["push", n])?;
        say(&format!("pushed {n}"));
        Ok(())
    }
}

/// Moves a genesis credential into the module as its own secret: carried to
/// `/accepting-<secret>`, then accepted. The mesh cannot make up the value a running server
/// already has, so a missing credential is refused by name.
pub fn deliver_credential(ctx: &Context, secret: &str, credential: &str, what: &str) -> Result<(), Refusal> {
    let (module, node) = (ctx.module.as_str(), ctx.options.node.as_str());
    let handle = crate::host::credential(credential).map_err(|e| missing_credential(module, credential, what, &e))?;
    let at = format!("/accepting-{secret}");
    crate::host::carry_secret(&handle, &at)?;
    tell(&["secret", "accept", node, module, secret, "--from", &at])?;
    say(&format!("accepted {secret}: {what}, as genesis made it"));
    Ok(())
}

/// The refusal for a credential the host cannot hand over.
pub fn missing_credential(
    module: &str,
    credential: &str,
    what: &str,
    error: &crate::bindings::mesh::adopt::types::HostError,
) -> Refusal {
    refuse(format!(
        "{what} (genesis credential `{credential}`) cannot be had ({}), so the `{module}` module \
         would have nothing to open its server with, and the mesh cannot make up the one the \
         server already has",
        crate::host::describe(error)
    ))
}

/// Turns a command of borrowed words into owned ones.
pub fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}
