//! Why the sandbox stopped a plugin, typed where the stop is found (a deadline, a limit, a
//! refused import) so a report's kind is never read back out of its words.

use std::fmt;

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
    pub(crate) fn of(error: &wasmtime::Error) -> StopKind {
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
    /// keeps it downcastable through whatever it adds).
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
