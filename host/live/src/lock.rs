//! The live mesh's lock, in two parts. This machine's: a file a run places under the user's
//! state directory, keyed on how the mesh is reached and the node, holding the holder; it
//! keeps out a second run from this machine whatever the mesh can do. The mesh's own: the
//! `lock` and `unlock` commands of the configuration, whose contract is below; it keeps out a
//! run from any machine. Neither is ever broken by a run: a lock a killed run left stays until
//! the operator breaks it (`mesh-adopt unlock ID`).
//!
//! The commands' contract (docs/operating.md's "One run at a time" says it for an operator):
//!
//! - `lock` reads the holder, one JSON line, on its standard input. It exits 0 when it took
//!   the lock for that holder; [`HELD`] when another holds it, printing that holder's line
//!   (as its `lock` was given it) on its standard output; anything else is an error.
//! - `unlock` is given the lock's id as its `{id}` word. It exits 0 when it released the lock
//!   held under that id; [`NOT_HELD`] when no lock is held; [`HELD`] when the lock is held
//!   under another id, printing that holder's line, and leaving it be; anything else is an
//!   error.
//! - `lock_holder` prints the holder's line when the lock is held, nothing when it is free,
//!   and exits 0; anything else is an error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mesh_adopt_runtime::mesh::MeshError;
use mesh_adopt_runtime::mesh::lock::{LockHolder, LockScope, Locking, Unlocked};

use crate::templates::{Placeholder, Template};
use crate::{LiveMesh, first_lines};

/// The exit status of a `lock` or `unlock` command refused because another holds the lock
/// (`EX_TEMPFAIL`: try again later).
pub const HELD: i32 = 75;

/// The exit status of an `unlock` command when no lock is held.
pub const NOT_HELD: i32 = 76;

/// The most of a lock file read: a holder is a few hundred bytes.
const LOCK_FILE_BYTES: u64 = 64 << 10;

/// This machine's locks: a file a held lock, in a directory of this user's.
#[derive(Debug, Clone)]
pub struct MachineLocks {
    dir: PathBuf,
}

/// A machine lock just placed, removed when dropped unless kept: a run dropped while it asks
/// the mesh for its own lock leaves no file behind.
pub(crate) struct Placed<'a> {
    locks: &'a MachineLocks,
    id: String,
    kept: bool,
}

impl Placed<'_> {
    /// Keeps the file: the run holds the lock from here on.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Placed<'_> {
    fn drop(&mut self) {
        if !self.kept {
            let _ = self.locks.release(&self.id);
        }
    }
}

impl MachineLocks {
    /// The locks kept in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> MachineLocks {
        MachineLocks { dir: dir.into() }
    }

    /// The locks kept with this user's state: `$XDG_STATE_HOME/mesh-adopt/locks`, else
    /// `~/.local/state/mesh-adopt/locks`; `None` when neither variable is set.
    pub fn default_dir() -> Option<PathBuf> {
        mesh_adopt_runtime::plan::PlanKey::default_dir().map(|dir| dir.join("locks"))
    }

    /// The directory the lock files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Places the lock file `name` for `holder`, or, when it is there already, says who holds
    /// it. The file is whole from the moment it is there: it is written aside and linked into
    /// place, which fails when another has placed it first.
    pub(crate) fn place(&self, name: &str, holder: &LockHolder) -> Result<Result<Placed<'_>, LockHolder>, String> {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| format!("this machine's lock directory `{}` could not be made: {e}", self.dir.display()))?;
        let path = self.dir.join(name);
        // Aside under the holder's own id, which no other holder has.
        let aside = self.dir.join(format!(".placing-{}", holder.id));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&aside)
            .and_then(|mut file| writeln!(file, "{}", holder.to_line()).and_then(|()| file.sync_all()));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&aside);
            return Err(format!("no lock could be written in `{}`: {e}", self.dir.display()));
        }
        let linked = std::fs::hard_link(&aside, &path);
        let _ = std::fs::remove_file(&aside);
        match linked {
            Ok(()) => Ok(Ok(Placed { locks: self, id: holder.id.clone(), kept: false })),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_holder(&path).map(Err),
            Err(e) => Err(format!("the lock `{}` could not be placed: {e}", path.display())),
        }
    }

    /// Every lock held on this machine, with its file, in the order of their files' names;
    /// a file that cannot be read as a lock is left out.
    pub fn held(&self) -> Vec<(PathBuf, LockHolder)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut held: Vec<(PathBuf, LockHolder)> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "lock"))
            .filter_map(|path| read_holder(&path).ok().map(|holder| (path, holder)))
            .collect();
        held.sort_by(|a, b| a.0.cmp(&b.0));
        held
    }

    /// Who holds a lock whose file name starts with `prefix`, if anyone does.
    pub(crate) fn held_under(&self, prefix: &str) -> Option<LockHolder> {
        self.held()
            .into_iter()
            .find(|(path, _)| path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
            .map(|(_, holder)| holder)
    }

    /// Removes the lock held under `id`, whatever mesh it is for; who held it, when one was.
    pub fn release(&self, id: &str) -> Option<LockHolder> {
        let (path, holder) = self.held().into_iter().find(|(_, holder)| holder.id == id)?;
        std::fs::remove_file(&path).ok().map(|()| holder)
    }
}

/// The holder a lock file names; an error names the file and what is wrong with it.
fn read_holder(path: &Path) -> Result<LockHolder, String> {
    let bytes = mesh_adopt_runtime::files::read_bounded(path, LOCK_FILE_BYTES)
        .map_err(|e| format!("the lock `{}` is held, and cannot be read: {e}", path.display()))?;
    LockHolder::from_line(&String::from_utf8_lossy(&bytes))
        .map_err(|why| format!("the lock `{}` is held, and names no holder: {why}", path.display()))
}

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
/// mesh's is released. What is not released is left, for `mesh-adopt unlock`.
pub fn release_every_lock() {
    for held in std::mem::take(&mut *held_here()) {
        let released = match &held.unlock {
            None => true,
            Some(argv) => unlock_now(argv),
        };
        if released {
            held.machine.release(&held.id);
        }
    }
}

/// Runs an `unlock` at once, from the calling thread, for at most [`RELEASE_AT_EXIT`]:
/// whether the lock is no longer held under its id.
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
            Ok(Some(status)) => return matches!(status.code(), Some(0) | Some(NOT_HELD)),
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
    /// that another holds names that holder, and a machine lock placed for a mesh lock that
    /// was refused or failed is removed again.
    pub(crate) async fn take_lock(&self, holder: &LockHolder) -> Result<Locking, MeshError> {
        let machine = self.locks.as_ref().ok_or_else(|| {
            MeshError::Unavailable("there is no place for this machine's lock: set XDG_STATE_HOME or HOME".into())
        })?;
        let placed = match machine.place(&lock_file_name(&self.reaching(), &holder.node), holder) {
            Ok(Ok(placed)) => placed,
            Ok(Err(other)) => return Ok(Locking::Held(other)),
            Err(why) => return Err(MeshError::Failed(why)),
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
                held_here().push(HeldHere {
                    id: holder.id.clone(),
                    machine: machine.clone(),
                    unlock: self.config.unlock.as_ref().map(|command| unlock_argv(command, &holder.id)),
                });
                Ok(Locking::Taken { scope: LockScope::Mesh })
            }
            Some(HELD) => printed_holder(&argv, &done.stdout).map(Locking::Held),
            code => Err(exited(&argv, code, &done.stderr)),
        }
    }

    /// Releases the mesh's lock held under `id` (when `unlock` is configured), then this
    /// machine's; released when either was. A mesh that errs keeps this machine's lock too,
    /// so the next run is told the lock was left.
    pub(crate) async fn release_lock(&self, id: &str) -> Result<Unlocked, MeshError> {
        let mesh = match &self.config.unlock {
            Some(command) => {
                let argv = unlock_argv(command, id);
                let done = self.run(&argv, None, self.lock_command_timeout()).await?;
                match done.code {
                    Some(0) => Unlocked::Released,
                    Some(NOT_HELD) => Unlocked::NotHeld,
                    Some(HELD) => Unlocked::HeldByAnother(printed_holder(&argv, &done.stdout)?),
                    code => return Err(exited(&argv, code, &done.stderr)),
                }
            }
            None => Unlocked::NotHeld,
        };
        let machine = self.locks.as_ref().and_then(|locks| locks.release(id));
        held_here().retain(|held| held.id != id);
        Ok(match (mesh, machine) {
            (Unlocked::HeldByAnother(other), _) => Unlocked::HeldByAnother(other),
            (Unlocked::Released, _) | (_, Some(_)) => Unlocked::Released,
            (Unlocked::NotHeld, None) => Unlocked::NotHeld,
        })
    }

    /// Who holds the lock: the mesh's holder when `lock_holder` is configured and says one,
    /// else this machine's holder of a lock on this mesh, whatever its node.
    pub(crate) async fn holder_of_lock(&self) -> Result<Option<LockHolder>, MeshError> {
        if let Some(command) = &self.config.lock_holder {
            let argv = command.fill(|_| String::new());
            let done = self.run(&argv, None, self.lock_command_timeout()).await?;
            if done.code != Some(0) {
                return Err(exited(&argv, done.code, &done.stderr));
            }
            if !done.stdout.trim().is_empty() {
                return printed_holder(&argv, &done.stdout).map(Some);
            }
        }
        Ok(self.locks.as_ref().and_then(|locks| locks.held_under(&mesh_prefix(&self.reaching()))))
    }

    /// This machine's locks, where this mesh keeps them.
    pub fn machine_locks(&self) -> Option<&MachineLocks> {
        self.locks.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of this test's own, emptied first.
    fn test_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mesh-adopt-live-lock-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn holder(pid: u32) -> LockHolder {
        LockHolder { pid, ..LockHolder::this_process("mesh-adopt run --mesh live", "node-1") }
    }

    #[test]
    fn a_second_lock_is_refused_naming_the_first_and_released_by_its_id_only() {
        let locks = MachineLocks::in_dir(test_dir("second").join("locks"));
        let (first, second) = (holder(1), holder(2));
        locks.place("mesh-node.lock", &first).unwrap().unwrap().keep();
        let Ok(Err(found)) = locks.place("mesh-node.lock", &second) else { panic!("a second lock was placed") };
        assert_eq!(found, first);
        assert_eq!(locks.held_under("mesh-").map(|h| h.id), Some(first.id.clone()));
        assert_eq!(locks.release(&second.id), None, "another's id releases nothing");
        assert_eq!(locks.release(&first.id), Some(first));
        assert!(locks.held().is_empty());
        // Free again: the second run takes it. Nothing placed aside is left behind.
        locks.place("mesh-node.lock", &second).unwrap().unwrap().keep();
        let names: Vec<String> = std::fs::read_dir(locks.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["mesh-node.lock"]);
    }

    #[test]
    fn a_lock_placed_and_not_kept_is_removed() {
        let locks = MachineLocks::in_dir(test_dir("not-kept"));
        drop(locks.place("m-n.lock", &holder(1)).unwrap().unwrap());
        assert!(locks.held().is_empty());
    }

    #[test]
    fn a_lock_file_that_names_no_holder_is_an_error_naming_the_file() {
        let dir = test_dir("garbled");
        std::fs::create_dir_all(&dir).unwrap();
        let locks = MachineLocks::in_dir(&dir);
        std::fs::write(dir.join("m-n.lock"), "garbage\n").unwrap();
        let Err(why) = locks.place("m-n.lock", &holder(1)) else { panic!("a garbled lock was taken for free") };
        assert!(why.contains("m-n.lock") && why.contains("names no holder"), "{why}");
    }

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
}
