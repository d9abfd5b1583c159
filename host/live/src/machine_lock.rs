//! This machine's lock files: one a held lock, in a directory of this user's, keyed on how a
//! mesh is reached and the node, each holding its holder's line. A file is placed whole (written
//! aside, linked into place) and read without ever following a link or waiting on what is not
//! a regular file; one that names no holder (empty, cut short, another line, a directory, a
//! FIFO, a link) is damaged, named as such without a byte of what it holds, and cleared only
//! by the operator (`mesh-adopt unlock --damaged FILE`).

use std::io::{Read as _, Write as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use mesh_adopt_runtime::mesh::lock::{DamagedLock, LockDamage, LockHolder};

/// The most of a lock file read: a holder is a few hundred bytes.
const LOCK_FILE_BYTES: u64 = 64 << 10;

/// The ending of every lock file's name.
const LOCK_EXTENSION: &str = "lock";

/// This machine's locks: a file a held lock, in a directory of this user's.
#[derive(Debug, Clone)]
pub struct MachineLocks {
    dir: PathBuf,
}

/// What a lock file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockFile {
    /// A holder's line: the lock is held.
    Held(LockHolder),
    /// Nothing that names a holder.
    Damaged(LockDamage),
}

/// What placing a lock file came to.
pub(crate) enum Placement<'a> {
    /// Placed: the lock is this holder's, removed again unless kept.
    Placed(Placed<'a>),
    /// Another's file is there, naming its holder.
    Held(LockHolder),
    /// A file is there that names no holder.
    Damaged(DamagedLock),
}

/// Why a lock file could not be placed or cleared: the directory or the file, named, with
/// what the system said.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MachineLockError {
    /// The directory could not be made (or is not one).
    #[error("this machine's lock directory `{}` could not be made", dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// No file could be written in the directory.
    #[error("no lock could be written in this machine's lock directory `{}`", dir.display())]
    Unwritable {
        /// The directory.
        dir: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The file written aside could not be linked into place.
    #[error("the lock `{}` could not be placed", file.display())]
    NotPlaced {
        /// The lock file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `unlock --damaged` named a file that is not one of this directory's lock files.
    #[error("`{}` is not a lock file of this machine's: they are the `*.lock` files in `{}`", file.display(), dir.display())]
    NotALockFile {
        /// The file named.
        file: PathBuf,
        /// This machine's lock directory.
        dir: PathBuf,
    },
    /// `unlock --damaged` named a lock file that is not damaged: it names its holder.
    #[error("the lock `{}` is not damaged: it is held by {}, and is broken by its id", file.display(), holder.described())]
    NotDamaged {
        /// The lock file.
        file: PathBuf,
        /// Who it names.
        holder: Box<LockHolder>,
    },
    /// `unlock --damaged` named a file that is not there.
    #[error("there is no lock `{}`: nothing to clear", file.display())]
    Missing {
        /// The file named.
        file: PathBuf,
    },
    /// The damaged file could not be removed.
    #[error("the damaged lock `{}` could not be removed", file.display())]
    NotRemoved {
        /// The lock file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl MachineLockError {
    /// What mends it: the directory or file mended, the lock broken by its holder's id, or
    /// `--damaged` given one of this machine's lock files.
    pub fn remedy(&self) -> mesh_adopt_runtime::Remedy {
        use mesh_adopt_runtime::Remedy;
        match self {
            MachineLockError::Directory { dir: path, .. }
            | MachineLockError::Unwritable { dir: path, .. }
            | MachineLockError::NotPlaced { file: path, .. }
            | MachineLockError::NotRemoved { file: path, .. } => Remedy::EditFile { path: path.clone(), at: None },
            MachineLockError::NotDamaged { holder, .. } => Remedy::Unlock { id: holder.id.clone(), force: false },
            MachineLockError::NotALockFile { dir, .. } => damaged_in(dir),
            MachineLockError::Missing { file } => damaged_in(file.parent().unwrap_or(file)),
        }
    }
}

/// `--damaged` given a damaged lock file of the directory `dir`.
fn damaged_in(dir: &Path) -> mesh_adopt_runtime::Remedy {
    mesh_adopt_runtime::Remedy::SetOption {
        option: "--damaged".into(),
        must: format!("a damaged `*.lock` file there is in `{}`", dir.display()),
    }
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

    /// The locks kept with this user's state: `$XDG_STATE_HOME/mesh-adopt/locks` when that is
    /// an absolute path, else `~/.local/state/mesh-adopt/locks`; `None` when neither is there.
    pub fn default_dir() -> Option<PathBuf> {
        mesh_adopt_runtime::plan::PlanKey::default_dir().map(|dir| dir.join("locks"))
    }

    /// The directory the lock files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Places the lock file `name` for `holder`, or, when one is there already, says who holds
    /// it, or that it is damaged. The file is whole from the moment it is there: it is written
    /// aside and linked into place, which fails when another has placed it first.
    pub(crate) fn place(&self, name: &str, holder: &LockHolder) -> Result<Placement<'_>, MachineLockError> {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|source| MachineLockError::Directory { dir: self.dir.clone(), source })?;
        let path = self.dir.join(name);
        // Aside under the holder's own id, which no other holder has.
        let aside = self.dir.join(format!(".placing-{}", holder.id));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&aside)
            .and_then(|mut file| writeln!(file, "{}", holder.to_line()).and_then(|()| file.sync_all()));
        if let Err(source) = written {
            let _ = std::fs::remove_file(&aside);
            return Err(MachineLockError::Unwritable { dir: self.dir.clone(), source });
        }
        let linked = std::fs::hard_link(&aside, &path);
        let _ = std::fs::remove_file(&aside);
        match linked {
            Ok(()) => Ok(Placement::Placed(Placed { locks: self, id: holder.id.clone(), kept: false })),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(match read_lock_file(&path) {
                LockFile::Held(other) => Placement::Held(other),
                LockFile::Damaged(damage) => Placement::Damaged(DamagedLock { file: path, damage }),
            }),
            Err(source) => Err(MachineLockError::NotPlaced { file: path, source }),
        }
    }

    /// Every lock file on this machine, with what it holds, in the order of their names.
    pub fn held(&self) -> Vec<(PathBuf, LockFile)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut held: Vec<(PathBuf, LockFile)> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == LOCK_EXTENSION))
            .map(|path| {
                let file = read_lock_file(&path);
                (path, file)
            })
            .collect();
        held.sort_by(|a, b| a.0.cmp(&b.0));
        held
    }

    /// What the first lock file whose name starts with `prefix` holds, if there is one.
    pub(crate) fn held_under(&self, prefix: &str) -> Option<(PathBuf, LockFile)> {
        self.held()
            .into_iter()
            .find(|(path, _)| path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
    }

    /// Removes the lock held under `id`, whatever mesh it is for; who held it, when one was.
    pub fn release(&self, id: &str) -> Option<LockHolder> {
        let (path, holder) = self.held().into_iter().find_map(|(path, file)| match file {
            LockFile::Held(holder) if holder.id == id => Some((path, holder)),
            _ => None,
        })?;
        std::fs::remove_file(&path).ok().map(|()| holder)
    }

    /// Clears the damaged lock file `file`, one of this directory's (as a run that found it
    /// named it): what it was. A lock file that names its holder is not cleared here (it is
    /// broken by its id), nor is anything outside this directory.
    pub fn clear_damaged(&self, file: &Path) -> Result<LockDamage, MachineLockError> {
        let not_ours = || MachineLockError::NotALockFile { file: file.to_path_buf(), dir: self.dir.clone() };
        let name = file.file_name().ok_or_else(not_ours)?;
        let ours = match file.parent() {
            Some(parent) if parent.as_os_str().is_empty() => true,
            Some(parent) => same_dir(parent, &self.dir),
            None => false,
        };
        if !ours || Path::new(name).extension().is_none_or(|e| e != LOCK_EXTENSION) {
            return Err(not_ours());
        }
        let path = self.dir.join(name);
        let kind = match path.symlink_metadata() {
            Ok(meta) => meta.file_type(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(MachineLockError::Missing { file: path }),
            Err(_) => return Err(not_ours()),
        };
        let damage = match read_lock_file(&path) {
            LockFile::Held(holder) => {
                return Err(MachineLockError::NotDamaged { file: path, holder: Box::new(holder) });
            }
            LockFile::Damaged(damage) => damage,
        };
        // A link is removed itself, never what it points at; a directory only when empty.
        let removed = if kind.is_dir() { std::fs::remove_dir(&path) } else { std::fs::remove_file(&path) };
        removed.map_err(|source| MachineLockError::NotRemoved { file: path, source })?;
        Ok(damage)
    }
}

/// Whether `a` and `b` name one directory (each as it resolves, where it can).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What the lock file at `path` holds, read without following a link or waiting on anything
/// that is not a regular file; what is wrong with it, never what it holds, when it names no
/// holder.
pub fn read_lock_file(path: &Path) -> LockFile {
    let damaged = LockFile::Damaged;
    let kind = match path.symlink_metadata() {
        Ok(meta) => meta.file_type(),
        Err(e) => return damaged(LockDamage::Unreadable { why: e.to_string() }),
    };
    if !kind.is_file() {
        return damaged(LockDamage::NotAFile { kind: kind_words(kind) });
    }
    // Looked at, then opened: what is opened is checked again, so nothing put in its place
    // between the two is read or followed.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|file| file.metadata().map(|meta| (file, meta)));
    let (file, meta) = match opened {
        Ok(opened) => opened,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return damaged(LockDamage::NotAFile { kind: "a symbolic link" });
        }
        Err(e) => return damaged(LockDamage::Unreadable { why: e.to_string() }),
    };
    if !meta.file_type().is_file() {
        return damaged(LockDamage::NotAFile { kind: kind_words(meta.file_type()) });
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.take(LOCK_FILE_BYTES).read_to_end(&mut bytes) {
        return damaged(LockDamage::Unreadable { why: e.to_string() });
    }
    let size = bytes.len() as u64;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return damaged(LockDamage::Empty);
    }
    // A holder is written as one line and its end: a file without one was cut short.
    if !bytes.ends_with(b"\n") {
        return damaged(LockDamage::Truncated { bytes: size });
    }
    match std::str::from_utf8(&bytes).ok().and_then(|text| LockHolder::from_line(text).ok()) {
        Some(holder) => LockFile::Held(holder),
        None => damaged(LockDamage::NotAHolder { bytes: size }),
    }
}

/// A file that is not a regular one, in words.
fn kind_words(kind: std::fs::FileType) -> &'static str {
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of this test's own, emptied first.
    fn test_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mesh-adopt-machine-lock-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn holder(pid: u32) -> LockHolder {
        LockHolder { pid, ..LockHolder::this_process("mesh-adopt run --mesh live", "node-1") }
    }

    fn placed(placement: Placement<'_>) -> Placed<'_> {
        match placement {
            Placement::Placed(placed) => placed,
            _ => panic!("the lock was not placed"),
        }
    }

    #[test]
    fn a_second_lock_is_refused_naming_the_first_and_released_by_its_id_only() {
        let locks = MachineLocks::in_dir(test_dir("second").join("locks"));
        let (first, second) = (holder(1), holder(2));
        placed(locks.place("mesh-node.lock", &first).unwrap()).keep();
        let Ok(Placement::Held(found)) = locks.place("mesh-node.lock", &second) else {
            panic!("a second lock was placed")
        };
        assert_eq!(found, first);
        assert_eq!(locks.held_under("mesh-").map(|(_, file)| file), Some(LockFile::Held(first.clone())));
        assert_eq!(locks.release(&second.id), None, "another's id releases nothing");
        assert_eq!(locks.release(&first.id), Some(first));
        assert!(locks.held().is_empty());
        // Free again: the second run takes it. Nothing placed aside is left behind.
        placed(locks.place("mesh-node.lock", &second).unwrap()).keep();
        let names: Vec<String> = std::fs::read_dir(locks.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["mesh-node.lock"]);
    }

    #[test]
    fn a_lock_placed_and_not_kept_is_removed() {
        let locks = MachineLocks::in_dir(test_dir("not-kept"));
        drop(placed(locks.place("m-n.lock", &holder(1)).unwrap()));
        assert!(locks.held().is_empty());
    }

    #[test]
    fn a_lock_file_that_names_no_holder_is_damaged_and_named_without_its_bytes() {
        let dir = test_dir("damaged");
        std::fs::create_dir_all(&dir).unwrap();
        let locks = MachineLocks::in_dir(&dir);
        let line = holder(1).to_line();
        let target = dir.join("elsewhere");
        std::fs::write(&target, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        type Make = Box<dyn Fn(&Path)>;
        let cases: [(&str, Make, LockDamage); 7] = [
            ("empty", Box::new(|p| std::fs::write(p, "").unwrap()), LockDamage::Empty),
            ("blank", Box::new(|p| std::fs::write(p, "\n\n").unwrap()), LockDamage::Empty),
            ("cut", Box::new(move |p| std::fs::write(p, &line[..20]).unwrap()), LockDamage::Truncated { bytes: 20 }),
            ("junk", Box::new(|p| std::fs::write(p, "garbage\n").unwrap()), LockDamage::NotAHolder { bytes: 8 }),
            ("dir", Box::new(|p| std::fs::create_dir(p).unwrap()), LockDamage::NotAFile { kind: "a directory" }),
            (
                "link",
                Box::new({
                    let target = target.clone();
                    move |p| std::os::unix::fs::symlink(&target, p).unwrap()
                }),
                LockDamage::NotAFile { kind: "a symbolic link" },
            ),
            (
                "dangling",
                Box::new(|p| std::os::unix::fs::symlink("/nowhere/at/all", p).unwrap()),
                LockDamage::NotAFile { kind: "a symbolic link" },
            ),
        ];
        for (name, make, damage) in cases {
            let file = format!("{name}.lock");
            make(&dir.join(&file));
            let Ok(Placement::Damaged(found)) = locks.place(&file, &holder(2)) else {
                panic!("{name}: a damaged lock was taken for free or read as held")
            };
            assert_eq!(found, DamagedLock { file: dir.join(&file), damage: damage.clone() }, "{name}");
            assert!(!found.damage.to_string().contains("root:"), "{name}: {}", found.damage);
            assert_eq!(locks.clear_damaged(&dir.join(&file)).unwrap(), damage, "{name}");
            assert!(dir.join(&file).symlink_metadata().is_err(), "{name}: not cleared");
        }
        assert!(target.exists(), "clearing a link removed what it points at");
    }

    #[test]
    fn a_fifo_in_a_locks_place_is_damaged_and_read_without_waiting() {
        let dir = test_dir("fifo");
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("m-n.lock");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        assert_eq!(read_lock_file(&fifo), LockFile::Damaged(LockDamage::NotAFile { kind: "a FIFO" }));
        MachineLocks::in_dir(&dir).clear_damaged(&fifo).unwrap();
    }

    #[test]
    fn only_a_damaged_lock_file_of_this_directory_is_cleared() {
        let dir = test_dir("clear-only");
        std::fs::create_dir_all(&dir).unwrap();
        let locks = MachineLocks::in_dir(&dir);
        placed(locks.place("m-n.lock", &holder(1)).unwrap()).keep();
        let held = locks.clear_damaged(&dir.join("m-n.lock")).unwrap_err();
        assert!(matches!(held, MachineLockError::NotDamaged { .. }), "{held}");
        assert!(matches!(held.remedy(), mesh_adopt_runtime::Remedy::Unlock { force: false, .. }), "{held}");
        let outside = test_dir("clear-outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("x.lock"), "").unwrap();
        assert!(matches!(locks.clear_damaged(&outside.join("x.lock")), Err(MachineLockError::NotALockFile { .. })));
        std::fs::write(dir.join("notes.txt"), "").unwrap();
        assert!(matches!(locks.clear_damaged(&dir.join("notes.txt")), Err(MachineLockError::NotALockFile { .. })));
        let gone = locks.clear_damaged(&dir.join("gone.lock")).unwrap_err();
        assert!(matches!(gone, MachineLockError::Missing { .. }), "{gone}");
        assert_eq!(
            gone.remedy().to_string(),
            format!("give --damaged a damaged `*.lock` file there is in `{}`", dir.display())
        );
        assert!(outside.join("x.lock").exists() && dir.join("m-n.lock").exists());
    }
}
