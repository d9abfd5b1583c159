//! The compile cache: plugins compiled once to native code and kept on disk, so a plugin
//! adopted on hundreds of sites pays Cranelift once.
//!
//! An entry is keyed by the plugin's sha256 and the engine's compatibility hash (wasmtime's
//! version, target and settings), starts with that key, and is stored with a 128-bit XXH3
//! checksum of the key and its bytes. An entry whose key is not the one asked for is a miss,
//! so an entry copied over another's is never loaded as that plugin. The directory is
//! private, so the checksum guards against corruption, not forgery, and a fast one keeps a
//! cache hit well under a millisecond. Only this host
//! writes the directory, created private to the user. A missing, stale, corrupt or foreign
//! entry is a miss: the plugin is compiled again and the entry replaced. Nothing is ever
//! loaded from the cache without its checksum matching.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use wasmtime::Engine;
use wasmtime::component::Component;

const CHECKSUM_BYTES: usize = 16;

/// The longest key an entry may start with. The key says what the entry is for (the plugin's
/// sha256 and the engine's compatibility hash) and is written at its head, ended by a
/// newline: an entry copied over another plugin's is then a miss, not that plugin, so the
/// cache can never stand in for a pinned digest.
const KEY_MAX_BYTES: usize = 128;

fn keyed_checksum(key: &[u8], bytes: &[u8]) -> [u8; CHECKSUM_BYTES] {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(key);
    hasher.update(bytes);
    hasher.digest128().to_le_bytes()
}

/// A directory of precompiled plugins.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
}

/// Why an entry was not used; a miss is never an error for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// No entry for this plugin and engine.
    Absent,
    /// The entry's bytes do not match its checksum.
    Corrupt,
    /// The bytes matched but the engine would not take them (another build of the host).
    Incompatible,
    /// A sound entry, but made for another plugin or engine: copied or moved into place.
    OtherKey,
}

impl CompileCache {
    /// Opens (creating if needed) a cache directory private to this user. A directory other
    /// users can write to is refused: anything in it could be native code planted by them.
    pub fn open(dir: &Path) -> Result<CompileCache> {
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
                "the compile cache `{}` is not private to this user (owner {}, mode {:o}); choose another with --cache",
                dir.display(),
                meta.uid(),
                meta.permissions().mode() & 0o777
            );
        }
        Ok(CompileCache { dir: dir.to_path_buf() })
    }

    /// The default place: `$XDG_CACHE_HOME/mesh-adopt`, else `~/.cache/mesh-adopt`.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|base| base.join("mesh-adopt"))
    }

    /// The entry's key: the plugin's digest and the engine's compatibility hash.
    fn key(engine: &Engine, digest: &str) -> String {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        format!("{digest}{:016x}", hasher.finish())
    }

    fn entry(&self, engine: &Engine, digest: &str) -> PathBuf {
        let key = Self::key(engine, digest);
        let (digest, engine) = key.split_at(key.len() - 16);
        self.dir.join(format!("{digest}-{engine}.cwasm"))
    }

    /// The component for the plugin with sha256 `digest`, if a sound entry exists.
    pub fn get(&self, engine: &Engine, digest: &str) -> Result<Component, Miss> {
        let path = self.entry(engine, digest);
        let Ok(stored) = fs::read(&path) else { return Err(Miss::Absent) };
        // Layout: the key, the 16-byte checksum of the key and what follows, then the
        // precompiled bytes.
        let Some(end) = stored.iter().take(KEY_MAX_BYTES).position(|b| *b == b'\n') else {
            return Err(Miss::Corrupt);
        };
        let (key, rest) = (&stored[..end], &stored[end + 1..]);
        if rest.len() < CHECKSUM_BYTES {
            return Err(Miss::Corrupt);
        }
        let (sum, bytes) = rest.split_at(CHECKSUM_BYTES);
        if sum != keyed_checksum(key, bytes) {
            return Err(Miss::Corrupt);
        }
        if key != Self::key(engine, digest).as_bytes() {
            return Err(Miss::OtherKey);
        }
        // SAFETY: these bytes were written by `put` of this host (the directory is private
        // to this user) and match the checksum written with them; wasmtime also checks that
        // they were produced by a compatible engine and refuses them otherwise.
        unsafe { Component::deserialize(engine, bytes) }.map_err(|_| Miss::Incompatible)
    }

    /// Stores precompiled bytes for the plugin with sha256 `digest`, atomically.
    pub fn put(&self, engine: &Engine, digest: &str, precompiled: &[u8]) -> Result<()> {
        let path = self.entry(engine, digest);
        let temporary = path.with_extension(format!("tmp{}", std::process::id()));
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .with_context(|| format!("failed to write `{}`", temporary.display()))?;
        let key = Self::key(engine, digest);
        file.write_all(key.as_bytes())?;
        file.write_all(b"\n")?;
        file.write_all(&keyed_checksum(key.as_bytes(), precompiled))?;
        file.write_all(precompiled)?;
        file.sync_all()?;
        fs::rename(&temporary, &path).with_context(|| format!("failed to write `{}`", path.display()))?;
        Ok(())
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
}
