//! Which native code a plugin runs as, and how a host chooses it.
//!
//! A plugin is compiled before it runs. wasmtime has two compilers: Cranelift optimises (an
//! 18 MB Python plugin takes it seconds), Winch compiles in one pass (about a second for the
//! same plugin) to code that runs slower. A person waits for a first run and not for the
//! code's speed (a plugin runs for milliseconds), so a big plugin's first run gets Winch's
//! code and optimised code is made where nobody waits for it (`mesh-adopt build`,
//! `mesh-adopt cache optimise`); a small plugin, which Cranelift compiles in a blink, is
//! optimised at once.

use std::fmt;
use std::time::Duration;

/// The kind of native code a plugin is compiled to: part of a compile cache entry's key, and
/// what a run's record says each plugin ran as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CodeKind {
    /// Winch's: compiled in one pass, quickly, to code that runs slower.
    Baseline,
    /// Cranelift's: compiled slowly, to the fastest code.
    Optimised,
}

impl CodeKind {
    /// Both kinds, the preferred first.
    pub const ALL: [CodeKind; 2] = [CodeKind::Optimised, CodeKind::Baseline];

    /// The compiler that makes this kind of code, as wasmtime names it.
    pub fn compiler(self) -> &'static str {
        match self {
            CodeKind::Baseline => "winch",
            CodeKind::Optimised => "cranelift",
        }
    }

    /// The kind as options and the record spell it: `baseline` or `optimised`.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeKind::Baseline => "baseline",
            CodeKind::Optimised => "optimised",
        }
    }
}

impl fmt::Display for CodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.as_str(), self.compiler())
    }
}

/// The largest plugin compiled to optimised code on its first run: Cranelift compiles about
/// 5 MB of WebAssembly a second on two cores, so a plugin of this size costs it a fifth of a
/// second (every Rust plugin is far smaller). A bigger one is compiled by Winch first.
pub const OPTIMISE_AT_ONCE_BYTES: usize = 1 << 20;

/// Which code a host runs its plugins as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CodePolicy {
    /// The best code already compiled (optimised, else baseline); a plugin compiled afresh
    /// gets optimised code when it is at most [`OPTIMISE_AT_ONCE_BYTES`], baseline code when
    /// bigger.
    #[default]
    Auto,
    /// This kind only, compiled when it is not cached: to test plugins on each kind of code.
    Only(CodeKind),
}

impl CodePolicy {
    /// The kinds a cached plugin of `size` bytes (when known) may be taken as, in the order
    /// they are looked for: a plugin small enough to be optimised at once is not left on
    /// baseline code that a forced run compiled.
    pub fn accepts(self, size: Option<u64>) -> &'static [CodeKind] {
        match self {
            CodePolicy::Auto if size.is_some_and(|size| size <= OPTIMISE_AT_ONCE_BYTES as u64) => {
                &[CodeKind::Optimised]
            }
            CodePolicy::Auto => &CodeKind::ALL,
            CodePolicy::Only(CodeKind::Optimised) => &[CodeKind::Optimised],
            CodePolicy::Only(CodeKind::Baseline) => &[CodeKind::Baseline],
        }
    }

    /// The kind a plugin of `size` bytes is compiled to when none is cached.
    pub fn compiles(self, size: usize) -> CodeKind {
        match self {
            CodePolicy::Auto if size <= OPTIMISE_AT_ONCE_BYTES => CodeKind::Optimised,
            CodePolicy::Auto => CodeKind::Baseline,
            CodePolicy::Only(kind) => kind,
        }
    }
}

/// How a plugin's code was had for this process: compiled now (and how long that took), or
/// taken as compiled before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeOrigin {
    /// The code it runs as.
    pub kind: CodeKind,
    /// How long compiling it took in this process; `None` when it came from the compile
    /// cache or was already loaded.
    pub compiled: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_plugin_is_optimised_at_once_and_a_big_one_compiled_by_winch_first() {
        assert_eq!(CodePolicy::Auto.compiles(68 << 10), CodeKind::Optimised);
        assert_eq!(CodePolicy::Auto.compiles(OPTIMISE_AT_ONCE_BYTES), CodeKind::Optimised);
        assert_eq!(CodePolicy::Auto.compiles(OPTIMISE_AT_ONCE_BYTES + 1), CodeKind::Baseline);
        assert_eq!(CodePolicy::Only(CodeKind::Optimised).compiles(20 << 20), CodeKind::Optimised);
        assert_eq!(CodePolicy::Only(CodeKind::Baseline).compiles(1), CodeKind::Baseline);
        assert_eq!(CodePolicy::Auto.accepts(Some(20 << 20)), [CodeKind::Optimised, CodeKind::Baseline]);
        assert_eq!(CodePolicy::Auto.accepts(None), [CodeKind::Optimised, CodeKind::Baseline]);
        assert_eq!(CodePolicy::Auto.accepts(Some(68 << 10)), [CodeKind::Optimised]);
        assert_eq!(CodePolicy::Only(CodeKind::Baseline).accepts(Some(68 << 10)), [CodeKind::Baseline]);
    }
}
