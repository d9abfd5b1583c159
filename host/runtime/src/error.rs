//! The errors a run reports at its boundary, typed, so an installer can act on what went
//! wrong (retry with more memory, fix a manifest, show a refusal) without reading prose.

use std::fmt;
use std::path::PathBuf;

pub use crate::remedy::Remedy;

/// Why the sandbox stopped a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StopKind {
    /// Its call ran past its wall time (`--plugin-wall-time`), whatever it waited on.
    WallTime,
    /// It computed for longer than its guest time (`--plugin-time`).
    GuestTime,
    /// It asked for more memory than its cap (`--plugin-memory`) or the pool allows.
    Memory,
    /// It went past one of the host's other limits: host calls, lines said, bytes recorded.
    Limit,
    /// It called a part of WASI the sandbox does not give (files, sockets, http).
    Sandbox,
    /// It trapped: a panic, `unreachable`, an out-of-bounds access.
    Trap,
}

impl fmt::Display for StopKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StopKind {
    /// The kind's name as the record and `--json` give it.
    pub fn as_str(self) -> &'static str {
        match self {
            StopKind::WallTime => "wall-time",
            StopKind::GuestTime => "guest-time",
            StopKind::Memory => "memory",
            StopKind::Limit => "limit",
            StopKind::Sandbox => "sandbox",
            StopKind::Trap => "trap",
        }
    }

    /// The kind of the stop `error` reports: the typed reason its source attached, else a
    /// trap. (A memory refused growth is known from the store, which noted it.)
    pub(crate) fn of(error: &anyhow::Error) -> StopKind {
        error.chain().find_map(|e| e.downcast_ref::<StopReason>()).map_or(StopKind::Trap, |reason| reason.kind)
    }
}

/// The reason a stop's source gives, typed at the source so the report's kind does not have
/// to be read back out of its words.
#[derive(Debug, Clone)]
pub(crate) struct StopReason {
    pub(crate) kind: StopKind,
    pub(crate) words: String,
}

impl StopReason {
    /// A stop of `kind`, said in `words`, as the error an export call ends with (wasmtime
    /// keeps it downcastable when the error becomes an `anyhow::Error`).
    pub(crate) fn error(kind: StopKind, words: impl Into<String>) -> wasmtime::Error {
        wasmtime::Error::new(StopReason { kind, words: words.into() })
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words)
    }
}

impl std::error::Error for StopReason {}

/// An error at the runtime's boundary, by what could not be used. Its text names the file,
/// the value or the limit concerned, and its [`source`](std::error::Error::source) chain
/// says what it was caused by; an installer matches the variant to decide what to do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The foundation bundle: unreadable, oversized or malformed.
    #[error(transparent)]
    Foundation(Explained),
    /// The catalogue, a module's entry in it, or its manifest.
    #[error(transparent)]
    Catalogue(Explained),
    /// A plugin file that could not be used for another reason than those below: unreadable,
    /// oversized, beyond the sandbox's limits, or stopped while it was only being started.
    #[error(transparent)]
    Plugin(Explained),
    /// A plugin file that is not a WebAssembly component (not WebAssembly at all, a core
    /// module, cut short, or refused by the validator): rebuild it for `wasm32-wasip2`.
    #[error(transparent)]
    NotAComponent(Explained),
    /// A component of another world: a contract version this host does not speak, exports
    /// that fit no `adopter` world, or imports the sandbox does not give.
    #[error(transparent)]
    OtherWorld(Explained),
    /// A plugin that is not the one its manifest pins.
    #[error(transparent)]
    PinMismatch(#[from] PinMismatch),
    /// A limit too low for what a plugin's plan needs: raise it.
    #[error("limits.{} must be more than {needed:?}", limit.field())]
    LimitTooLow {
        /// The limit.
        limit: LimitName,
        /// What the plan needs it to exceed.
        needed: std::time::Duration,
    },
    /// A plugin file that is not there: the module's plugin has not been built yet (or the
    /// path given to [`crate::PluginHost::load`] names nothing). The same error whichever way
    /// the plugin was asked for.
    #[error("{} `{}` does not exist", module.as_ref().map_or("no plugin:".to_string(), |m| format!("the `{m}` module ships no plugin:")), path.display())]
    NoPlugin {
        /// The module, when the plugin was asked for by its module (through a catalogue).
        module: Option<String>,
        /// Where its manifest says the plugin is.
        path: std::path::PathBuf,
    },
    /// A saved plan file: unreadable, malformed, or of another format.
    #[error(transparent)]
    PlanFile(Explained),
    /// The key saved plans' credential digests are made with.
    #[error(transparent)]
    PlanKey(Explained),
    /// A run option's value: which option, and what is wrong with it (said after the
    /// option's name, so a caller can put the name its user gave it in front).
    #[error("{} {why}", option.words())]
    RunOption {
        /// The option.
        option: RunOptionName,
        /// What is wrong with its value.
        why: String,
    },
    /// The compile cache's directory or one of its entries.
    #[error(transparent)]
    Cache(Explained),
    /// A file to read or write that is not a regular file, is too big, or cannot be opened.
    #[error(transparent)]
    File(Explained),
    /// A recording to replay.
    #[error(transparent)]
    Recording(Explained),
    /// The engine could not be set up (its memory pool reserved, its ticker started).
    #[error(transparent)]
    Engine(Explained),
}

/// The explanation an [`Error`] carries: its text, and what it was caused by, outermost
/// first, each a sentence a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    text: String,
    cause: Option<Box<Explained>>,
}

impl Explained {
    /// The explanation of an error raised inside the runtime, with its whole chain.
    pub(crate) fn of(error: &anyhow::Error) -> Explained {
        let mut texts: Vec<String> = error.chain().map(ToString::to_string).collect();
        let mut explained = Explained { text: texts.pop().unwrap_or_default(), cause: None };
        while let Some(text) = texts.pop() {
            explained = Explained { text, cause: Some(Box::new(explained)) };
        }
        explained
    }

    /// The outermost text, without its causes.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The text alone; with `{:#}`, its causes after it, each after a colon, as `anyhow` shows a
/// chain.
impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        if f.alternate() {
            let mut cause = self.cause.as_deref();
            while let Some(next) = cause {
                write!(f, ": {}", next.text)?;
                cause = next.cause.as_deref();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Explained {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

impl Error {
    /// Which input the error is about, in one word, as a program reading it would switch on.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Foundation(_) => "foundation",
            Error::Catalogue(_) => "catalogue",
            Error::Plugin(_) => "plugin",
            Error::NotAComponent(_) => "not-a-component",
            Error::OtherWorld(_) => "other-world",
            Error::PinMismatch(_) => "pin-mismatch",
            Error::NoPlugin { .. } => "no-plugin",
            Error::LimitTooLow { .. } => "limit-too-low",
            Error::PlanFile(_) => "plan-file",
            Error::PlanKey(_) => "plan-key",
            Error::RunOption { .. } => "run-option",
            Error::Cache(_) => "cache",
            Error::File(_) => "file",
            Error::Recording(_) => "recording",
            Error::Engine(_) => "engine",
        }
    }
}

/// Runs `body`, which reports in the runtime's own terms, and gives its error at the
/// boundary as `as_error` types it: the one place the library's typed errors are made.
pub(crate) fn at_boundary<T>(
    as_error: fn(Explained) -> Error,
    body: impl FnOnce() -> anyhow::Result<T>,
) -> Result<T, Error> {
    body().map_err(|e| typed(as_error, e))
}

/// `error` typed: a kind its source already carries (a pin mismatch, a typed error from a
/// function below) is kept; anything else is `as_error`'s.
pub(crate) fn typed(as_error: fn(Explained) -> Error, error: anyhow::Error) -> Error {
    // Context added on the way up says more than the kind below it: that is kept as text.
    if error.chain().count() == 1 {
        let error = match error.downcast::<Error>() {
            Ok(typed) => return typed,
            Err(error) => error,
        };
        if let Some(pin) = error.downcast_ref::<PinMismatch>() {
            return Error::PinMismatch(pin.clone());
        }
        return as_error(Explained::of(&error));
    }
    as_error(Explained::of(&error))
}

/// What was wrong with a plugin file, marked where it is found so the error at the boundary
/// is typed by it whatever context is added on the way up; its text is the message.
#[derive(Debug)]
pub(crate) struct PluginFault {
    kind: PluginFaultKind,
    message: String,
}

/// Which [`Error`] variant a [`PluginFault`] becomes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PluginFaultKind {
    /// [`Error::NotAComponent`].
    NotAComponent,
    /// [`Error::OtherWorld`].
    OtherWorld,
}

impl PluginFault {
    /// A fault of `kind`, said in `message`, as an error to return.
    pub(crate) fn error(kind: PluginFaultKind, message: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(PluginFault { kind, message: message.into() })
    }
}

impl fmt::Display for PluginFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PluginFault {}

/// [`at_boundary`] for work on a plugin file: typed by the fault found in it, if one was, else
/// [`Error::Plugin`].
pub(crate) fn plugin_at_boundary<T>(body: impl FnOnce() -> anyhow::Result<T>) -> Result<T, Error> {
    body().map_err(plugin_error)
}

/// A plugin file's `error` typed: a kind its source carries (a pin mismatch, a missing file)
/// kept, else the fault marked in its chain, else [`Error::Plugin`].
pub(crate) fn plugin_error(error: anyhow::Error) -> Error {
    let fault = error.chain().find_map(|e| e.downcast_ref::<PluginFault>()).map(|f| f.kind);
    match fault {
        Some(PluginFaultKind::NotAComponent) if error.chain().count() > 1 || !is_typed(&error) => {
            Error::NotAComponent(Explained::of(&error))
        }
        Some(PluginFaultKind::OtherWorld) if error.chain().count() > 1 || !is_typed(&error) => {
            Error::OtherWorld(Explained::of(&error))
        }
        _ => typed(Error::Plugin, error),
    }
}

/// Whether `error` is, alone, one the runtime already typed.
fn is_typed(error: &anyhow::Error) -> bool {
    error.chain().count() == 1
        && (error.downcast_ref::<Error>().is_some() || error.downcast_ref::<PinMismatch>().is_some())
}

/// A plugin that is not the one its manifest pins: kept typed so a caller that knows the
/// module can say how to mend it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinMismatch {
    /// The plugin file refused.
    pub path: PathBuf,
    /// Its sha256.
    pub digest: String,
    /// The sha256 the manifest pins.
    pub pin: String,
}

impl fmt::Display for PinMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused to load plugin `{}`: its sha256 is {}, and the manifest pins {}",
            self.path.display(),
            self.digest,
            self.pin
        )
    }
}

impl std::error::Error for PinMismatch {}

/// Which run option an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOptionName {
    /// The node modules are assigned to.
    Node,
    /// Where the modules are built from.
    CatalogSource,
    /// How long to wait for the node after a push.
    Wait,
}

impl RunOptionName {
    /// The option in words, as the runtime names it.
    pub fn words(self) -> &'static str {
        match self {
            RunOptionName::Node => "the node",
            RunOptionName::CatalogSource => "the catalogue source",
            RunOptionName::Wait => "the wait",
        }
    }
}

/// A limit of the sandbox's, named so a caller can say how its user sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitName {
    /// `limits.wall_time`: how long an export call may take, waits included.
    WallTime,
}

impl LimitName {
    /// The field of [`crate::Limits`] it is.
    pub fn field(self) -> &'static str {
        match self {
            LimitName::WallTime => "wall_time",
        }
    }
}
