//! The compile cache: plugins compiled once to native code and kept on disk, so a plugin
//! adopted on hundreds of sites pays its compile once.
//!
//! An entry is keyed by the plugin's sha256, the kind of code it holds (baseline or
//! optimised: see [`crate::model::code`]) and the engine's compatibility hash (wasmtime's
//! version, target and settings, the compiler among them). It is the precompiled artefact as
//! wasmtime wrote it, followed by a trailer: that key, a 128-bit XXH3 checksum of the key and
//! the artefact, the key's length and a magic word. An entry whose key is not the one asked
//! for is a miss, so an entry copied over another's, or one kind of code renamed as the
//! other, is never loaded. The directory is private, so the checksum guards against
//! corruption, not forgery, and a fast one keeps a cache hit cheap. Only this host writes the
//! directory, created private to the user, and every entry is written whole to a temporary
//! file and renamed into place, so a file once in place is never written again. A missing,
//! stale, corrupt or foreign entry is a miss: the plugin is compiled again and the entry
//! replaced. Nothing is ever loaded from the cache without its checksum matching.
//!
//! A hit maps the entry instead of reading it: the artefact is ELF at offset 0 (the trailer
//! comes after it, where ELF does not look), so wasmtime maps the very file that was checked
//! and executes from the page cache, without copying what may be many megabytes of native
//! code (an 18 MB Python plugin) into fresh memory. The checksum maps a big entry a window
//! at a time, so checking it does not make the whole of it resident either.
//!
//! Two kinds of code per plugin, and a plugin rebuilt many times, would grow the directory
//! without end: it is held to a bound ([`DEFAULT_BOUND`]) after every entry written, the
//! entries used longest ago removed first (a hit marks its entry used), and
//! [`CompileCache::prune`] does the same on demand to any bound.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use wasmtime::component::Component;
use wasmtime::{Engine, EngineWeak};

use crate::model::code::CodeKind;
use crate::plugin::digests::DigestIndex;

/// The most a cache directory holds after an entry is written: room for the native code of
/// about twenty big (JavaScript or Python) plugins, or thousands of Rust ones.
pub const DEFAULT_BOUND: u64 = 1 << 30;

/// How long a process waits for another compiling the same plugin before it compiles the
/// plugin itself: longer than the slowest compile of a big plugin by a debug host.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes what is at `entry`, found as `found`, if it is still that: a file or link, or an
/// empty directory. What another process renamed into place since is left alone.
fn discard(entry: &Path, found: &fs::Metadata) {
    let Ok(now) = fs::symlink_metadata(entry) else { return };
    if (now.dev(), now.ino()) != (found.dev(), found.ino()) {
        return;
    }
    let _ = if now.is_dir() { fs::remove_dir(entry) } else { fs::remove_file(entry) };
}

/// Opens an entry for reading, without following a link or waiting on a FIFO, and refuses
/// what is not a regular file owned by this process's user and writable by no one else: the
/// directory's privacy is what makes its native code trusted, and a link or another's file
/// in it would bypass it.
fn open_entry(entry: &Path) -> std::io::Result<fs::File> {
    let file = fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(entry)?;
    let meta = file.metadata()?;
    // SAFETY: geteuid cannot fail and has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me || meta.permissions().mode() & 0o022 != 0 {
        return Err(std::io::Error::other("not an entry of this user's"));
    }
    Ok(file)
}

/// Whether `name` is the name of a cache entry: `<sha256>-<kind>-<engine>.cwasm`, or the
/// layout before kinds of code, `<sha256>-<engine>.cwasm`. Pruning removes nothing else.
fn is_entry_name(name: &str) -> bool {
    let hex = |part: &str, length: usize| part.len() == length && part.bytes().all(|b| b.is_ascii_hexdigit());
    let Some(stem) = name.strip_suffix(".cwasm") else { return false };
    match stem.split('-').collect::<Vec<_>>().as_slice() {
        [digest, kind, engine] => {
            hex(digest, 64) && CodeKind::ALL.iter().any(|k| k.as_str() == *kind) && hex(engine, 16)
        }
        [digest, engine] => hex(digest, 64) && hex(engine, 16),
        _ => false,
    }
}

/// How old a temporary file must be before pruning takes it for one a crashed process left:
/// a live one is renamed into place within the compile that writes it.
const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(3600);

const CHECKSUM_BYTES: usize = 16;

/// The last bytes of every entry: what tells an entry of this layout from anything else.
const MAGIC: &[u8; 8] = b"mshadpt2";

/// The key's length, stored before the magic word.
const KEY_LENGTH_BYTES: usize = 2;

/// The longest key an entry may carry. The key says what the entry is for (the plugin's
/// sha256 and the engine's compatibility hash) and is written in its trailer: an entry
/// copied over another plugin's is then a miss, not that plugin, so the cache can never
/// stand in for a pinned digest.
const KEY_MAX_BYTES: usize = 128;

/// The checksum of an entry's artefact, seeded by its key so that one entry's bytes under
/// another's trailer do not check. One pass over contiguous bytes where they fit one window
/// (the streaming hasher's buffering cost a sixth more on a cache hit); the streaming
/// hasher computes the same value over windows of a bigger one.
fn keyed_checksum(key: &[u8], bytes: &[u8]) -> [u8; CHECKSUM_BYTES] {
    let seed = xxhash_rust::xxh3::xxh3_64(key);
    xxhash_rust::xxh3::xxh3_128_with_seed(bytes, seed).to_le_bytes()
}

/// An entry's parts, found from its end: the precompiled artefact, the key it was written
/// for and the checksum written with them. `None` when the bytes are not an entry of this
/// layout (too short, no magic word, a key length out of range).
fn split_entry(stored: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let rest = stored.strip_suffix(MAGIC.as_slice())?;
    let (rest, length) = rest.split_at_checked(rest.len().checked_sub(KEY_LENGTH_BYTES)?)?;
    let key_length = usize::from(u16::from_le_bytes(length.try_into().ok()?));
    if key_length > KEY_MAX_BYTES {
        return None;
    }
    let (rest, sum) = rest.split_at_checked(rest.len().checked_sub(CHECKSUM_BYTES)?)?;
    let (artefact, key) = rest.split_at_checked(rest.len().checked_sub(key_length)?)?;
    Some((artefact, key, sum))
}

/// The most of an entry mapped at once while its checksum is computed. Every page mapped
/// counts towards the process's resident memory until it is unmapped, so a big plugin's
/// artefact (35 MB for a Python one) is checked a window at a time, and only the pages
/// wasmtime then touches stay resident; an artefact within one window, as every Rust
/// plugin's is, is checked in one pass over one mapping.
const CHECKSUM_WINDOW: u64 = 8 << 20;

/// The trailer of the entry `file` of `length` bytes, read from its end: the artefact's
/// length, the key and the checksum. `None` when it is not an entry of this layout.
fn read_trailer(file: &fs::File, length: u64) -> Option<(u64, Vec<u8>, Vec<u8>)> {
    use std::os::unix::fs::FileExt as _;
    let longest = (KEY_MAX_BYTES + CHECKSUM_BYTES + KEY_LENGTH_BYTES + MAGIC.len()) as u64;
    let tail_length = length.min(longest);
    let mut tail = vec![0; usize::try_from(tail_length).ok()?];
    file.read_exact_at(&mut tail, length - tail_length).ok()?;
    let (before, key, sum) = split_entry(&tail)?;
    let artefact_length = length - tail_length + before.len() as u64;
    Some((artefact_length, key.to_vec(), sum.to_vec()))
}

/// The keyed checksum of the first `artefact_length` bytes of `file`, mapped a window at a
/// time (see [`CHECKSUM_WINDOW`]).
fn checksum_of(file: &fs::File, artefact_length: u64, key: &[u8]) -> Option<[u8; CHECKSUM_BYTES]> {
    // SAFETY (both maps): read only and dropped before this returns. This host never writes
    // an entry in place (each is renamed into place whole), so the file does not change
    // under a map; only another process of this user writing into the private directory
    // could change or cut it meanwhile.
    // Not populated up front: the kernel maps a file's cached pages in batches as the
    // checksum reads them, which costs less than populating and unmapping every page.
    let map = |offset: u64, length: u64| unsafe {
        memmap2::MmapOptions::new().offset(offset).len(usize::try_from(length).ok()?).map(file).ok()
    };
    if artefact_length <= CHECKSUM_WINDOW {
        if artefact_length == 0 {
            return Some(keyed_checksum(key, &[]));
        }
        return Some(keyed_checksum(key, &map(0, artefact_length)?));
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::with_seed(xxhash_rust::xxh3::xxh3_64(key));
    let mut offset = 0;
    while offset < artefact_length {
        let length = CHECKSUM_WINDOW.min(artefact_length - offset);
        hasher.update(&map(offset, length)?);
        offset += length;
    }
    Some(hasher.digest128().to_le_bytes())
}

/// A directory of precompiled plugins.
#[derive(Clone)]
pub struct CompileCache {
    dir: PathBuf,
    /// The engines' compatibility hashes, computed once per engine (a host has one per kind
    /// of code): computing one hashes all of the engine's compilation settings, which would
    /// otherwise be a good part of every cache hit.
    engine_hashes: Arc<Mutex<Vec<(EngineWeak, u64)>>>,
    /// The most the directory holds after an entry is written.
    bound: u64,
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache").field("dir", &self.dir).finish_non_exhaustive()
    }
}

/// Why an entry was not used; a miss is never an error for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// No entry for this plugin and engine.
    Absent,
    /// The entry's bytes do not match its checksum, or are not an entry at all.
    Corrupt,
    /// The bytes matched but the engine would not take them (another build of the host).
    Incompatible,
    /// A sound entry, but made for another plugin or engine: copied or moved into place.
    OtherKey,
}

/// Why the compile cache cannot be opened, written or pruned.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// What is there is not a directory.
    #[error("the compile cache `{}` is not a directory", dir.display())]
    NotADirectory {
        /// The cache's directory.
        dir: PathBuf,
    },
    /// Others can write it, so it could hold native code planted by them.
    #[error("the compile cache `{}` is not private to this user (owner {owner}, mode {mode:o}); use another", dir.display())]
    NotPrivate {
        /// The cache's directory.
        dir: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// Its permission bits.
        mode: u32,
    },
    /// The system refused a step.
    #[error("failed to {step} `{}`", path.display())]
    Io {
        /// The directory or entry.
        path: PathBuf,
        /// The step, as `failed to …` goes on.
        step: &'static str,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// An entry's key too long for its trailer.
    #[error("the cache key `{key}` is longer than {KEY_MAX_BYTES} bytes")]
    KeyTooLong {
        /// The key.
        key: String,
    },
}

impl CacheError {
    /// What mends it: another cache, or this one made this user's only.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        match self {
            CacheError::NotADirectory { dir } | CacheError::NotPrivate { dir, .. } => {
                crate::remedy::Remedy::EditFile { path: dir.clone(), at: None }
            }
            CacheError::Io { path, .. } => crate::remedy::Remedy::EditFile { path: path.clone(), at: None },
            CacheError::KeyTooLong { .. } => crate::remedy::Remedy::Report,
        }
    }
}

/// The error of a step the system refused on `path`.
fn io<'a>(path: &'a Path, step: &'static str) -> impl FnOnce(std::io::Error) -> CacheError + 'a {
    move |e| CacheError::Io { path: path.to_path_buf(), step, source: Arc::new(e) }
}

impl CompileCache {
    /// Opens (creating if needed) a cache directory private to this user. A directory other
    /// users can write to is refused: anything in it could be native code planted by them.
    pub fn open(dir: &Path) -> Result<CompileCache, CacheError> {
        if fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(CacheError::NotADirectory { dir: dir.to_path_buf() });
        }
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io(dir, "create the compile cache"))?;
        let meta = fs::metadata(dir).map_err(io(dir, "read the compile cache"))?;
        // This process's user owns its /proc entry.
        let me = fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(meta.uid());
        if meta.uid() != me || meta.permissions().mode() & 0o022 != 0 {
            let mode = meta.permissions().mode() & 0o777;
            return Err(CacheError::NotPrivate { dir: dir.to_path_buf(), owner: meta.uid(), mode });
        }
        Ok(CompileCache { dir: dir.to_path_buf(), engine_hashes: Arc::default(), bound: DEFAULT_BOUND })
    }

    /// The default place: `$XDG_CACHE_HOME/mesh-adopt`, else `~/.cache/mesh-adopt`.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|base| base.join("mesh-adopt"))
    }

    /// The cache's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// This cache held to `bound` bytes after each entry written, instead of
    /// [`DEFAULT_BOUND`].
    pub fn with_bound(mut self, bound: u64) -> CompileCache {
        self.bound = bound;
        self
    }

    /// The engine's compatibility hash (wasmtime's version, target and settings), computed
    /// once per engine.
    pub(crate) fn engine_hash(&self, engine: &Engine) -> u64 {
        let mut memo = self.engine_hashes.lock().unwrap_or_else(|p| p.into_inner());
        memo.retain(|(known, _)| known.upgrade().is_some());
        if let Some((_, hash)) =
            memo.iter().find(|(known, _)| known.upgrade().is_some_and(|known| Engine::same(&known, engine)))
        {
            return *hash;
        }
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let hash = hasher.finish();
        memo.push((engine.weak(), hash));
        hash
    }

    /// The entry's key: the plugin's digest, the kind of code and the engine's compatibility
    /// hash.
    fn key(&self, engine: &Engine, kind: CodeKind, digest: &str) -> String {
        format!("{digest}-{}-{:016x}", kind.as_str(), self.engine_hash(engine))
    }

    fn entry(&self, engine: &Engine, kind: CodeKind, digest: &str) -> PathBuf {
        self.dir.join(format!("{}.cwasm", self.key(engine, kind, digest)))
    }

    /// The size of the entry for this plugin, engine and kind of code, when there is a sound
    /// one (checked as a load checks it): what `inspect` shows.
    pub(crate) fn sound_entry_size(&self, engine: &Engine, kind: CodeKind, digest: &str) -> Option<u64> {
        self.get(engine, kind, digest).ok()?;
        fs::metadata(self.entry(engine, kind, digest)).ok().map(|m| m.len())
    }

    /// Whether the directory holds an entry of `kind` of code for the plugin with sha256
    /// `digest`, for any engine: read from the names alone, to know whether finding the
    /// one of an engine is worth that engine.
    pub(crate) fn may_hold(&self, kind: CodeKind, digest: &str) -> bool {
        let prefix = format!("{digest}-{}-", kind.as_str());
        fs::read_dir(&self.dir).into_iter().flatten().flatten().any(|found| {
            let name = found.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&prefix) && is_entry_name(&name)
        })
    }

    /// Removes the entry for this plugin, engine and kind of code, if there is one: a
    /// baseline entry once the same plugin's optimised code is stored.
    pub(crate) fn remove(&self, engine: &Engine, kind: CodeKind, digest: &str) {
        let _ = fs::remove_file(self.entry(engine, kind, digest));
    }

    /// The component for the plugin with sha256 `digest`, if a sound entry exists. The
    /// entry's trailer and checksum are checked, and then wasmtime maps that same open file
    /// (through `/proc/self/fd`), so what runs is what was checked.
    ///
    /// An entry that is not sound (corrupt, another key's, refused by the engine, not a
    /// regular file) is removed: no later run checks it again, and `inspect` does not show
    /// it; the plugin is compiled afresh and the entry written anew.
    pub(crate) fn get(&self, engine: &Engine, kind: CodeKind, digest: &str) -> Result<Component, Miss> {
        let entry = self.entry(engine, kind, digest);
        let Ok(found) = fs::symlink_metadata(&entry) else { return Err(Miss::Absent) };
        let got = self.check(engine, kind, digest, &entry);
        if got.is_err() {
            discard(&entry, &found);
        }
        got
    }

    fn check(&self, engine: &Engine, kind: CodeKind, digest: &str, entry: &Path) -> Result<Component, Miss> {
        // Anything but a regular file of this user's, which only they can write, is no entry
        // this host wrote: not a link (whose target may be anyone's, anywhere), not a FIFO.
        let Ok(file) = open_entry(entry) else { return Err(Miss::Corrupt) };
        let length = file.metadata().map_err(|_| Miss::Absent)?.len();
        let (artefact_length, key, sum) = read_trailer(&file, length).ok_or(Miss::Corrupt)?;
        if sum != checksum_of(&file, artefact_length, &key).ok_or(Miss::Corrupt)? {
            return Err(Miss::Corrupt);
        }
        if key != self.key(engine, kind, digest).as_bytes() {
            return Err(Miss::OtherKey);
        }
        // Marked used, for the bound to keep what is used and remove what is not.
        let _ = file.set_times(fs::FileTimes::new().set_accessed(std::time::SystemTime::now()));
        // The open file itself, not the entry's name: a rename into place meanwhile (another
        // process of this host storing the same entry) cannot swap what is loaded.
        let same_file = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        // SAFETY: these bytes were written by `put` of this host (the directory is private
        // to this user), match the checksum written with them, and are never modified in
        // place; wasmtime also checks that they were produced by a compatible engine and
        // refuses them otherwise.
        unsafe { Component::deserialize_file(engine, &same_file) }.map_err(|_| Miss::Incompatible)
    }

    /// Holds the entry's lock file until dropped: a process about to compile a plugin takes
    /// it, so another process compiling the same plugin meanwhile waits and then finds the
    /// entry written. `None` when the lock cannot be had (a read-only directory), or was
    /// held by another for longer than [`LOCK_WAIT`] (a stopped or hung process): compiling
    /// without it is still right, since entries are renamed into place whole.
    pub(crate) fn lock_entry(&self, engine: &Engine, kind: CodeKind, digest: &str) -> Option<fs::File> {
        self.lock_entry_within(engine, kind, digest, LOCK_WAIT)
    }

    fn lock_entry_within(
        &self,
        engine: &Engine,
        kind: CodeKind,
        digest: &str,
        wait: std::time::Duration,
    ) -> Option<fs::File> {
        let mut path = self.entry(engine, kind, digest).into_os_string();
        path.push(".lock");
        // Not waiting on a FIFO's reader, and no lock taken on anything but a regular file.
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .ok()?;
        file.metadata().ok().filter(fs::Metadata::is_file)?;
        let asked = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Some(file),
                Err(fs::TryLockError::WouldBlock) if asked.elapsed() < wait => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                Err(_) => return None,
            }
        }
    }

    /// What plugin files hash to, remembered beside the entries (see [`crate::plugin::digests`]).
    pub(crate) fn digests(&self) -> DigestIndex {
        DigestIndex::in_cache(&self.dir)
    }

    /// Stores precompiled bytes for the plugin with sha256 `digest`, atomically: written
    /// whole to a temporary file in the directory, synced, and renamed over the entry.
    pub(crate) fn put(
        &self,
        engine: &Engine,
        kind: CodeKind,
        digest: &str,
        precompiled: &[u8],
    ) -> Result<(), CacheError> {
        let path = self.entry(engine, kind, digest);
        let failed = io(&path, "write the compile cache entry");
        // A private file (0600), removed again if anything below fails.
        let mut file = match tempfile::Builder::new().prefix(".entry-").suffix(".tmp").tempfile_in(&self.dir) {
            Ok(file) => file,
            Err(e) => return Err(failed(e)),
        };
        let key = self.key(engine, kind, digest);
        let key_length = u16::try_from(key.len()).ok().filter(|n| usize::from(*n) <= KEY_MAX_BYTES);
        let Some(key_length) = key_length else { return Err(CacheError::KeyTooLong { key }) };
        let written = (|| {
            let out = file.as_file_mut();
            out.write_all(precompiled)?;
            out.write_all(key.as_bytes())?;
            out.write_all(&keyed_checksum(key.as_bytes(), precompiled))?;
            out.write_all(&key_length.to_le_bytes())?;
            out.write_all(MAGIC)?;
            out.sync_all()
        })();
        if let Err(e) = written.and_then(|()| file.persist(&path).map(drop).map_err(|e| e.error)) {
            return Err(failed(e));
        }
        // A cache that cannot be pruned still serves; the next entry written tries again.
        let _ = self.prune(self.bound);
        Ok(())
    }

    /// Holds the directory to `bound` bytes of native code: removes what a crashed process
    /// left (temporary files an hour old, lock files of entries no longer there), then the
    /// entries and function packs used longest ago until the rest fit. Removing one only
    /// makes a later run compile again; a process using one keeps it mapped.
    pub fn prune(&self, bound: u64) -> Result<Pruned, CacheError> {
        {
            let mut pruned = Pruned::default();
            let mut held = Vec::new();
            let mut locks = Vec::new();
            let listed = fs::read_dir(&self.dir).map_err(io(&self.dir, "read the compile cache"))?;
            let functions = self.dir.join(crate::plugin::functions::DIRECTORY);
            let packs = fs::read_dir(&functions)
                .into_iter()
                .flatten()
                .flatten()
                .flat_map(|engine| fs::read_dir(engine.path()).into_iter().flatten().flatten().collect::<Vec<_>>());
            for found in listed.flatten().chain(packs) {
                let path = found.path();
                let Ok(meta) = fs::symlink_metadata(&path) else { continue };
                let name = found.file_name().to_string_lossy().into_owned();
                let age = meta.modified().ok().and_then(|at| at.elapsed().ok()).unwrap_or_default();
                if meta.is_symlink() && is_entry_name(&name) {
                    // Never an entry (a run refuses it): only the link goes, not what it names.
                    if fs::remove_file(&path).is_ok() {
                        pruned.removed(path, 0);
                    }
                } else if !meta.is_file() {
                    continue;
                } else if name.starts_with(".entry-") || name.starts_with(".pack-") {
                    if age > STALE_TEMPORARY && fs::remove_file(&path).is_ok() {
                        pruned.removed(path, meta.len());
                    }
                } else if name.strip_suffix(".lock").is_some_and(is_entry_name) {
                    locks.push((path, meta.len()));
                } else if is_entry_name(&name) || (path.starts_with(&functions) && name.ends_with(".pack")) {
                    let used = meta.accessed().into_iter().chain(meta.modified()).max();
                    held.push((used.unwrap_or(std::time::UNIX_EPOCH), meta.len(), path));
                }
            }
            held.sort();
            let mut total: u64 = held.iter().map(|(_, size, _)| size).sum();
            for (_, size, path) in held {
                if total <= bound {
                    break;
                }
                if fs::remove_file(&path).is_ok() {
                    total -= size;
                    pruned.removed(path, size);
                }
            }
            // Locks last, so that those of the entries just removed go too. One another process
            // holds is that process's compile of its entry: left to it.
            for (path, size) in locks {
                let entry = path.with_extension("");
                let unused = fs::File::open(&path).is_ok_and(|lock| lock.try_lock().is_ok());
                if unused && fs::symlink_metadata(&entry).is_err() && fs::remove_file(&path).is_ok() {
                    pruned.removed(path, size);
                }
            }
            pruned.kept = total;
            Ok(pruned)
        }
    }
}

/// What [`CompileCache::prune`] removed, and what it left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The files removed.
    pub removed: Vec<PathBuf>,
    /// The bytes they held.
    pub freed: u64,
    /// The bytes of native code left: entries and function packs.
    pub kept: u64,
}

impl Pruned {
    fn removed(&mut self, path: PathBuf, size: u64) {
        self.removed.push(path);
        self.freed += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_directory_others_can_write() {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let err = CompileCache::open(dir.path()).unwrap_err();
        assert!(err.to_string().contains("not private to this user"), "{err}");
    }

    #[test]
    fn an_absent_or_garbled_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("c")).unwrap();
        let engine = Engine::default();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Absent));
        fs::write(cache.entry(&engine, CodeKind::Optimised, "abc"), b"short").unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Corrupt));
        // A correct checksum over bytes that are not a compiled component.
        cache.put(&engine, CodeKind::Optimised, "abc", b"not native code").unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Incompatible));
    }

    #[test]
    fn an_entry_copied_over_another_plugins_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("c")).unwrap();
        let engine = Engine::default();
        cache.put(&engine, CodeKind::Optimised, "evil", b"native code of another plugin").unwrap();
        fs::copy(
            cache.entry(&engine, CodeKind::Optimised, "evil"),
            cache.entry(&engine, CodeKind::Optimised, "pinned"),
        )
        .unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "pinned").err(), Some(Miss::OtherKey));
    }

    #[test]
    fn a_byte_changed_anywhere_in_an_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("c")).unwrap();
        let engine = Engine::default();
        cache.put(&engine, CodeKind::Optimised, "abc", b"precompiled bytes of some length").unwrap();
        let sound = fs::read(cache.entry(&engine, CodeKind::Optimised, "abc")).unwrap();
        for at in 0..sound.len() {
            let mut bytes = sound.clone();
            bytes[at] ^= 0x01;
            fs::write(cache.entry(&engine, CodeKind::Optimised, "abc"), &bytes).unwrap();
            let miss = cache.get(&engine, CodeKind::Optimised, "abc").err();
            assert!(matches!(miss, Some(Miss::Corrupt)), "byte {at} of {}: {miss:?}", sound.len());
        }
    }

    #[test]
    fn one_kind_of_code_is_never_taken_for_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = |strategy| {
            let mut config = wasmtime::Config::new();
            config.strategy(strategy);
            Engine::new(&config).unwrap()
        };
        let (cranelift, winch) = (engine(wasmtime::Strategy::Cranelift), engine(wasmtime::Strategy::Winch));
        // The smallest component there is.
        let component = b"\0asm\x0d\x00\x01\x00";
        let baseline = winch.precompile_component(component).unwrap();
        cache.put(&winch, CodeKind::Baseline, "abc", &baseline).unwrap();
        assert!(cache.get(&winch, CodeKind::Baseline, "abc").is_ok());
        // Its entry renamed as the optimised one's is another key's ...
        fs::copy(cache.entry(&winch, CodeKind::Baseline, "abc"), cache.entry(&cranelift, CodeKind::Optimised, "abc"))
            .unwrap();
        assert_eq!(cache.get(&cranelift, CodeKind::Optimised, "abc").err(), Some(Miss::OtherKey));
        // ... and stored as optimised code on purpose, the engine refuses it.
        cache.put(&cranelift, CodeKind::Optimised, "abc", &baseline).unwrap();
        assert_eq!(cache.get(&cranelift, CodeKind::Optimised, "abc").err(), Some(Miss::Incompatible));
        assert!(cache.entry(&winch, CodeKind::Baseline, "abc") != cache.entry(&winch, CodeKind::Optimised, "abc"));
    }

    #[test]
    fn pruning_keeps_the_entries_used_last_within_the_bound_and_clears_what_crashes_left() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap().with_bound(u64::MAX);
        let engine = Engine::default();
        // The smallest component there is, compiled: an entry that loads.
        let artefact = engine.precompile_component(b"\0asm\x0d\x00\x01\x00").unwrap();
        let day = std::time::Duration::from_secs(86_400);
        let long_ago = std::time::SystemTime::now() - 3 * day;
        let [old, mid, new] = ["a", "b", "c"].map(|c| c.repeat(64));
        for (digest, age) in [(&old, 3), (&mid, 2), (&new, 1)] {
            cache.put(&engine, CodeKind::Optimised, digest, &artefact).unwrap();
            let file = fs::File::options().write(true).open(cache.entry(&engine, CodeKind::Optimised, digest)).unwrap();
            let used = std::time::SystemTime::now() - age * day;
            file.set_times(fs::FileTimes::new().set_accessed(used).set_modified(used)).unwrap();
        }
        let stale = dir.path().join(".entry-crashed.tmp");
        fs::write(&stale, b"half an entry").unwrap();
        fs::File::options().write(true).open(&stale).unwrap().set_modified(long_ago).unwrap();
        let mut orphan = cache.entry(&engine, CodeKind::Baseline, &"d".repeat(64)).into_os_string();
        orphan.push(".lock");
        fs::write(&orphan, b"").unwrap();
        let mut mid_lock = cache.entry(&engine, CodeKind::Optimised, &mid).into_os_string();
        mid_lock.push(".lock");
        fs::write(&mid_lock, b"").unwrap();
        let stray = dir.path().join("notes.cwasm");
        fs::write(&stray, b"not ours").unwrap();
        // A hit marks `old` used now: `mid` is then the longest unused.
        cache.get(&engine, CodeKind::Optimised, &old).unwrap();
        let entry_size = fs::metadata(cache.entry(&engine, CodeKind::Optimised, &new)).unwrap().len();
        let pruned = cache.prune(2 * entry_size).unwrap();
        let gone: Vec<_> =
            pruned.removed.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(gone.len(), 4, "{gone:?}");
        assert!(!cache.entry(&engine, CodeKind::Optimised, &mid).exists(), "{gone:?}");
        // What crashes left, and the lock of the entry removed, go too; what is not the
        // cache's stays.
        assert!(!stale.exists() && !Path::new(&orphan).exists() && !Path::new(&mid_lock).exists());
        assert!(stray.exists());
        assert!(cache.entry(&engine, CodeKind::Optimised, &old).exists());
        assert!(cache.entry(&engine, CodeKind::Optimised, &new).exists());
        assert_eq!(pruned.kept, 2 * entry_size);
    }

    #[test]
    fn whether_a_kind_of_code_may_be_held_is_read_from_the_names() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        let (held, other) = ("a".repeat(64), "b".repeat(64));
        cache.put(&engine, CodeKind::Baseline, &held, b"some code").unwrap();
        let _lock = cache.lock_entry(&engine, CodeKind::Baseline, &other);
        assert!(cache.may_hold(CodeKind::Baseline, &held));
        assert!(!cache.may_hold(CodeKind::Optimised, &held));
        assert!(!cache.may_hold(CodeKind::Baseline, &other), "a lock file is no entry");
    }

    #[test]
    fn a_lock_held_for_too_long_is_waited_for_no_longer() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        let held = cache.lock_entry(&engine, CodeKind::Baseline, "abc").expect("the first takes the lock");
        let wait = std::time::Duration::from_millis(200);
        let asked = std::time::Instant::now();
        assert!(cache.lock_entry_within(&engine, CodeKind::Baseline, "abc", wait).is_none());
        assert!(asked.elapsed() >= wait && asked.elapsed() < 10 * wait, "{:?}", asked.elapsed());
        drop(held);
        assert!(cache.lock_entry_within(&engine, CodeKind::Baseline, "abc", wait).is_some());
    }

    #[test]
    fn a_link_or_a_file_others_can_write_is_never_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("c")).unwrap();
        let engine = Engine::default();
        let artefact = engine.precompile_component(b"\0asm\x0d\x00\x01\x00").unwrap();
        cache.put(&engine, CodeKind::Optimised, "abc", &artefact).unwrap();
        let entry = cache.entry(&engine, CodeKind::Optimised, "abc");
        assert!(cache.get(&engine, CodeKind::Optimised, "abc").is_ok());
        // The same sound entry, moved out of the cache and linked back in: refused, and only
        // the link removed.
        let outside = dir.path().join("elsewhere.cwasm");
        fs::rename(&entry, &outside).unwrap();
        std::os::unix::fs::symlink(&outside, &entry).unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Corrupt));
        assert!(fs::symlink_metadata(&entry).is_err() && outside.exists());
        // Back in place, but writable by others: refused too.
        fs::rename(&outside, &entry).unwrap();
        fs::set_permissions(&entry, fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Corrupt));
    }

    #[test]
    fn an_entry_that_is_not_sound_is_removed_when_found() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        cache.put(&engine, CodeKind::Optimised, "abc", b"not native code").unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Incompatible));
        assert!(!cache.entry(&engine, CodeKind::Optimised, "abc").exists());
        // A directory in an entry's place, which no rename can replace, is taken out too.
        fs::create_dir(cache.entry(&engine, CodeKind::Optimised, "abc")).unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "abc").err(), Some(Miss::Corrupt));
        assert!(!cache.entry(&engine, CodeKind::Optimised, "abc").exists());
        assert!(
            !is_entry_name("notes.cwasm")
                && is_entry_name(&format!("{}-baseline-{}.cwasm", "a".repeat(64), "0".repeat(16)))
        );
    }

    #[test]
    fn an_entry_bigger_than_a_checksum_window_is_checked_whole() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        let artefact: Vec<u8> = (0..CHECKSUM_WINDOW + CHECKSUM_WINDOW / 2).map(|i| (i % 251) as u8).collect();
        cache.put(&engine, CodeKind::Optimised, "big", &artefact).unwrap();
        let mut stored = fs::read(cache.entry(&engine, CodeKind::Optimised, "big")).unwrap();
        // The checksum holds (the bytes are just not native code) ...
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "big").err(), Some(Miss::Incompatible));
        // ... and a byte changed in the second window breaks it.
        stored[usize::try_from(CHECKSUM_WINDOW).unwrap() + 7] ^= 0x01;
        fs::write(cache.entry(&engine, CodeKind::Optimised, "big"), &stored).unwrap();
        assert_eq!(cache.get(&engine, CodeKind::Optimised, "big").err(), Some(Miss::Corrupt));
    }

    #[test]
    fn an_entry_is_the_artefact_then_its_trailer_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        cache.put(&engine, CodeKind::Optimised, "abc", b"\x7fELF...").unwrap();
        let stored = fs::read(cache.entry(&engine, CodeKind::Optimised, "abc")).unwrap();
        let (artefact, key, _) = split_entry(&stored).unwrap();
        assert_eq!(artefact, b"\x7fELF...");
        assert_eq!(key, cache.key(&engine, CodeKind::Optimised, "abc").as_bytes());
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let mode = fs::metadata(cache.entry(&engine, CodeKind::Optimised, "abc")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
}
