//! The compile cache: plugins compiled once to native code and kept on disk, so a plugin
//! adopted on hundreds of sites pays Cranelift once.
//!
//! An entry is keyed by the plugin's sha256 and the engine's compatibility hash (wasmtime's
//! version, target and settings). It is the precompiled artefact as wasmtime wrote it,
//! followed by a trailer: that key, a 128-bit XXH3 checksum of the key and the artefact, the
//! key's length and a magic word. An entry whose key is not the one asked for is a miss, so
//! an entry copied over another's is never loaded as that plugin. The directory is private,
//! so the checksum guards against corruption, not forgery, and a fast one keeps a cache hit
//! cheap. Only this host writes the directory, created private to the user, and every entry
//! is written whole to a temporary file and renamed into place, so a file once in place is
//! never written again. A missing, stale, corrupt or foreign entry is a miss: the plugin is
//! compiled again and the entry replaced. Nothing is ever loaded from the cache without its
//! checksum matching.
//!
//! A hit maps the entry instead of reading it: the artefact is ELF at offset 0 (the trailer
//! comes after it, where ELF does not look), so wasmtime maps the very file that was checked
//! and executes from the page cache, without copying what may be many megabytes of native
//! code (an 18 MB Python plugin) into fresh memory. The checksum maps a big entry a window
//! at a time, so checking it does not make the whole of it resident either.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result, bail};

use wasmtime::component::Component;
use wasmtime::{Engine, EngineWeak};

use crate::plugin::digests::DigestIndex;

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
    /// The last engine's compatibility hash: computing it hashes all of the engine's
    /// compilation settings, which would otherwise be a good part of every cache hit.
    engine_hash: Arc<Mutex<Option<(EngineWeak, u64)>>>,
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

impl CompileCache {
    /// Opens (creating if needed) a cache directory private to this user. A directory other
    /// users can write to is refused: anything in it could be native code planted by them.
    pub fn open(dir: &Path) -> Result<CompileCache, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Cache, || {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("failed to create the compile cache `{}`", dir.display()))?;
            let meta =
                fs::metadata(dir).with_context(|| format!("failed to read the compile cache `{}`", dir.display()))?;
            // This process's user owns its /proc entry.
            let me = fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(meta.uid());
            if meta.uid() != me || meta.permissions().mode() & 0o022 != 0 {
                bail!(
                    "the compile cache `{}` is not private to this user (owner {}, mode {:o}); use another",
                    dir.display(),
                    meta.uid(),
                    meta.permissions().mode() & 0o777
                );
            }
            Ok(CompileCache { dir: dir.to_path_buf(), engine_hash: Arc::default() })
        })
    }

    /// The default place: `$XDG_CACHE_HOME/mesh-adopt`, else `~/.cache/mesh-adopt`.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|base| base.join("mesh-adopt"))
    }

    /// The cache's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The engine's compatibility hash (wasmtime's version, target and settings), computed
    /// once per engine.
    pub(crate) fn engine_hash(&self, engine: &Engine) -> u64 {
        let mut memo = self.engine_hash.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((known, hash)) = &*memo
            && known.upgrade().is_some_and(|known| Engine::same(&known, engine))
        {
            return *hash;
        }
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let hash = hasher.finish();
        *memo = Some((engine.weak(), hash));
        hash
    }

    /// The entry's key: the plugin's digest and the engine's compatibility hash.
    fn key(&self, engine: &Engine, digest: &str) -> String {
        format!("{digest}{:016x}", self.engine_hash(engine))
    }

    fn entry(&self, engine: &Engine, digest: &str) -> PathBuf {
        self.dir.join(format!("{digest}-{:016x}.cwasm", self.engine_hash(engine)))
    }

    /// The component for the plugin with sha256 `digest`, if a sound entry exists. The
    /// entry's trailer and checksum are checked, and then wasmtime maps that same open file
    /// (through `/proc/self/fd`), so what runs is what was checked.
    #[doc(hidden)]
    pub fn get(&self, engine: &Engine, digest: &str) -> Result<Component, Miss> {
        let entry = self.entry(engine, digest);
        if !entry.exists() {
            return Err(Miss::Absent);
        }
        // Anything but a regular file there is no entry this host wrote: compiled afresh, and
        // the entry written over it.
        let Ok(file) = crate::catalogue::open_regular(&entry) else { return Err(Miss::Corrupt) };
        let length = file.metadata().map_err(|_| Miss::Absent)?.len();
        let (artefact_length, key, sum) = read_trailer(&file, length).ok_or(Miss::Corrupt)?;
        if sum != checksum_of(&file, artefact_length, &key).ok_or(Miss::Corrupt)? {
            return Err(Miss::Corrupt);
        }
        if key != self.key(engine, digest).as_bytes() {
            return Err(Miss::OtherKey);
        }
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
    /// entry written. `None` when the lock cannot be had (a read-only directory), when
    /// compiling without it is still right.
    pub(crate) fn lock_entry(&self, engine: &Engine, digest: &str) -> Option<fs::File> {
        let mut path = self.entry(engine, digest).into_os_string();
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
        file.lock().ok()?;
        Some(file)
    }

    /// What plugin files hash to, remembered beside the entries (see [`crate::plugin::digests`]).
    pub(crate) fn digests(&self) -> DigestIndex {
        DigestIndex::in_cache(&self.dir)
    }

    /// Stores precompiled bytes for the plugin with sha256 `digest`, atomically: written
    /// whole to a temporary file in the directory, synced, and renamed over the entry.
    #[doc(hidden)]
    pub fn put(&self, engine: &Engine, digest: &str, precompiled: &[u8]) -> Result<(), crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Cache, || {
            let path = self.entry(engine, digest);
            let failed = || format!("failed to write the compile cache entry `{}`", path.display());
            // A private file (0600), removed again if anything below fails.
            let mut file = tempfile::Builder::new()
                .prefix(".entry-")
                .suffix(".tmp")
                .tempfile_in(&self.dir)
                .with_context(failed)?;
            let key = self.key(engine, digest);
            let key_length = u16::try_from(key.len()).ok().filter(|n| usize::from(*n) <= KEY_MAX_BYTES);
            let Some(key_length) = key_length else {
                bail!("the cache key `{key}` is longer than {KEY_MAX_BYTES} bytes")
            };
            let written = (|| {
                let out = file.as_file_mut();
                out.write_all(precompiled)?;
                out.write_all(key.as_bytes())?;
                out.write_all(&keyed_checksum(key.as_bytes(), precompiled))?;
                out.write_all(&key_length.to_le_bytes())?;
                out.write_all(MAGIC)?;
                out.sync_all()
            })();
            written.with_context(failed)?;
            file.persist(&path).map_err(|e| e.error).with_context(failed)?;
            Ok(())
        })
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
        assert_eq!(cache.get(&engine, "abc").err(), Some(Miss::Absent));
        fs::write(cache.entry(&engine, "abc"), b"short").unwrap();
        assert_eq!(cache.get(&engine, "abc").err(), Some(Miss::Corrupt));
        // A correct checksum over bytes that are not a compiled component.
        cache.put(&engine, "abc", b"not native code").unwrap();
        assert_eq!(cache.get(&engine, "abc").err(), Some(Miss::Incompatible));
    }

    #[test]
    fn an_entry_copied_over_another_plugins_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("c")).unwrap();
        let engine = Engine::default();
        cache.put(&engine, "evil", b"native code of another plugin").unwrap();
        fs::copy(cache.entry(&engine, "evil"), cache.entry(&engine, "pinned")).unwrap();
        assert_eq!(cache.get(&engine, "pinned").err(), Some(Miss::OtherKey));
    }

    #[test]
    fn a_byte_changed_anywhere_in_an_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(&dir.path().join("c")).unwrap();
        let engine = Engine::default();
        cache.put(&engine, "abc", b"precompiled bytes of some length").unwrap();
        let sound = fs::read(cache.entry(&engine, "abc")).unwrap();
        for at in 0..sound.len() {
            let mut bytes = sound.clone();
            bytes[at] ^= 0x01;
            fs::write(cache.entry(&engine, "abc"), &bytes).unwrap();
            let miss = cache.get(&engine, "abc").err();
            assert!(matches!(miss, Some(Miss::Corrupt)), "byte {at} of {}: {miss:?}", sound.len());
        }
    }

    #[test]
    fn an_entry_bigger_than_a_checksum_window_is_checked_whole() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        let artefact: Vec<u8> = (0..CHECKSUM_WINDOW + CHECKSUM_WINDOW / 2).map(|i| (i % 251) as u8).collect();
        cache.put(&engine, "big", &artefact).unwrap();
        // The checksum holds (the bytes are just not native code) ...
        assert_eq!(cache.get(&engine, "big").err(), Some(Miss::Incompatible));
        // ... and a byte changed in the second window breaks it.
        let mut stored = fs::read(cache.entry(&engine, "big")).unwrap();
        stored[usize::try_from(CHECKSUM_WINDOW).unwrap() + 7] ^= 0x01;
        fs::write(cache.entry(&engine, "big"), &stored).unwrap();
        assert_eq!(cache.get(&engine, "big").err(), Some(Miss::Corrupt));
    }

    #[test]
    fn an_entry_is_the_artefact_then_its_trailer_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(dir.path()).unwrap();
        let engine = Engine::default();
        cache.put(&engine, "abc", b"\x7fELF...").unwrap();
        let stored = fs::read(cache.entry(&engine, "abc")).unwrap();
        let (artefact, key, _) = split_entry(&stored).unwrap();
        assert_eq!(artefact, b"\x7fELF...");
        assert_eq!(key, cache.key(&engine, "abc").as_bytes());
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let mode = fs::metadata(cache.entry(&engine, "abc")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
}
