//! A mesh's lock: one run changes a mesh at a time. A run takes the lock before preflight and
//! holds it to its end; a second run is refused (or waits) and is told who holds it. A lock
//! left by a process that died is never broken by a run: it is shown as left, and broken by
//! the operator (`mesh-adopt unlock ID`, [`super::Mesh::unlock`]).

use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who holds a lock, as the holder said when it took it: what a refused run shows, what a
/// live mesh's `lock` command is handed and answers with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LockHolder {
    /// The lock's id: what `mesh-adopt unlock ID` names to break it.
    pub id: String,
    /// The host the holder runs on.
    pub host: String,
    /// The holder's process id on that host.
    pub pid: u32,
    /// The holder's command line.
    pub command: String,
    /// When it took the lock: RFC 3339, UTC, to the second.
    pub since: String,
    /// The node its run assigns modules to.
    pub node: String,
}

impl LockHolder {
    /// This process, about to take a lock for a run of `command` on `node`, with a fresh id.
    pub fn this_process(command: &str, node: &str) -> LockHolder {
        let mut id = [0u8; 8];
        rand::fill(&mut id);
        LockHolder {
            id: id.iter().map(|b| format!("{b:02x}")).collect(),
            host: this_host(),
            pid: std::process::id(),
            command: command.to_string(),
            since: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            node: node.to_string(),
        }
    }

    /// Whether the holder's process is known to be gone: it ran on this host and no process
    /// has its id any more. A holder on another host cannot be told from here (`false`).
    pub fn process_gone(&self) -> bool {
        self.host == this_host() && !process_runs(self.pid)
    }

    /// The holder in one line for a person: who, since when, and the lock's id, with a note
    /// when its process is gone.
    pub fn described(&self) -> String {
        let gone = if self.process_gone() { "; its process is gone: a run killed outright left the lock" } else { "" };
        format!(
            "process {} on host `{}` (`{}`), since {}; lock id `{}`{gone}",
            self.pid, self.host, self.command, self.since, self.id
        )
    }

    /// The holder as one JSON line: what a live mesh's `lock` command reads on its standard
    /// input and prints when it refuses.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a lock holder serialises")
    }

    /// A holder read back from the first non-empty line of `text`, as a `lock` command prints
    /// it; an error says what is wrong with it.
    pub fn from_line(text: &str) -> Result<LockHolder, String> {
        let line = text.lines().find(|l| !l.trim().is_empty()).ok_or("it printed no holder")?;
        serde_json::from_str(line).map_err(|e| format!("`{line}` is not a lock holder: {e}"))
    }
}

/// What asking for a mesh's lock came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locking {
    /// The lock is this run's until it is released; `scope` says what it keeps out.
    Taken {
        /// Which lock guards the mesh.
        scope: LockScope,
    },
    /// Another holds the lock: the run changes nothing.
    Held(LockHolder),
}

/// What the lock a run took keeps out, so a run on a mesh that cannot be locked says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockScope {
    /// The mesh's own lock: a run from any machine is kept out (a live mesh takes this
    /// machine's lock too).
    Mesh,
    /// This machine's lock only: the mesh has no lock of its own (a live mesh without a `lock`
    /// command), so a run from another machine is not kept out.
    Machine,
    /// No lock at all: the mesh implements none, and nothing keeps another run out.
    None,
}

impl LockScope {
    /// How the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            LockScope::Mesh => "mesh",
            LockScope::Machine => "machine",
            LockScope::None => "none",
        }
    }
}

/// What releasing a lock by its id came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unlocked {
    /// It was held under that id, and is released.
    Released,
    /// No lock was held under that id (nothing was held, or it was broken already).
    NotHeld,
    /// The lock is held under another id, which was left alone.
    HeldByAnother(LockHolder),
}

/// This host's name, as `hostname` prints it.
pub fn this_host() -> String {
    let mut name = [0u8; 256];
    // SAFETY: the buffer is valid for its length, and gethostname writes at most that much.
    let done = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    if done != 0 {
        return "localhost".to_string();
    }
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..end]).into_owned()
}

/// Whether a process with this id runs on this host (one of another user's counts).
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let answer = unsafe { libc::kill(pid, 0) };
    answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_goes_out_as_one_line_and_comes_back_the_same() {
        let holder = LockHolder::this_process("mesh-adopt run --mesh live", "node-1");
        assert_eq!(holder.id.len(), 16);
        assert!(holder.since.ends_with('Z'), "{}", holder.since);
        let line = holder.to_line();
        assert!(!line.contains('\n'));
        assert_eq!(LockHolder::from_line(&format!("\n{line}\n")), Ok(holder));
        assert!(LockHolder::from_line("").unwrap_err().contains("printed no holder"));
        assert!(LockHolder::from_line("held by someone").unwrap_err().contains("is not a lock holder"));
    }

    #[test]
    fn a_holder_whose_process_is_gone_is_said_to_be_left() {
        let mut holder = LockHolder::this_process("mesh-adopt run", "node-1");
        assert!(!holder.process_gone(), "this process runs");
        assert!(!holder.described().contains("gone"));
        // A child that has exited and been reaped: its id is free.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        holder.pid = child.id();
        assert!(holder.process_gone());
        assert!(holder.described().ends_with("; its process is gone: a run killed outright left the lock"));
        // On another host nothing can be told.
        holder.host = "elsewhere.example".into();
        assert!(!holder.process_gone());
    }
}
