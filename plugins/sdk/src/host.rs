//! The host's capabilities, wrapped so that a failed call reads as a refusal naming the call.
//!
//! Plugins call these rather than the raw bindings: the host's typed error keeps its kind
//! (denied, failed, timed out, unavailable) in the message, and the call is quoted the way an
//! operator would type it.

use crate::bindings::mesh::adopt::{clock, control, log, machine, types::HostError};
use crate::{Refusal, refuse};

pub use control::Secret;
pub use machine::{ContainerState, Response};

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
pub fn tell(args: &[&str]) -> Result<String, Refusal> {
    tell_within(args, TELL_TIMEOUT_SECONDS)
}

/// Tells the control plane one command, allowing it `timeout_seconds`.
pub fn tell_within(args: &[&str], timeout_seconds: u32) -> Result<String, Refusal> {
    control::tell(args, timeout_seconds)
        .map_err(|e| refuse(format!("failed to tell `{}`: {}", quoted(args), describe(&e))))
}

/// A command as a refusal quotes it: in full when short, cut when a plugin built it huge.
fn quoted(args: &[&str]) -> String {
    const SHOWN: usize = 200;
    let command = args.join(" ");
    match command.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{} … ({} bytes)", &command[..cut], command.len()),
        None => command,
    }
}

/// Carries bytes the plugin has into the control plane at `remote`.
pub fn carry_bytes(name: &str, bytes: &[u8], remote: &str) -> Result<(), Refusal> {
    control::carry(name, control::Payload::Bytes(bytes), remote)
        .map_err(|e| refuse(format!("failed to carry `{name}` to `{remote}`: {}", describe(&e))))
}

/// Carries a secret into the control plane at `remote`; the plugin never sees its bytes.
pub fn carry_secret(secret: &Secret, remote: &str) -> Result<(), Refusal> {
    let name = secret.name();
    control::carry(&name, control::Payload::Secret(secret), remote)
        .map_err(|e| refuse(format!("failed to carry secret `{name}` to `{remote}`: {}", describe(&e))))
}

/// Asks the host for a genesis credential by name. The error is returned as the host gave it,
/// so the caller can say what the missing credential means for its module.
pub fn credential(name: &str) -> Result<Secret, HostError> {
    control::credential(name)
}

/// Asks the node what a container runs: `None` when there is no such container. The error is
/// returned as the host gave it: a node that cannot be asked right now is often worth asking
/// again.
pub fn inspect(container: &str) -> Result<Option<ContainerState>, HostError> {
    machine::inspect(container)
}

/// An HTTP GET. The error is returned as the host gave it, since a health probe that cannot
/// connect is an answer, not a reason to stop.
pub fn fetch(url: &str) -> Result<Response, HostError> {
    machine::fetch(url)
}

/// A host error in words, its kind first.
pub fn describe(error: &HostError) -> String {
    match error {
        HostError::Denied(m) => format!("denied: {m}"),
        HostError::Failed(m) => format!("the mesh said no: {m}"),
        HostError::TimedOut(m) => format!("timed out: {m}"),
        HostError::Unavailable(m) => format!("unavailable: {m}"),
    }
}
