//! The live mesh's lock, in two parts. This machine's ([`crate::machine_lock`]): a file a run
//! places under the user's state directory, keyed on how the mesh is reached and the node,
//! holding the holder; it keeps out a second run from this machine whatever the mesh can do.
//! The mesh's own: the `lock` and `unlock` commands of the configuration, whose contract is
//! below; it keeps out a run from any machine, and, where the control plane fences
//! ([`crate::fence`]), refuses every command of a run whose lock was broken under it. Neither
//! is ever broken by a run: a lock a killed run left stays until the operator breaks it
//! (`mesh-adopt unlock ID`).
//!
//! The commands' contract (docs/operating.md's "One run at a time" says it for an operator):
//!
//! - `lock` reads the holder, one JSON line, on its standard input. It exits 0 when it took
//!   the lock for that holder; [`HELD`] when another holds it, printing that holder's line
//!   (as its `lock` was given it) on its standard output; [`RELEASING`] when another holds it
//!   and its release is under way (printing its line likewise); anything else is an error.
//! - `unlock` is given the lock's id as its `{id}` word. It exits 0 when it released the lock
//!   held under that id; [`NOT_HELD`] when no lock is held; [`HELD`] when the lock is held
//!   under another id, printing that holder's line, and leaving it be; [`RELEASING`] when a
//!   changing command sent under that lock still runs: the release is recorded, the lock is
//!   let go once that command ends, and what runs is named on its standard output; anything
//!   else is an error.
//! - `lock_holder` prints the holder's line when the lock is held, nothing when it is free,
//!   and exits 0; anything else is an error.

use std::time::Duration;

use mesh_adopt_runtime::mesh::MeshError;
use mesh_adopt_runtime::mesh::lock::{LockHolder, LockScope, Locking, Unlocked};

use crate::machine_lock::{LockFile, MachineLocks, Placement};
use crate::templates::{Placeholder, Template};
use crate::{LiveMesh, first_lines};

/// The exit status of a `lock` or `unlock` command refused because another holds the lock
/// (`EX_TEMPFAIL`: try again later).
pub const HELD: i32 = 75;

/// The exit status of an `unlock` command when no lock is held.
pub const NOT_HELD: i32 = 76;

/// The exit status of an `unlock` whose lock still has a changing command running under it
/// (its release is recorded and made once that ends), and of a `lock` refused because the
/// lock's release is under way.
pub const RELEASING: i32 = 78;

/// The name of this machine's lock file for a mesh reached by `commands`, on `node`: the
/// first half is the mesh's (a check looks for any node's), the second the node's.
pub(crate) fn lock_file_name(commands: &[&[String]], node: &str) -> String {
    format!("{}-{}.lock", mesh_prefix(commands), &mesh_adopt_runtime::catalogue::sha256_hex(node.as_bytes())[..16])
}

/// The part of a lock file's name that says which mesh it is for: a digest of the commands
/// that reach it, so two configurations that reach one mesh the same way share a lock.
pub(crate) fn mesh_prefix(commands: &[&[String]]) -> String {
    let mut words = Vec::new();
    for command in commands {
        for word in command.iter() {
            words.extend_from_slice(word.as_bytes());
            words.push(0);
        }
        words.push(1);
    }
    mesh_adopt_runtime::catalogue::sha256_hex(&words)[..16].to_string()
}

/// A lock a live mesh of this program holds, with what releases it without the mesh: what
/// [`release_every_lock`] releases for a program about to exit without unwinding its runs.
struct HeldHere {
    id: String,
    machine: MachineLocks,
    unlock: Option<Vec<String>>,
}

/// Every lock this program's live meshes hold now.
static HELD_HERE: std::sync::Mutex<Vec<HeldHere>> = std::sync::Mutex::new(Vec::new());

fn held_here() -> std::sync::MutexGuard<'static, Vec<HeldHere>> {
    HELD_HERE.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long [`release_every_lock`] waits for each mesh's `unlock`: it runs as the program
/// ends on an interrupt its run did not answer in time, which must not wait long.
const RELEASE_AT_EXIT: Duration = Duration::from_secs(1);

/// Releases every lock this program's live meshes hold, for a program about to exit without
/// unwinding its runs (the command line ending itself on an interrupt its run did not get to
/// answer in time): each mesh's `unlock`, given a second, then this machine's lock once the
/// mesh's is released (or its release recorded). What is not released is left, for
/// `mesh-adopt unlock`: the ids of those, returned.
pub fn release_every_lock() -> Vec<String> {
    let mut left = Vec::new();
    for held in std::mem::take(&mut *held_here()) {
        let released = match &held.unlock {
            None => true,
            Some(argv) => unlock_now(argv),
        };
        match released {
            true => drop(held.machine.release(&held.id)),
            false => left.push(held.id),
        }
    }
    left
}

/// Runs an `unlock` at once, from the calling thread, for at most [`RELEASE_AT_EXIT`]:
/// whether the lock is no longer held under its id, or its release is recorded.
fn unlock_now(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else { return false };
    let started = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = started else { return false };
    let deadline = std::time::Instant::now() + RELEASE_AT_EXIT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return matches!(status.code(), Some(0) | Some(NOT_HELD) | Some(RELEASING)),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// The `unlock` command's words for the lock held under `id`.
fn unlock_argv(unlock: &Template, id: &str) -> Vec<String> {
    unlock.fill(|placeholder| match placeholder {
        Placeholder::Id => id.to_string(),
        other => other.to_string(),
    })
}

/// The error of a lock command that exited with a status its contract does not give.
fn exited(argv: &[String], code: Option<i32>, stderr: &str) -> MeshError {
    MeshError::Failed(format!(
        "`{}` exited with {}: {}",
        argv.join(" "),
        code.map_or("a signal".to_string(), |c| format!("status {c}")),
        first_lines(stderr)
    ))
}

/// The holder a lock command printed, or the error that it printed none.
fn printed_holder(argv: &[String], stdout: &str) -> Result<LockHolder, MeshError> {
    LockHolder::from_line(stdout)
        .map_err(|why| MeshError::Failed(format!("`{}` said another holds the lock, but {why}", argv.join(" "))))
}

/// What an `unlock` that answered [`RELEASING`] said still runs: its first line, as the
/// control plane wrote it, kept to a line's length.
fn still_running(stdout: &str) -> String {
    let line = stdout.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("a command sent under the lock");
    line.chars().take(200).collect()
}

impl LiveMesh {
    /// How long a lock command may take.
    fn lock_command_timeout(&self) -> Duration {
        self.config.lock_command_timeout
    }

    /// The commands that reach this mesh, as the configuration writes them: what this
    /// machine's lock is keyed on.
    fn reaching(&self) -> [&[String]; 4] {
        [&self.config.control, &self.config.carry, &self.config.carry_secret, &self.config.inspect]
            .map(Template::written)
    }

    /// This machine's lock first, then the mesh's own (when `lock` is configured); the first
    /// that another holds names that holder, a damaged lock file is named as such, and a
    /// machine lock placed for a mesh lock that was refused or failed is removed again. From
    /// the moment the mesh's lock is taken, every command carries its id ([`crate::fence`]).
    pub(crate) async fn take_lock(&self, holder: &LockHolder) -> Result<Locking, MeshError> {
        let machine = self.locks.as_ref().ok_or_else(|| {
            MeshError::Unavailable(
                "there is no place for this machine's lock: set XDG_STATE_HOME (an absolute path) or HOME".into(),
            )
        })?;
        let placed = match machine.place(&lock_file_name(&self.reaching(), &holder.node), holder) {
            Ok(Placement::Placed(placed)) => placed,
            Ok(Placement::Held(other)) => return Ok(Locking::Held(other, LockScope::Machine)),
            Ok(Placement::Damaged(damaged)) => return Ok(Locking::Damaged(damaged)),
            Err(error) => return Err(MeshError::Failed(chain(&error))),
        };
        let Some(command) = &self.config.lock else {
            placed.keep();
            held_here().push(HeldHere { id: holder.id.clone(), machine: machine.clone(), unlock: None });
            return Ok(Locking::Taken { scope: LockScope::Machine });
        };
        let argv = command.fill(|_| String::new());
        let done = self.run(&argv, Some(holder.to_line().as_bytes()), self.lock_command_timeout()).await?;
        match done.code {
            Some(0) => {
                placed.keep();
                self.fence.hold(&holder.id);
                held_here().push(HeldHere {
                    id: holder.id.clone(),
                    machine: machine.clone(),
                    unlock: self.config.unlock.as_ref().map(|command| unlock_argv(command, &holder.id)),
                });
                Ok(Locking::Taken { scope: self.mesh_lock() })
            }
            Some(HELD) => printed_holder(&argv, &done.stdout).map(|other| Locking::Held(other, self.mesh_lock())),
            Some(RELEASING) => {
                printed_holder(&argv, &done.stdout).map(|other| Locking::Releasing(other, self.mesh_lock()))
            }
            code => Err(exited(&argv, code, &done.stderr)),
        }
    }

    /// Releases the mesh's lock held under `id` (when `unlock` is configured), then this
    /// machine's; released when either was. A release the control plane defers until what
    /// still runs under the lock ends is recorded there, and this machine's lock goes: the
    /// mesh's own keeps every run out until then. A mesh that errs keeps this machine's lock
    /// too, so the next run is told the lock was left.
    pub(crate) async fn release_lock(&self, id: &str) -> Result<Unlocked, MeshError> {
        let mesh = match &self.config.unlock {
            Some(command) => {
                let argv = unlock_argv(command, id);
                let done = self.run(&argv, None, self.lock_command_timeout()).await?;
                match done.code {
                    Some(0) => Unlocked::Released,
                    Some(NOT_HELD) => Unlocked::NotHeld,
                    Some(HELD) => Unlocked::HeldByAnother(printed_holder(&argv, &done.stdout)?),
                    Some(RELEASING) => Unlocked::Releasing { running: still_running(&done.stdout) },
                    code => return Err(exited(&argv, code, &done.stderr)),
                }
            }
            None => Unlocked::NotHeld,
        };
        let machine = self.locks.as_ref().and_then(|locks| locks.release(id));
        held_here().retain(|held| held.id != id);
        self.fence.let_go(id);
        Ok(match (mesh, machine) {
            (Unlocked::HeldByAnother(other), _) => Unlocked::HeldByAnother(other),
            (Unlocked::Releasing { running }, _) => Unlocked::Releasing { running },
            (Unlocked::Released, _) | (_, Some(_)) => Unlocked::Released,
            (Unlocked::NotHeld, None) => Unlocked::NotHeld,
        })
    }

    /// The mesh's own lock, by what it keeps out: fenced or not, as the configuration declares.
    fn mesh_lock(&self) -> LockScope {
        if self.config.lock_fences { LockScope::Mesh } else { LockScope::Advisory }
    }

    /// Who holds the lock, and which: the mesh's holder when `lock_holder` is configured and
    /// says one, else this machine's holder of a lock on this mesh, whatever its node. A
    /// damaged lock file of this machine's is an error naming it and how it is cleared.
    pub(crate) async fn holder_of_lock(&self) -> Result<Option<(LockHolder, LockScope)>, MeshError> {
        if let Some(command) = &self.config.lock_holder {
            let argv = command.fill(|_| String::new());
            let done = self.run(&argv, None, self.lock_command_timeout()).await?;
            if done.code != Some(0) {
                return Err(exited(&argv, done.code, &done.stderr));
            }
            if !done.stdout.trim().is_empty() {
                return printed_holder(&argv, &done.stdout).map(|holder| Some((holder, self.mesh_lock())));
            }
        }
        let here = self.locks.as_ref().and_then(|locks| locks.held_under(&mesh_prefix(&self.reaching())));
        match here {
            None => Ok(None),
            Some((_, LockFile::Held(holder))) => Ok(Some((holder, LockScope::Machine))),
            Some((file, LockFile::Damaged(damage))) => {
                let damaged = mesh_adopt_runtime::mesh::lock::DamagedLock { file, damage };
                Err(MeshError::Failed(format!(
                    "this machine's lock `{}` is damaged: {}; {}",
                    damaged.file.display(),
                    damaged.damage,
                    damaged.remedy()
                )))
            }
        }
    }

    /// This machine's locks, where this mesh keeps them.
    pub fn machine_locks(&self) -> Option<&MachineLocks> {
        self.locks.as_ref()
    }

    /// Whether the configuration declares that its control plane fences: it refuses a changing
    /// command whose lock is not the one it holds, and lets a lock go only once nothing sent
    /// under it runs (`lock_fences`).
    pub fn fences(&self) -> bool {
        self.config.lock_fences
    }
}

/// An error and its causes, on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_keyed_on_how_the_mesh_is_reached_and_the_node() {
        let control = ["docker".to_string(), "exec".into()];
        let other = ["ssh".to_string(), "node".into()];
        let a = lock_file_name(&[&control[..]], "node-1");
        assert_eq!(a, lock_file_name(&[&control[..]], "node-1"));
        assert_ne!(a, lock_file_name(&[&control[..]], "node-2"));
        assert_ne!(a, lock_file_name(&[&other[..]], "node-1"));
        assert!(a.starts_with(&mesh_prefix(&[&control[..]])));
    }

    #[test]
    fn what_still_runs_is_the_control_planes_first_line_kept_short() {
        assert_eq!(still_running("\n  push node-1 (pid 42)\nmore\n"), "push node-1 (pid 42)");
        assert_eq!(still_running(""), "a command sent under the lock");
        assert_eq!(still_running(&"x".repeat(500)).len(), 200);
    }
}
