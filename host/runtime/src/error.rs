//! The errors a run reports at its boundary, typed, so an installer can act on what went
//! wrong (retry with more memory, fix a manifest, show a refusal) without reading prose.

use std::fmt;

use crate::sandbox::grants::Phase;

/// Which of a module's inputs cannot be used. Found in preflight, before any effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The module's catalogue entry or its manifest: missing, malformed, misnamed, or
    /// granting more than the host allows.
    Manifest,
    /// Its plugin: missing, not a component, not of this host's world, or not the pinned one.
    Plugin,
    /// A credential its manifest grants: missing, empty, oversized or not a file.
    Credentials,
    /// The plan its `check` made: beyond the limits, or commands its grants could never allow.
    Plan,
    /// Its plugin was stopped by the sandbox while it was only being checked.
    Stopped(StopKind),
}

impl Input {
    /// The input's name as the record and `--json` give it.
    pub fn name(self) -> &'static str {
        match self {
            Input::Manifest => "manifest",
            Input::Plugin => "plugin",
            Input::Credentials => "credentials",
            Input::Plan => "plan",
            Input::Stopped(_) => "stopped",
        }
    }
}

/// A module that cannot be used as it is, and why in words.
#[derive(Debug, Clone)]
pub struct Unusable {
    /// What is wrong with it.
    pub input: Input,
    /// The whole explanation, naming the file or the limit concerned.
    pub message: String,
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Unusable {}

/// Why the sandbox stopped a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

impl StopKind {
    /// The kind's name as the record and `--json` give it.
    pub fn name(self) -> &'static str {
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
    /// memory or other trap.
    pub(crate) fn of(error: &anyhow::Error) -> StopKind {
        if let Some(reason) = error.chain().find_map(|e| e.downcast_ref::<StopReason>()) {
            return reason.kind;
        }
        let words = format!("{error:#}");
        if words.contains("growing memory") || words.contains("memory pool") || words.contains("memory limit") {
            StopKind::Memory
        } else {
            StopKind::Trap
        }
    }
}

/// A plugin the sandbox stopped, with the report a person reads: the reason, its last host
/// call, what it wrote and what it had already done.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// In which export it was stopped.
    pub during: Phase,
    /// Why.
    pub kind: StopKind,
    /// The whole stop report.
    pub report: String,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for Stopped {}

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
