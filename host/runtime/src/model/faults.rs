//! What a plugin file or its component is found to be when it cannot be used: not there, not
//! the pinned one, not a component, not of this host's world; and the engine's own words kept
//! as text. Below the sandbox and the contract, which find the same faults, so that each
//! says them in one type the plugin's error then carries.

use std::path::PathBuf;

/// What the engine said, kept as its words and the words of what it was caused by: wasmtime's
/// own errors are not ours to type, and must not reach an embedder's signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineWords(String);

impl EngineWords {
    /// The engine's error, its whole chain in one line.
    pub(crate) fn of(error: &wasmtime::Error) -> EngineWords {
        EngineWords(format!("{error:#}"))
    }

    /// Words the engine's side gave otherwise (a thread that would not start).
    pub(crate) fn said(words: impl Into<String>) -> EngineWords {
        EngineWords(words.into())
    }

    /// The words.
    pub fn text(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EngineWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A plugin file that is not there: the module's plugin has not been built yet (or the path
/// given names nothing). The same whichever way the plugin was asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} `{}` does not exist",
    module.as_ref().map_or("no plugin:".to_string(), |m| format!("the `{m}` module ships no plugin:")),
    path.display()
)]
pub struct NoPlugin {
    /// The module, when the plugin was asked for by its module (through a catalogue).
    pub module: Option<String>,
    /// Where its manifest says the plugin is.
    pub path: PathBuf,
}

impl NoPlugin {
    /// What mends it: the module's plugin built, or the path given mended.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        match &self.module {
            Some(module) => crate::remedy::Remedy::BuildPlugin { module: module.clone() },
            None => crate::remedy::Remedy::EditFile { path: self.path.clone(), at: None },
        }
    }
}

/// A plugin that is not the one its manifest pins.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refused to load plugin `{}`: its sha256 is {digest}, and the manifest pins {pin}",
    path.display()
)]
pub struct PinMismatch {
    /// The plugin file refused.
    pub path: PathBuf,
    /// Its sha256.
    pub digest: String,
    /// The sha256 the manifest pins.
    pub pin: String,
    /// The module, when the plugin was asked for by its module.
    pub module: Option<String>,
    /// The manifest that pins it, when known.
    pub manifest: Option<PathBuf>,
}

/// Why bytes are not a WebAssembly component this host can compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ComponentFault {
    /// They do not begin as a component does.
    #[error("it does not begin as one (`\\0asm`, version 13, layer 1)")]
    Preamble,
    /// Their sections do not fit in them.
    #[error("its sections do not fit in it (cut short, or not sections at all)")]
    Sections,
    /// Not WebAssembly at all.
    #[error("it is not WebAssembly (no `\\0asm` header)")]
    NotWebAssembly,
    /// The engine's validator or compiler refused it.
    #[error("it is not a valid WebAssembly component: {0}")]
    Invalid(EngineWords),
}

/// Why a component is not of the world this host runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorldFault {
    /// It targets a contract version this host does not speak.
    #[error("it targets {package}@{version} (it imports `{import}`); this host implements {package}@{spoken}")]
    OtherVersion {
        /// The contract's package.
        package: &'static str,
        /// The version it targets.
        version: String,
        /// The import that says so.
        import: String,
        /// The versions this host speaks.
        spoken: String,
    },
    /// It imports two versions of the contract.
    #[error("it imports two versions of {package} ({first} and {second}); a plugin is built for one")]
    TwoVersions {
        /// The contract's package.
        package: &'static str,
        /// One version.
        first: String,
        /// The other.
        second: String,
    },
    /// It imports what the sandbox does not offer.
    #[error("it imports what this sandbox does not offer: {refused}. {offered}")]
    NotOffered {
        /// What it imports that is refused.
        refused: String,
        /// What the sandbox does offer, in words.
        offered: String,
    },
    /// Its exports fit no world of a version this host speaks.
    #[error("it does not fit the `adopter` world of {contract}: {engine}")]
    Misfit {
        /// The contract version it was held to.
        contract: crate::model::contract::Contract,
        /// What the engine said.
        engine: EngineWords,
    },
    /// It fits none of the versions.
    #[error("it fits no contract version this host speaks")]
    NoVersion,
    /// The engine could not tell what it imports.
    #[error("{0}")]
    Unread(EngineWords),
}
