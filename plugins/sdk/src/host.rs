//! The host's capabilities, wrapped so that every failed call is one [`Error`] naming the call.
//!
//! Plugins call these rather than the raw bindings. Each wrapper returns [`Error`], which keeps
//! the host's kind (denied, failed, timed out, unavailable) for a caller that decides on it and
//! turns into a [`Refusal`] quoting the call the way an operator would type it, so `?` works on
//! every host call inside [`Plugin::check`](crate::Plugin::check) and
//! [`Plugin::adopt`](crate::Plugin::adopt).

use std::fmt;

use crate::bindings::mesh::adopt::{clock, control, log, machine, types::HostError};
use crate::command::{Command, typed};
use crate::{Refusal, refuse};

pub use control::Secret;
pub use machine::{ContainerState, Response};

/// A host call that did not do what the plugin asked: which call it was and what the host
/// answered. As a [`Refusal`] it reads `failed to <call>: <kind>: <the host's text>`.
#[derive(Debug, Clone)]
pub struct Error {
    call: String,
    host: HostError,
}

/// What kind of "no" the host gave, for a caller that treats some as an answer (a health
/// probe that cannot connect) and others as a reason to stop (a call not granted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The host's grants do not allow the call.
    Denied,
    /// The mesh was asked and said no.
    Failed,
    /// No answer came within the call's timeout.
    TimedOut,
    /// What was asked for is not there to be asked.
    Unavailable,
}

impl Error {
    fn new(call: String, host: HostError) -> Error {
        Error { call, host }
    }

    /// The host's kind of "no".
    pub fn kind(&self) -> ErrorKind {
        match self.host {
            HostError::Denied(_) => ErrorKind::Denied,
            HostError::Failed(_) => ErrorKind::Failed,
            HostError::TimedOut(_) => ErrorKind::TimedOut,
            HostError::Unavailable(_) => ErrorKind::Unavailable,
        }
    }

    /// The error exactly as the host gave it.
    pub fn host_error(&self) -> &HostError {
        &self.host
    }

    /// The call as a refusal names it, e.g. ``tell `push node-1` ``.
    pub fn call(&self) -> &str {
        &self.call
    }

    /// The host's answer in words, its kind first (`denied: …`), without the call: for a
    /// message that names the call its own way.
    pub fn reason(&self) -> String {
        describe(&self.host)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failed to {}: {}", self.call, self.reason())
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The refusal's code for a call the host said no to: `call-denied`, `call-failed`,
    /// `call-timed-out` or `call-unavailable`.
    pub fn code(&self) -> &'static str {
        match self.kind() {
            ErrorKind::Denied => "call-denied",
            ErrorKind::Failed => "call-failed",
            ErrorKind::TimedOut => "call-timed-out",
            ErrorKind::Unavailable => "call-unavailable",
        }
    }
}

impl From<Error> for Refusal {
    fn from(error: Error) -> Refusal {
        refuse(error.code(), error.to_string())
    }
}

/// How long an ordinary control-plane command may take before the host gives up on it.
pub const TELL_TIMEOUT_SECONDS: u32 = 60;

/// Shows a line to the operator.
pub fn say(line: &str) {
    log::say(line);
}

/// Milliseconds since the run began, on the host's clock (virtual in the simulator).
pub fn now_millis() -> u64 {
    clock::now()
}

/// Waits on the host's clock.
pub fn sleep_millis(millis: u64) {
    clock::sleep(millis);
}

/// Tells the control plane one command with the ordinary timeout.
pub fn tell(command: &Command) -> Result<String, Error> {
    tell_within(command, TELL_TIMEOUT_SECONDS)
}

/// Tells the control plane one command, allowing it `timeout_seconds`.
pub fn tell_within(command: &Command, timeout_seconds: u32) -> Result<String, Error> {
    control::tell(&typed(command), timeout_seconds).map_err(|e| Error::new(format!("tell `{}`", quoted(command)), e))
}

/// A command as a refusal quotes it: in full when short, cut when a plugin built it huge.
fn quoted(command: &Command) -> String {
    const SHOWN: usize = 200;
    let command = command.to_string();
    match command.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{} … ({} bytes)", &command[..cut], command.len()),
        None => command,
    }
}

/// Carries bytes the plugin has into the control plane at `remote`.
pub fn carry_bytes(name: &str, bytes: &[u8], remote: &str) -> Result<(), Error> {
    control::carry(name, &control::Payload::Bytes(bytes.to_vec()), remote)
        .map_err(|e| Error::new(format!("carry `{name}` to `{remote}`"), e))
}

/// Carries a secret into the control plane at `remote`; the plugin never sees its bytes.
pub fn carry_secret(secret: &Secret, remote: &str) -> Result<(), Error> {
    let name = secret.name();
    control::carry(&name, &control::Payload::Secret(secret), remote)
        .map_err(|e| Error::new(format!("carry secret `{name}` to `{remote}`"), e))
}

/// Asks the host for a genesis credential by name. It works in `check` as in `adopt`; a caller
/// that can say what the missing credential means for its module words the refusal from
/// [`Error::reason`].
pub fn credential(name: &str) -> Result<Secret, Error> {
    control::credential(name).map_err(|e| Error::new(format!("get credential `{name}`"), e))
}

/// Asks the node what a container runs: `None` when there is no such container. A node that
/// cannot be asked right now ([`ErrorKind::Failed`], [`ErrorKind::TimedOut`]) is often worth
/// asking again. Only containers the manifest grants in `adopt.grants.inspect` can be asked
/// about; [`crate::grants::Reads`] checks that in `check`.
pub fn inspect(container: &str) -> Result<Option<ContainerState>, Error> {
    machine::inspect(container).map_err(|e| Error::new(format!("inspect container `{container}`"), e))
}

/// An HTTP GET. A health probe that cannot connect has an answer, not a reason to stop: match
/// on [`Error::kind`]. Only URLs the manifest grants in `adopt.grants.fetch` can be fetched;
/// [`crate::grants::Reads`] checks that in `check`.
pub fn fetch(url: &str) -> Result<Response, Error> {
    machine::fetch(url).map_err(|e| Error::new(format!("fetch `{url}`"), e))
}

/// A host error in words, its kind first: what [`Error::reason`] says.
pub fn describe(error: &HostError) -> String {
    match error {
        HostError::Denied(m) => format!("denied: {m}"),
        HostError::Failed(m) => format!("the mesh said no: {m}"),
        HostError::TimedOut(m) => format!("timed out: {m}"),
        HostError::Unavailable(m) => format!("unavailable: {m}"),
    }
}
