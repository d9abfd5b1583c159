//! The errors a run reports at its boundary, typed, so an installer can act on what went
//! wrong (raise a limit, fix a manifest, build a plugin) without reading prose: each area's
//! own error is typed where it is found, [`Error`] holds any of them, and every one says what
//! mends it as data ([`Error::remedy`]).

pub use crate::catalogue::{BundleFault, CatalogueError, CredentialError, FoundationError, GrantedCredentialError};
pub use crate::files::FileError;
pub use crate::model::options::{NameError, OptionError, OptionProblem, RunOptionName};
pub use crate::model::stop::StopKind;
pub use crate::plugin::{CacheError, ComponentFault, EngineError, NoPlugin, PinMismatch, PluginError, WorldFault};
pub use crate::remedy::Remedy;
pub use crate::sandbox::limits::{LimitHit, LimitName};

/// An error at the runtime's boundary, by what could not be used. Its text names the file,
/// the value or the limit concerned, and its [`source`](std::error::Error::source) chain
/// says what it was caused by; an installer matches the variant to decide what to do, and
/// [`Error::remedy`] says what mends it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The foundation bundle: unreadable, oversized or malformed.
    #[error(transparent)]
    Foundation(#[from] FoundationError),
    /// The catalogue, a module's entry in it, or its manifest.
    #[error(transparent)]
    Catalogue(CatalogueError),
    /// A plugin: not there, unreadable, not a component, of another world, not the pinned one,
    /// beyond a limit of the sandbox's.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The engine could not be set up (its memory pool reserved, its ticker started).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A credential.
    #[error(transparent)]
    Credential(#[from] CredentialError),
    /// A module of a run, as preflight found it: asked twice, a world not spoken, a plan
    /// beyond the limits or the grants, declarations that do not fit.
    #[error(transparent)]
    Module(#[from] crate::run::problem::ModuleError),
    /// A saved plan file: unreadable, malformed, or of another format.
    #[error(transparent)]
    PlanFile(#[from] crate::run::plan_file::PlanFileError),
    /// The key saved plans' credential digests are made with.
    #[error(transparent)]
    PlanKey(#[from] crate::catalogue::plan_key::PlanKeyError),
    /// A run option's value: which option, and what is wrong with it.
    #[error(transparent)]
    RunOption(#[from] OptionError),
    /// A name (a module's, a node's in a file) that cannot be used.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The compile cache's directory or one of its entries.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A file to read or write that is not a regular file, is too big, or cannot be opened.
    #[error(transparent)]
    File(#[from] FileError),
    /// A recording to replay.
    #[error(transparent)]
    Recording(#[from] crate::mesh::replay::RecordingError),
}

impl Error {
    /// Which input the error is about, in one word, as a program reading it would switch on.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Foundation(_) => "foundation",
            Error::Catalogue(_) => "catalogue",
            Error::Plugin(PluginError::NoPlugin(_)) => "no-plugin",
            Error::Plugin(PluginError::NotAComponent { .. }) => "not-a-component",
            Error::Plugin(PluginError::OtherWorld { .. }) => "other-world",
            Error::Plugin(PluginError::PinMismatch(_)) => "pin-mismatch",
            Error::Plugin(PluginError::Limit { .. }) => "limit-too-low",
            Error::Plugin(_) => "plugin",
            Error::Engine(_) => "engine",
            Error::Credential(_) => "credentials",
            Error::Module(_) => "module",
            Error::PlanFile(_) => "plan-file",
            Error::PlanKey(_) => "plan-key",
            Error::RunOption(_) => "run-option",
            Error::Name(_) => "name",
            Error::Cache(_) => "cache",
            Error::File(_) => "file",
            Error::Recording(_) => "recording",
        }
    }

    /// What mends it, as data: an action and its arguments.
    pub fn remedy(&self) -> Remedy {
        match self {
            Error::Foundation(error) => error.remedy(),
            Error::Catalogue(error) => error.remedy(),
            Error::Plugin(error) => error.remedy(),
            Error::Engine(error) => error.remedy(),
            Error::Credential(error) => error.remedy(),
            Error::Module(error) => error.remedy(),
            Error::PlanFile(error) => error.remedy(),
            Error::PlanKey(error) => error.remedy(),
            Error::RunOption(error) => error.remedy(),
            Error::Name(error) => error.remedy(),
            Error::Cache(error) => error.remedy(),
            Error::File(error) => error.remedy(),
            Error::Recording(error) => error.remedy(),
        }
    }

    /// Which of a module's inputs the error says cannot be used, when it is about a module.
    pub(crate) fn input(&self) -> crate::model::Input {
        use crate::model::Input;
        use crate::run::problem::ModuleError;
        match self {
            Error::Plugin(_) | Error::Engine(_) | Error::Cache(_) => Input::Plugin,
            Error::Credential(_)
            | Error::Module(ModuleError::Credential { .. } | ModuleError::CredentialUnreadable { .. }) => {
                Input::Credentials
            }
            Error::Module(ModuleError::WorldNotSpoken { .. }) => Input::Plugin,
            Error::Module(
                ModuleError::CheckedPastDenial { .. }
                | ModuleError::PlanCommands { .. }
                | ModuleError::PlanSummary { .. }
                | ModuleError::PlanOutlastsWallTime { .. }
                | ModuleError::Wait { .. }
                | ModuleError::PlanHoldsCredential { .. }
                | ModuleError::PlanBeyondGrants { .. },
            ) => Input::Plan,
            _ => Input::Manifest,
        }
    }

    /// The error and every cause after it, each after a colon: what a message of one line
    /// says of it.
    pub fn chain_text(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(next) = cause {
            text.push_str(": ");
            text.push_str(&next.to_string());
            cause = next.source();
        }
        text
    }
}

/// A catalogue's error, but for a module that ships no plugin: that is the plugin's error, as
/// it is however the plugin was asked for.
impl From<CatalogueError> for Error {
    fn from(error: CatalogueError) -> Error {
        match error {
            CatalogueError::NoPlugin(missing) => Error::Plugin(PluginError::NoPlugin(missing)),
            other => Error::Catalogue(other),
        }
    }
}
