//! The compile cache: plugins compiled once to native code and kept on disk, so a plugin
//! adopted on hundreds of sites pays Cranelift once.
//!
//! An entry is keyed by the plugin's sha256 and the engine's compatibility hash (wasmtime's
//! version, target and settings), and stored with a 128-bit XXH3 checksum of its own bytes:
//! the directory is private, so the checksum guards against corruption, not forgery, and a
//! fast one keeps a cache hit well under a millisecond. Only this host
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

fn checksum(bytes: &[u8]) -> [u8; CHECKSUM_BYTES] {
    xxhash_rust::xxh3::xxh3_128(bytes).to_le_bytes()
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

    fn entry(&self, engine: &Engine, digest: &str) -> PathBuf {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        self.dir.join(format!("{digest}-{:016x}.cwasm", hasher.finish()))
    }

    /// The component for the plugin with sha256 `digest`, if a sound entry exists.
    pub fn get(&self, engine: &Engine, digest: &str) -> Result<Component, Miss> {
        let path = self.entry(engine, digest);
        let Ok(stored) = fs::read(&path) else { return Err(Miss::Absent) };
        // Layout: the 16-byte checksum of what follows, then the precompiled bytes.
        if stored.len() < CHECKSUM_BYTES {
            return Err(Miss::Corrupt);
        }
        let (sum, bytes) = stored.split_at(CHECKSUM_BYTES);
        if sum != checksum(bytes) {
            return Err(Miss::Corrupt);
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
        file.write_all(&checksum(precompiled))?;
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
}
