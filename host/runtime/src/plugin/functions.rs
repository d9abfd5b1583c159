//! Functions compiled before, kept beside the compile cache so that compiling a new plugin
//! reuses the native code of every function another plugin already had.
//!
//! Every JavaScript plugin carries the same JavaScript engine and every Python plugin the
//! same interpreter: most of a big plugin's first compile is Cranelift compiling, again,
//! functions it compiled for the plugin before (tens of thousands of them, seconds of
//! CPU). Cranelift's incremental cache keys each function by a hash of its code as
//! translated (what it calls and where its data lives are parameters, not part of the key)
//! and the target's settings, and stores what it compiled to. This is that cache's store.
//!
//! A compile's new functions are kept in memory, so the next plugin compiled in the same
//! process reuses them at once, and written as one pack when the compile ends: the pairs of
//! key and compiled function, then a 128-bit XXH3 checksum of them and a magic word. A pack
//! is named by its checksum and written whole to a temporary file, then renamed into place.
//! Packs are read only when something is compiled (a warm run never looks at them), each
//! checked whole first; one that does not check is removed and never used. Packs live in a
//! directory per engine compatibility hash, inside the compile cache's private directory,
//! so they are trusted exactly as far as its entries are. Pruning the cache to its bound
//! removes the packs used longest ago with its entries: that only makes later compiles slower.
//!
//! Not every function is found again under the key it was stored under: Cranelift 0.135's
//! `DataFlowGraph::clear` leaves exception tables behind in a reused compile context, so a
//! function compiled on a thread after a trampoline hashes with that table in it, and which
//! functions do depends on how the compile's threads were scheduled (one in twenty or so).
//! Those are compiled again, and stored under the new key.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use wasmtime::CacheStore;

/// The directory in the compile cache's that holds the packs, one directory per engine.
pub(crate) const DIRECTORY: &str = "functions";

/// The last bytes of every pack.
const MAGIC: &[u8; 8] = b"mshfns01";
const CHECKSUM_BYTES: usize = 16;

/// How many functions a host's compiles looked up, and how many of those were reused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionsReused {
    /// Functions looked up in the store: one per function compiled.
    pub looked_up: usize,
    /// Of those, the ones whose compiled code was reused.
    pub reused: usize,
}

/// The store Cranelift's incremental cache reads and writes (see the module's comment).
#[derive(Debug)]
pub(crate) struct FunctionStore {
    /// `<cache>/functions`; packs go in a directory per engine inside it.
    base: PathBuf,
    /// The engine's directory, known once the engine this store serves is built.
    dir: OnceLock<PathBuf>,
    state: Mutex<State>,
    looked_up: AtomicUsize,
    reused: AtomicUsize,
}

#[derive(Debug, Default)]
struct State {
    /// Whether the packs on disk have been mapped and indexed.
    read: bool,
    /// The packs, mapped: their functions stay in the page cache, not in this process's
    /// memory, until one is reused.
    packs: Vec<memmap2::Mmap>,
    /// Where each function of the packs is: the pack, and its bytes there.
    packed: HashMap<Vec<u8>, (usize, Range<usize>)>,
    /// Functions compiled in this process.
    compiled: HashMap<Vec<u8>, Vec<u8>>,
    /// Keys of `compiled` not yet written to a pack.
    unwritten: Vec<Vec<u8>>,
}

impl State {
    fn find(&self, key: &[u8]) -> Option<&[u8]> {
        if let Some(code) = self.compiled.get(key) {
            return Some(code);
        }
        let (pack, range) = self.packed.get(key)?;
        self.packs[*pack].get(range.clone())
    }
}

impl FunctionStore {
    /// The store of the compile cache in `cache_dir`.
    pub(crate) fn in_cache(cache_dir: &Path) -> FunctionStore {
        FunctionStore {
            base: cache_dir.join(DIRECTORY),
            dir: OnceLock::new(),
            state: Mutex::default(),
            looked_up: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
        }
    }

    /// Names the engine this store serves, by its compatibility hash: packs of another
    /// build of the host or other settings are never read.
    pub(crate) fn serve(&self, engine_hash: u64) {
        let _ = self.dir.set(self.base.join(format!("{engine_hash:016x}")));
    }

    /// How many functions this store was asked for, and gave.
    pub(crate) fn reused(&self) -> FunctionsReused {
        FunctionsReused {
            looked_up: self.looked_up.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if !state.read {
            state.read = true;
            if let Some(dir) = self.dir.get() {
                read_packs(dir, &mut state);
            }
        }
        state
    }

    /// Writes the functions compiled since the last call as one pack. A pack that cannot be
    /// written is no reason to fail a compile: those functions are compiled again next time.
    pub(crate) fn write_pack(&self) {
        let Some(dir) = self.dir.get() else { return };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.unwritten.is_empty() {
            return;
        }
        let keys = std::mem::take(&mut state.unwritten);
        let mut body = Vec::new();
        for key in &keys {
            let value = &state.compiled[key];
            let (Ok(key_length), Ok(value_length)) = (u16::try_from(key.len()), u32::try_from(value.len())) else {
                continue;
            };
            body.extend_from_slice(&key_length.to_le_bytes());
            body.extend_from_slice(key);
            body.extend_from_slice(&value_length.to_le_bytes());
            body.extend_from_slice(value);
        }
        drop(state);
        let _ = write_pack(dir, &body);
    }
}

impl CacheStore for FunctionStore {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        self.looked_up.fetch_add(1, Ordering::Relaxed);
        let found = self.state().find(key)?.to_vec();
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(Cow::Owned(found))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let mut state = self.state();
        if state.find(key).is_none() && state.compiled.insert(key.to_vec(), value).is_none() {
            state.unwritten.push(key.to_vec());
        }
        true
    }
}

fn checksum(body: &[u8]) -> [u8; CHECKSUM_BYTES] {
    xxhash_rust::xxh3::xxh3_128(body).to_le_bytes()
}

/// Writes `body` as a pack in `dir`, named by its checksum.
fn write_pack(dir: &Path, body: &[u8]) -> std::io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let sum = checksum(body);
    let name: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    let mut file = tempfile::Builder::new().prefix(".pack-").suffix(".tmp").tempfile_in(dir)?;
    file.write_all(body)?;
    file.write_all(&sum)?;
    file.write_all(MAGIC)?;
    file.persist(dir.join(format!("{name}.pack"))).map_err(|e| e.error)?;
    Ok(())
}

/// Maps every sound pack in `dir` and indexes its functions; a pack that does not check is
/// removed.
fn read_packs(dir: &Path, state: &mut State) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "pack") {
            continue;
        }
        // SAFETY: packs are written whole under a temporary name and renamed into place, in
        // a directory private to this user, and never written again; what is mapped is
        // checked against its checksum before any of it is used.
        let mapped = crate::files::open_regular(&path).ok().and_then(|file| unsafe { memmap2::Mmap::map(&file) }.ok());
        match mapped.as_ref().and_then(|pack| index_pack(pack)) {
            Some(functions) => {
                let pack = state.packs.len();
                for (key, code) in functions {
                    let key = mapped.as_ref().map(|m| m[key].to_vec()).unwrap_or_default();
                    state.packed.entry(key).or_insert((pack, code));
                }
                state.packs.extend(mapped);
            }
            None => {
                let _ = fs::remove_file(&path);
            }
        }
    }
}

/// Where each function's key and code are in a pack, or `None` when its bytes are not a
/// whole, unchanged pack.
fn index_pack(stored: &[u8]) -> Option<Vec<(Range<usize>, Range<usize>)>> {
    let rest = stored.strip_suffix(MAGIC.as_slice())?;
    let (body, sum) = rest.split_at_checked(rest.len().checked_sub(CHECKSUM_BYTES)?)?;
    if checksum(body) != sum {
        return None;
    }
    let mut functions = Vec::new();
    let mut at: usize = 0;
    let mut field = |width: usize| -> Option<Range<usize>> {
        let length = body.get(at..at.checked_add(width)?)?;
        let length = length.iter().rev().fold(0usize, |n, byte| (n << 8) | usize::from(*byte));
        let start = at + width;
        let end = start.checked_add(length).filter(|end| *end <= body.len())?;
        at = end;
        Some(start..end)
    };
    while let Some(key) = field(2) {
        functions.push((key, field(4)?));
    }
    (at == body.len()).then_some(functions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_in(dir: &Path) -> FunctionStore {
        let store = FunctionStore::in_cache(dir);
        store.serve(7);
        store
    }

    #[test]
    fn functions_compiled_in_one_process_are_reused_in_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let first = store_in(dir.path());
        assert!(first.get(b"key-a").is_none());
        first.insert(b"key-a", b"code a".to_vec());
        assert_eq!(first.get(b"key-a").as_deref(), Some(&b"code a"[..]), "reused before it is written");
        first.write_pack();
        let next = store_in(dir.path());
        assert_eq!(next.get(b"key-a").as_deref(), Some(&b"code a"[..]));
        assert_eq!(next.get(b"key-b"), None);
        assert_eq!(next.reused(), FunctionsReused { looked_up: 2, reused: 1 });
    }

    #[test]
    fn another_engines_packs_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let first = store_in(dir.path());
        first.insert(b"key-a", b"code a".to_vec());
        first.write_pack();
        let other = FunctionStore::in_cache(dir.path());
        other.serve(8);
        assert_eq!(other.get(b"key-a"), None);
    }

    #[test]
    fn a_pack_changed_anywhere_is_removed_and_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let first = store_in(dir.path());
        first.insert(b"key-a", b"code a".to_vec());
        first.insert(b"key-b", b"code b".to_vec());
        first.write_pack();
        let packs = || fs::read_dir(dir.path().join("functions").join(format!("{:016x}", 7))).unwrap().count();
        assert_eq!(packs(), 1);
        let pack = fs::read_dir(dir.path().join("functions").join(format!("{:016x}", 7)))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let sound = fs::read(&pack).unwrap();
        for at in [0, 3, sound.len() / 2, sound.len() - 1] {
            let mut changed = sound.clone();
            changed[at] ^= 0x01;
            fs::write(&pack, &changed).unwrap();
            assert_eq!(store_in(dir.path()).get(b"key-a"), None, "byte {at} changed");
            assert_eq!(packs(), 0, "byte {at} changed: the pack is removed");
            fs::write(&pack, &sound).unwrap();
        }
        assert_eq!(store_in(dir.path()).get(b"key-b").as_deref(), Some(&b"code b"[..]));
    }

    #[test]
    fn nothing_new_writes_no_pack() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        store.write_pack();
        assert!(!dir.path().join("functions").exists());
    }
}
