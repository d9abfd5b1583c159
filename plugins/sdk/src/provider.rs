//! The sequence every provider module is installed by: carry and register the manifest,
//! build it from the catalogue source, issue its account, assign and prepare it on the node,
//! run the module's own step, push.
//!
//! The plan `check` shows and the calls `adopt` makes come from the same [`Provider`], so the
//! plan an operator reviews is the sequence that runs.

use crate::bindings::mesh::adopt::types as wit;
use crate::host::{say, tell, tell_within};
use crate::{Context, Error, Refusal, refuse};

pub use crate::command::{
    BUILD_TIMEOUT_SECONDS, BUILD_WAIT, Command, DEFAULT_REF, accepting_remote, manifest_remote, typed,
};

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
        manifest_remote(self.module())
    }

    fn build_command(&self) -> Result<Command, Refusal> {
        let Some(source) = &self.ctx.options.catalog_source else {
            return Err(refuse(
                "no-catalogue-source",
                format!(
                    "the `{}` module must be built, and no catalogue source was given to build it from \
                 (--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest \
                 is read; a builder clones the catalogue repository",
                    self.module()
                ),
            ));
        };
        Ok(Command::Build {
            repository: source.repository.clone(),
            module: self.module().to_string(),
            reference: source.ref_.clone().unwrap_or_else(|| DEFAULT_REF.to_string()),
        })
    }

    /// The sequence's commands before the module's own step, in order.
    fn before_own_step(&self) -> Result<[Command; 5], Refusal> {
        let (module, node) = (self.module().to_string(), self.node().to_string());
        Ok([
            Command::ModuleAdd { remote: self.manifest_remote() },
            self.build_command()?,
            Command::ModuleIssue { module: module.clone(), node: node.clone() },
            Command::Assign { node: node.clone(), module: module.clone() },
            Command::Prepare { node, module },
        ])
    }

    /// The commands the sequence tells, in order, with `before_push` where the module's own
    /// step goes, as a plan lists them. Refuses as `install` would when there is nothing to
    /// build from.
    pub fn commands(&self, before_push: Vec<Command>) -> Result<Vec<wit::Command>, Refusal> {
        let mut commands: Vec<Command> = self.before_own_step()?.into();
        commands.extend(before_push);
        commands.push(Command::Push { node: self.node().to_string() });
        Ok(commands.iter().map(typed).collect())
    }

    /// Runs the sequence; `before_push` is the module's own step, run just before the push.
    pub fn install(&self, before_push: impl FnOnce() -> Result<(), Refusal>) -> Result<(), Refusal> {
        let (m, n) = (self.module(), self.node());
        let [add, build, issue, assign, prepare] = self.before_own_step()?;
        crate::host::carry_bytes(&format!("{m}-module.json"), &self.ctx.manifest_bytes, &self.manifest_remote())?;
        tell_command(&add)?;
        say(&format!("registered {m}"));

        say(format!("building {m} {}", self.build_note).trim_end());
        tell_within(&build, BUILD_TIMEOUT_SECONDS)?;

        // An account is only for modules that speak on the bus; one that declares nothing to
        // say there is refused one, and that is no reason to stop.
        match tell_command(&issue) {
            Ok(_) => say(&format!("account issued for {m}")),
            Err(_) => say(&format!("no account for {m}: it declares nothing to say on the bus")),
        }

        tell_command(&assign)?;
        tell_command(&prepare)?;
        say(&format!("prepared {m} on {n}"));
        before_push()?;
        tell_command(&Command::Push { node: n.to_string() })?;
        say(&format!("pushed {n}"));
        Ok(())
    }
}

/// The command that accepts `secret` into the module from where it was carried; what a plan
/// lists before the push and what [`Handover::deliver`](crate::handover::Handover::deliver)
/// tells.
pub fn accept_command(ctx: &Context, secret: &str) -> Command {
    Command::SecretAccept {
        node: ctx.options.node.clone(),
        module: ctx.module.clone(),
        secret: secret.to_string(),
        from: accepting_remote(secret),
    }
}

/// Tells one command of the vocabulary with the ordinary timeout.
pub(crate) fn tell_command(command: &Command) -> Result<String, Error> {
    tell(command)
}
