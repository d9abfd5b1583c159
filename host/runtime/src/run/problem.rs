//! Why preflight found a module of a run unusable, beyond what its catalogue entry, plugin or
//! credentials say of themselves: a module asked for twice, a world the host does not speak, a
//! plan beyond the limits or the grants, declarations that do not fit the foundation.

use std::path::PathBuf;
use std::time::Duration;

use crate::remedy::Remedy;

/// Why a module of a run cannot be used, as preflight found it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The same module asked for twice: it would be adopted twice.
    #[error("the module `{module}` is asked for twice")]
    AskedTwice {
        /// The module.
        module: String,
    },
    /// A credential in the directory that cannot be read, so its value could not be kept from
    /// being shown: a problem of the whole run.
    #[error(
        "the credentials directory holds `{name}`, which cannot be read ({error}): its value could not be kept from being shown"
    )]
    CredentialUnreadable {
        /// The credential.
        name: String,
        /// Why.
        error: crate::catalogue::CredentialError,
    },
    /// Its manifest names a world this host does not speak.
    #[error(
        "the `{module}` module's manifest `{}` says its plugin targets `{world}`; this host implements `{}`",
        manifest.display(),
        spoken.join("` and `")
    )]
    WorldNotSpoken {
        /// The module.
        module: String,
        /// Its manifest.
        manifest: PathBuf,
        /// The world it names.
        world: String,
        /// The worlds this host speaks.
        spoken: Vec<&'static str>,
    },
    /// A credential its manifest grants cannot be used.
    #[error("the `{module}` module's manifest `{}` grants {error}", manifest.display())]
    Credential {
        /// The module.
        module: String,
        /// Its manifest.
        manifest: PathBuf,
        /// Which credential, and why.
        error: crate::catalogue::GrantedCredentialError,
    },
    /// Its `check` was denied a call and planned anyway.
    #[error(
        "its `check` was denied {denied} and planned anyway: a check that goes on past a denied call has not \
         checked what its plan claims, so the plan is not used. Nothing of `{module}` has been done"
    )]
    CheckedPastDenial {
        /// The module.
        module: String,
        /// The call denied, with why, in words.
        denied: String,
    },
    /// What its manifest declares it adopts does not fit the foundation.
    #[error("the `{module}` module's manifest `{}` declares what it adopts wrongly: {error}", manifest.display())]
    Declarations {
        /// The module.
        module: String,
        /// Its manifest.
        manifest: PathBuf,
        /// What does not fit.
        error: crate::effect::DeclarationError,
    },
    /// Its plan has more commands than a plan may.
    #[error(
        "the `{module}` plugin's plan has {commands} commands; a plan may have at most {most} (limits.plan_commands)"
    )]
    PlanCommands {
        /// The module.
        module: String,
        /// How many.
        commands: usize,
        /// The limit.
        most: usize,
    },
    /// Its plan's summary has more lines than a plan may.
    #[error(
        "the `{module}` plugin's plan summary has {lines} lines; a plan may have at most {most} \
         (limits.plan_summary_lines)"
    )]
    PlanSummary {
        /// The module.
        module: String,
        /// How many.
        lines: usize,
        /// The limit.
        most: usize,
    },
    /// Its plan builds and then waits for the node, longer than its wall time allows.
    #[error(
        "the `{module}` plugin's plan builds the module, which may take {build}s, and then waits up to {}s for the \
         node; its wall time of {wall_time:?} (limits.wall_time) would stop it half-way: give more than {needed:?}",
        wait.as_secs()
    )]
    PlanOutlastsWallTime {
        /// The module.
        module: String,
        /// How long the build may take, in seconds.
        build: u32,
        /// The run's wait after a push.
        wait: Duration,
        /// The plugin's wall time.
        wall_time: Duration,
        /// What the wall time must exceed.
        needed: Duration,
    },
    /// A wait the node is known to outlast.
    #[error("the wait (--wait) {}", error.problem)]
    Wait {
        /// The option and its problem.
        error: crate::model::options::OptionError,
    },
    /// A command of its plan holds a credential's value.
    #[error(
        "the `{module}` plugin's plan, command {number} (`tell {shown}`), holds the value of credential \
         `{credential}`: the command would carry it into the control plane's arguments and logs. A credential \
         reaches the control plane only as a carried secret. If the value is a word the plan uses in its own right \
         (a module, container, node or path name), the credential is no secret: give it a value of its own"
    )]
    PlanHoldsCredential {
        /// The module.
        module: String,
        /// The command, counted from 1.
        number: usize,
        /// The command as shown, the value redacted.
        shown: String,
        /// The credential.
        credential: String,
    },
    /// A command of its plan its grants could never allow.
    #[error("the `{module}` plugin plans a command it could never tell: {denial}")]
    PlanBeyondGrants {
        /// The module.
        module: String,
        /// Why the grants refuse it, in words.
        denial: String,
    },
}

impl ModuleError {
    /// What mends it.
    pub fn remedy(&self) -> Remedy {
        match self {
            ModuleError::AskedTwice { module } => {
                Remedy::SetOption { option: "MODULE".into(), must: format!("`{module}` named once") }
            }
            ModuleError::CredentialUnreadable { error, .. } => error.remedy(),
            ModuleError::WorldNotSpoken { manifest, .. } => {
                Remedy::EditFile { path: manifest.clone(), at: Some("adopt.world".into()) }
            }
            ModuleError::Credential { error, .. } => error.error.remedy(),
            ModuleError::Declarations { manifest, error, .. } => {
                Remedy::EditFile { path: manifest.clone(), at: Some(format!("adopts[{}]", error.index)) }
            }
            ModuleError::PlanOutlastsWallTime { needed, .. } => {
                Remedy::SetLimit { limit: "wall_time".into(), must: format!("more than {needed:?}") }
            }
            ModuleError::Wait { error } => error.remedy(),
            ModuleError::CheckedPastDenial { .. }
            | ModuleError::PlanCommands { .. }
            | ModuleError::PlanSummary { .. }
            | ModuleError::PlanHoldsCredential { .. }
            | ModuleError::PlanBeyondGrants { .. } => Remedy::Report,
        }
    }
}
