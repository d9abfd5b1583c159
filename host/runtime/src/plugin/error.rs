//! Why a plugin could not be loaded, compiled or linked, and why the engine or the compile
//! cache could not serve: typed where each is found, so an installer matches the case (not a
//! component, another world, not the pinned plugin, a limit) without reading words.

use std::path::PathBuf;

use crate::model::digest::Sha256;
pub use crate::model::faults::{ComponentFault, EngineWords, NoPlugin, PinMismatch, WorldFault};
use crate::remedy::Remedy;

/// Why a plugin cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The plugin file is not there.
    #[error(transparent)]
    NoPlugin(#[from] NoPlugin),
    /// The plugin file could not be read.
    #[error("failed to read plugin `{}`", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::files::FileError,
    },
    /// Not a WebAssembly component: rebuild it for `wasm32-wasip2`.
    #[error("{}", not_a_component(path.as_ref(), fault))]
    NotAComponent {
        /// The file, when the plugin was loaded from one.
        path: Option<PathBuf>,
        /// Why.
        fault: ComponentFault,
    },
    /// A component of another world.
    #[error("failed to load plugin `{}`{}", path.display(), digest.as_ref().map_or(String::new(), |d| format!(" (sha256 {})", d.short())))]
    OtherWorld {
        /// The file.
        path: PathBuf,
        /// Its sha256, once known.
        digest: Option<Sha256>,
        /// Why.
        #[source]
        fault: WorldFault,
    },
    /// Not the plugin its manifest pins.
    #[error(transparent)]
    PinMismatch(#[from] PinMismatch),
    /// One of the sandbox's limits is too low for it.
    #[error("failed to load plugin `{}`", path.display())]
    Limit {
        /// The file.
        path: PathBuf,
        /// The limit it hit.
        #[source]
        hit: crate::sandbox::limits::LimitHit,
    },
    /// The engine could not be set up to compile or run it.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Optimised code was asked for, and there is no compile cache to keep it in.
    #[error("there is no compile cache to keep optimised code in (it was turned off)")]
    NoCache,
    /// A plugin compiled whose code the compile cache could not keep, so no later run has it.
    #[error("plugin `{}` was compiled, but the compile cache could not keep it", path.display())]
    Unkept {
        /// The file.
        path: PathBuf,
        /// Why the cache did not keep it.
        #[source]
        source: super::CacheError,
    },
}

/// "failed to load plugin `…`: …" for a file, the fault alone for bytes with no file; the first
/// look at a file's framing says the file is no component outright.
fn not_a_component(path: Option<&PathBuf>, fault: &ComponentFault) -> String {
    match (path, fault) {
        (Some(path), ComponentFault::Preamble | ComponentFault::Sections) => {
            format!("plugin `{}` is not a WebAssembly component: {fault}; build it for `wasm32-wasip2`", path.display())
        }
        (Some(path), _) => format!("failed to load plugin `{}`: {fault}", path.display()),
        (None, _) => fault.to_string(),
    }
}

impl PluginError {
    /// What mends it.
    pub fn remedy(&self) -> Remedy {
        match self {
            PluginError::NoPlugin(missing) => missing.remedy(),
            PluginError::Unreadable { path, .. } => Remedy::EditFile { path: path.clone(), at: None },
            PluginError::NotAComponent { path: Some(path), .. } | PluginError::OtherWorld { path, .. } => {
                Remedy::EditFile { path: path.clone(), at: None }
            }
            PluginError::NotAComponent { path: None, .. } => Remedy::Report,
            PluginError::PinMismatch(PinMismatch {
                module: Some(module), manifest: Some(manifest), digest, ..
            }) => Remedy::PinPlugin { module: module.clone(), manifest: manifest.clone(), sha256: digest.clone() },
            PluginError::PinMismatch(pin) => Remedy::EditFile { path: pin.path.clone(), at: None },
            PluginError::Limit { hit, .. } => hit.remedy(),
            PluginError::Engine(engine) => engine.remedy(),
            PluginError::NoCache => Remedy::Report,
            PluginError::Unkept { source, .. } => source.remedy(),
        }
    }
}

/// Why the engine could not be set up: its memory pool reserved, its ticker started, its
/// imports linked.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The engine itself could not be built (its pool of memory reserved).
    #[error("failed to build the WebAssembly engine: {0}")]
    Build(EngineWords),
    /// The thread that ticks plugins' compute deadlines could not be started.
    #[error("failed to start the engine's deadline ticker: {0}")]
    Ticker(EngineWords),
    /// The sandbox's imports could not be linked.
    #[error("failed to link the sandbox's imports: {0}")]
    Link(EngineWords),
}

impl EngineError {
    /// What mends it: most often the machine's room for the pool (fewer concurrent instances).
    pub fn remedy(&self) -> Remedy {
        match self {
            EngineError::Build(_) => Remedy::SetLimit {
                limit: "concurrent_instances".into(),
                must: "fewer instances, whose pool this machine can reserve".into(),
            },
            EngineError::Ticker(_) | EngineError::Link(_) => Remedy::Report,
        }
    }
}
