//! A mesh's lock: one run changes a mesh at a time. A run takes the lock before preflight and
//! holds it to its end; a second run is refused (or waits) and is told who holds it. A lock
//! left by a process that died is never broken by a run: it is shown as left, and broken by
//! the operator (`mesh-adopt unlock ID`, [`crate::mesh::Mesh::unlock`]). A mesh whose control
//! plane fences refuses every command of a run whose lock was broken under it
//! ([`LockBroken`]); a run lets its lock go only once the control plane runs nothing it sent
//! ([`Unlocked::Releasing`]).
//!
//! These are the lock's words (who holds it, what it keeps out, what asking for it and
//! releasing it came to), kept in the model below the event schema that records them; a mesh
//! ([`crate::mesh::Mesh::lock`]) takes and releases it, and `mesh::lock` names this module for
//! whoever embeds the runtime.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

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
    /// The machine the holder runs on: a stable id of this program's own, made from the
    /// system's machine id ([`this_machine`]), so two machines of one host name are told apart;
    /// empty when the system has none, or in a holder written before holders carried it.
    #[serde(default)]
    pub machine: String,
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
    /// `command` is written wherever the holder is (this machine's lock file, the mesh's lock,
    /// every other operator's `check`): the caller passes it with every secret taken out.
    pub fn this_process(command: &str, node: &str) -> LockHolder {
        let mut id = [0u8; 8];
        rand::fill(&mut id);
        LockHolder {
            id: id.iter().map(|b| format!("{b:02x}")).collect(),
            host: this_host(),
            machine: this_machine(),
            pid: std::process::id(),
            command: command.to_string(),
            since: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            node: node.to_string(),
        }
    }

    /// Whether the holder's process is known to be gone: it ran on this machine and no
    /// process has its id any more, or the one that has it now started after the lock was
    /// taken (its id was given again, to another process, after a reboot or once ids wrapped
    /// round). A holder on another machine cannot be told from here (`false`).
    pub fn process_gone(&self) -> bool {
        self.on_this_machine() && !holder_runs(self.pid, &self.since)
    }

    /// Whether the holder ran on this machine: the same host name and, where both holders
    /// carry one, the same machine id (a host name alone is shared by many a fresh machine,
    /// `localhost` among them).
    pub fn on_this_machine(&self) -> bool {
        let here = this_machine();
        self.host == this_host() && (self.machine.is_empty() || here.is_empty() || self.machine == here)
    }

    /// The holder in one line for a person: who, since when, and the lock's id, with a note
    /// when its process is gone.
    pub fn described(&self) -> String {
        let gone = if self.process_gone() { "; its process is gone, and left the lock behind" } else { "" };
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
    /// An id that is not a lock id (see [`is_lock_id`]) is refused: `mesh-adopt unlock` could
    /// never name it.
    pub fn from_line(text: &str) -> Result<LockHolder, HolderLineError> {
        let line = text.lines().find(|l| !l.trim().is_empty()).ok_or(HolderLineError::None)?;
        let holder: LockHolder = serde_json::from_str(line)
            .map_err(|e| HolderLineError::NotAHolder { line: line.to_string(), why: e.to_string() })?;
        if !is_lock_id(&holder.id) {
            return Err(HolderLineError::NotALockId { line: line.to_string(), id: holder.id });
        }
        Ok(holder)
    }
}

/// Why a line is not a lock's holder, as a `lock` command must print one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HolderLineError {
    /// Nothing but blank lines.
    #[error("it printed no holder")]
    None,
    /// A line that is not a holder's JSON.
    #[error("`{line}` is not a lock holder: {why}")]
    NotAHolder {
        /// The line.
        line: String,
        /// What the JSON reader said.
        why: String,
    },
    /// A holder whose id no `mesh-adopt unlock` could name.
    #[error(
        "`{line}` is not a lock holder: its id `{id}` is not a lock id (1 to 64 hexadecimal digits), so the lock \
         could not be broken by it"
    )]
    NotALockId {
        /// The line.
        line: String,
        /// The id it gave.
        id: String,
    },
}

/// Whether `id` is a lock id: 1 to 64 hexadecimal digits, as [`LockHolder::this_process`]
/// makes them and `mesh-adopt unlock ID` takes them.
pub fn is_lock_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What asking for a mesh's lock came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locking {
    /// The lock is this run's until it is released; `scope` says what it keeps out.
    Taken {
        /// Which lock guards the mesh.
        scope: LockScope,
    },
    /// Another holds the lock (which lock, by what it keeps out): the run changes nothing.
    Held(LockHolder, LockScope),
    /// Another holds the lock and has asked for its release, which the control plane makes
    /// once a command sent under it ends: the lock is free soon, whether or not its holder's
    /// process still runs, so a run that waits for it goes on waiting.
    Releasing(LockHolder, LockScope),
    /// This machine's lock file is damaged: it names no holder, so no run can tell who holds
    /// the lock, and none takes it until the operator clears the file.
    Damaged(DamagedLock),
}

/// A lock file of this machine's that names no holder: what a power loss or a full disk
/// leaves, or something else put in its place. Never read through a link, never quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedLock {
    /// The file.
    pub file: std::path::PathBuf,
    /// What is wrong with it.
    pub damage: LockDamage,
}

/// How a lock file is damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockDamage {
    /// It holds nothing.
    Empty,
    /// Its one line does not end: it was cut short while it was written.
    Truncated {
        /// How many bytes it holds.
        bytes: u64,
    },
    /// It holds a line that is not a lock's holder.
    NotAHolder {
        /// How many bytes it holds.
        bytes: u64,
    },
    /// It is not a regular file: a directory, a FIFO, a link (followed by nothing here).
    NotAFile {
        /// What it is, in words: `a directory`, `a FIFO`, `a symbolic link`.
        kind: &'static str,
    },
    /// It could not be opened or read.
    Unreadable {
        /// What the system said.
        why: String,
    },
}

/// `empty`, `cut short (12 bytes, no line end)`: what is wrong, without a byte of what it holds.
impl std::fmt::Display for LockDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockDamage::Empty => f.write_str("it is empty"),
            LockDamage::Truncated { bytes } => write!(f, "it was cut short ({bytes} bytes, no line end)"),
            LockDamage::NotAHolder { bytes } => write!(f, "its {bytes} bytes name no lock holder"),
            LockDamage::NotAFile { kind } => write!(f, "it is {kind}, not a regular file"),
            LockDamage::Unreadable { why } => write!(f, "it cannot be read ({why})"),
        }
    }
}

impl DamagedLock {
    /// What clears it: `mesh-adopt unlock --damaged FILE`.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::ClearDamagedLock { file: self.file.clone() }
    }
}

/// This run's lock, found broken by the mesh's own check: a control plane that fences refused
/// a command the run sent under it (its lock is no longer the mesh's), so the run sends
/// nothing more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockBroken {
    /// This run's lock id, which the mesh no longer holds.
    pub id: String,
    /// The command refused, as the control plane was given it.
    pub refused: String,
    /// Who holds the mesh's lock now, where the control plane said.
    pub by: Option<LockHolder>,
}

/// What a call of the run is denied with once its lock is found broken.
impl std::fmt::Display for LockBroken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "this run's lock `{}` on the mesh was broken under it (the control plane refused `{}`): the run sends \
             nothing more",
            self.id, self.refused
        )
    }
}

impl LockBroken {
    /// What the operator does: look at the mesh, which another run or operator now holds.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::InspectMesh {
            what: "this run's lock was broken under it and its commands were refused from then on: see what the \
                   run that holds the mesh's lock now did, then run again"
                .into(),
        }
    }
}

/// What the lock a run took keeps out, so a run on a mesh that cannot be locked says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockScope {
    /// The mesh's own lock, fenced: a run from any machine is kept out, and the control plane
    /// refuses every command of a run whose lock was broken under it (a live mesh takes this
    /// machine's lock too).
    Mesh,
    /// The mesh's own lock, not fenced: a run from any machine is kept out, but a run whose
    /// lock is broken under it (another host's `mesh-adopt unlock`) goes on unaware, since the
    /// control plane does not check the lock commands are sent under.
    Advisory,
    /// This machine's lock only: the mesh has no lock of its own (a live mesh without a `lock`
    /// command), so a run from another machine is not kept out.
    Machine,
    /// A model mesh's own lock (the simulator's, a replay's): it keeps out runs on that model
    /// in this process; no real mesh is there to keep anything out of.
    Simulated,
    /// No lock at all: the mesh implements none, and nothing keeps another run out.
    None,
}

impl LockScope {
    /// How the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            LockScope::Mesh => "mesh",
            LockScope::Advisory => "advisory",
            LockScope::Machine => "machine",
            LockScope::Simulated => "simulated",
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
    /// It is held under that id, and its release is recorded, but the control plane still
    /// runs a command sent under it (a push its worker finishes once begun): the control plane
    /// releases the lock once that ends. Asked again, `unlock` says `Releasing` until then and
    /// `Released` or `NotHeld` after.
    Releasing {
        /// What still runs, as the control plane names it (`push node-1`).
        running: String,
    },
}

/// A lock a run could not let go at its end: what the next run is refused by until it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockLeft {
    /// The lock's id.
    pub id: String,
    /// Why it is left.
    pub why: LeftBecause,
}

/// Why a run's lock is left at its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftBecause {
    /// The mesh's `unlock` failed or did not answer in time.
    ReleaseFailed {
        /// What the mesh answered, in words.
        error: String,
    },
    /// The control plane still ran a command this run sent, past the run's bound (`--wait`):
    /// its release is recorded, and the control plane lets the lock go once that ends.
    StillRunning {
        /// What still runs, as the control plane named it.
        running: String,
        /// How long the run waited for it.
        waited: Duration,
    },
}

impl LockLeft {
    /// What frees the mesh: `mesh-adopt unlock ID` (the run is gone by then, so no `--force`).
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::Unlock { id: self.id.clone(), force: false }
    }
}

/// This host's name, as `hostname` prints it when this process first asked: every lock event
/// of every run names it, and a holder is told to be on this host by it.
pub fn this_host() -> String {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(read_host_name).clone()
}

/// This machine's id as a lock holder carries it: the system's machine id (`/etc/machine-id`,
/// else `/var/lib/dbus/machine-id`), never itself, since the system asks that it be kept to
/// this machine, but a keyed digest of it only this program makes, 32 hex digits; empty when
/// the system has none. Read once: it does not change while a process runs.
pub fn this_machine() -> String {
    static MACHINE: OnceLock<String> = OnceLock::new();
    MACHINE.get_or_init(read_machine_id).clone()
}

/// The system's machine id, digested as [`this_machine`] says.
fn read_machine_id() -> String {
    use hmac::Mac as _;
    let Some(id) = ["/etc/machine-id", "/var/lib/dbus/machine-id"].iter().find_map(|path| {
        let text = std::fs::read_to_string(path).ok()?;
        let id = text.trim().to_string();
        (!id.is_empty()).then_some(id)
    }) else {
        return String::new();
    };
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(id.as_bytes()).expect("any key fits an HMAC");
    mac.update(b"mesh-adopt lock holder");
    mac.finalize().into_bytes()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// This host's name, read from the system.
fn read_host_name() -> String {
    let mut name = [0u8; 256];
    // SAFETY: the buffer is valid for its length, and gethostname writes at most that much.
    let done = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    if done != 0 {
        return "localhost".to_string();
    }
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..end]).into_owned()
}

/// How much later than the lock's `since` its holder's process may seem to have started:
/// `since` is cut to the second, and the boot time a start is reckoned from is too.
const SINCE_SLACK: Duration = Duration::from_secs(2);

/// Whether the holder of a lock taken at `since` still runs: a process with its id runs, and,
/// where this system says when a process started, it started before the lock was taken. A
/// `since` that cannot be read, or a start that cannot be told, leaves the process the holder.
fn holder_runs(pid: u32, since: &str) -> bool {
    if !process_runs(pid) {
        return false;
    }
    match (process_started(pid), humantime::parse_rfc3339_weak(since)) {
        (Some(started), Ok(since)) => started <= since + SINCE_SLACK,
        _ => true,
    }
}

/// When the process `pid` started: on Linux, its start in clock ticks after boot (field 22 of
/// `/proc/PID/stat`) from the boot time (`btime` in `/proc/stat`); elsewhere, unknown.
pub fn process_started(pid: u32) -> Option<SystemTime> {
    // Each run's lock events ask after this process: when it started does not change. The
    // pid is kept with it, so a forked child does not take its parent's start for its own.
    static THIS_PROCESS: OnceLock<(u32, Option<SystemTime>)> = OnceLock::new();
    match THIS_PROCESS.get_or_init(|| (std::process::id(), read_process_start(std::process::id()))) {
        (this, started) if *this == pid => *started,
        _ => read_process_start(pid),
    }
}

/// When the process `pid` started, read from `/proc` (see [`process_started`]).
#[cfg(target_os = "linux")]
fn read_process_start(pid: u32) -> Option<SystemTime> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command's name (field 2) is in parentheses and may hold both and spaces: the fields
    // after it follow its last `)`, from field 3 on.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = after_name.split_whitespace().nth(22 - 3)?.parse().ok()?;
    let (booted, hz) = boot_time_and_tick()?;
    let after_boot = Duration::from_secs(ticks / hz) + Duration::from_nanos((ticks % hz) * 1_000_000_000 / hz);
    booted.checked_add(after_boot)
}

/// When this system booted (`btime` in `/proc/stat`) and how many clock ticks make a second:
/// both are fixed until the next boot, so they are read once.
#[cfg(target_os = "linux")]
fn boot_time_and_tick() -> Option<(SystemTime, u64)> {
    static BOOT: OnceLock<Option<(SystemTime, u64)>> = OnceLock::new();
    *BOOT.get_or_init(|| {
        let booted: u64 = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|line| line.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        // SAFETY: sysconf reads a constant of the system and has no other effect.
        let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok().filter(|hz| *hz > 0)?;
        Some((SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(booted))?, hz))
    })
}

/// When the process `pid` started: unknown on this system.
#[cfg(not(target_os = "linux"))]
fn read_process_start(_pid: u32) -> Option<SystemTime> {
    None
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
        assert_eq!(LockHolder::from_line(""), Err(HolderLineError::None));
        assert!(matches!(LockHolder::from_line("held by someone"), Err(HolderLineError::NotAHolder { .. })));
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
        assert!(holder.described().ends_with("; its process is gone, and left the lock behind"));
        // On another host nothing can be told.
        holder.host = "elsewhere.example".into();
        assert!(!holder.process_gone());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_started_after_the_lock_was_taken_is_not_its_holder() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let started = process_started(child.id()).expect("Linux says when a process started");
        let now = SystemTime::now();
        assert!(started <= now + Duration::from_secs(1) && started + Duration::from_secs(60) > now, "{started:?}");
        let mut holder = LockHolder { pid: child.id(), ..LockHolder::this_process("mesh-adopt run", "node-1") };
        assert!(!holder.process_gone(), "taken just now, by a process started just before");
        holder.since = "2020-01-01T00:00:00Z".into();
        assert!(holder.process_gone(), "the process with its id started years after the lock was taken");
        holder.since = "a while ago".into();
        assert!(!holder.process_gone(), "a since that cannot be read leaves the process the holder");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_holder_whose_id_is_no_lock_id_is_refused() {
        let mut holder = LockHolder::this_process("mesh-adopt run", "node-1");
        holder.id = "../../etc".into();
        let why = LockHolder::from_line(&holder.to_line()).unwrap_err();
        assert!(matches!(&why, HolderLineError::NotALockId { id, .. } if id == "../../etc"), "{why}");
        assert!(why.to_string().contains("its id `../../etc` is not a lock id"), "{why}");

        assert!(is_lock_id("5ca1ab1e00000000") && !is_lock_id("") && !is_lock_id(&"a".repeat(65)));
    }
}
