//! What a plugin file hashes to, remembered by the file's identity, so that a warm start
//! neither reads nor hashes a plugin it has seen: an 18 MB Python plugin costs its sha256
//! once, not on every run.
//!
//! A file's identity is its device, inode, size, and modification and change times. A file
//! replaced or rewritten has another: the change time moves on every write and cannot be
//! set back by the file's owner, so a rewrite cannot pass for the file that was hashed. The
//! records live in the compile cache's private directory, one small file per plugin path,
//! written whole and renamed into place. A file changed in the same clock tick as it was
//! hashed could keep its times, so a file is remembered across processes only once its times
//! are a few seconds old (as git treats its index).

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileIdentity {
    device: u64,
    inode: u64,
    size: u64,
    modified_ns: i128,
    changed_ns: i128,
}

/// How old a file's times must be before its digest is remembered across processes: longer
/// than any file system's timestamp grain.
const SETTLED: Duration = Duration::from_secs(2);

/// The largest digest record read: a path and a line of fields, far below this.
const RECORD_BYTES: u64 = 64 << 10;

impl FileIdentity {
    /// The identity of the file `m` describes.
    pub(crate) fn of(m: &fs::Metadata) -> FileIdentity {
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        FileIdentity {
            device: m.dev(),
            inode: m.ino(),
            size: m.size(),
            modified_ns: ns(m.mtime(), m.mtime_nsec()),
            changed_ns: ns(m.ctime(), m.ctime_nsec()),
        }
    }

    /// Whether no write could still land within the same timestamps: both times at least
    /// [`SETTLED`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(UNIX_EPOCH) else { return false };
        let before = i128::try_from(now.saturating_sub(SETTLED).as_nanos()).unwrap_or(i128::MAX);
        self.modified_ns <= before && self.changed_ns <= before
    }

    /// The record's first line: the identity's fields, then the digest.
    fn line(&self, digest: &str) -> String {
        let FileIdentity { device, inode, size, modified_ns, changed_ns } = self;
        format!("{device} {inode} {size} {modified_ns} {changed_ns} {digest}")
    }
}

/// The records of one compile cache directory.
#[derive(Debug, Clone)]
pub(crate) struct DigestIndex {
    dir: PathBuf,
}

impl DigestIndex {
    /// The index kept in `cache_dir/digests`.
    pub(crate) fn in_cache(cache_dir: &Path) -> DigestIndex {
        DigestIndex { dir: cache_dir.join("digests") }
    }

    /// The record's file for `path`: named by a hash of the path, which the record repeats,
    /// so two paths whose names collide never answer for each other.
    fn record(&self, path: &Path) -> Option<(PathBuf, String)> {
        let path = std::path::absolute(path).ok()?.to_str()?.to_string();
        let name = format!("{:016x}.digest", xxhash_rust::xxh3::xxh3_64(path.as_bytes()));
        Some((self.dir.join(name), path))
    }

    /// The sha256 `path` had when it last had `identity`, if it was recorded.
    pub(crate) fn recall(&self, path: &Path, identity: &FileIdentity) -> Option<crate::model::digest::Sha256> {
        let (record, path) = self.record(path)?;
        let text = String::from_utf8(crate::files::read_bounded(&record, RECORD_BYTES).ok()?).ok()?;
        let (line, recorded_path) = text.split_once('\n')?;
        let (fields, digest) = line.rsplit_once(' ')?;
        let sound = recorded_path.strip_suffix('\n') == Some(path.as_str())
            && format!("{fields} {digest}") == identity.line(digest)
            && !digest.bytes().any(|b| b.is_ascii_uppercase());
        sound.then(|| crate::model::digest::Sha256::parse(digest)).flatten()
    }

    /// Records that `path`, with `identity`, hashes to `digest`. Best effort: an index that
    /// cannot be written only means the file is hashed again next time.
    pub(crate) fn remember(&self, path: &Path, identity: &FileIdentity, digest: &str) {
        if !identity.settled(SystemTime::now()) {
            return;
        }
        let Some((record, path)) = self.record(path) else { return };
        let written = (|| -> std::io::Result<()> {
            fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir)?;
            let mut file = tempfile::Builder::new().prefix(".digest-").tempfile_in(&self.dir)?;
            write!(file, "{}\n{path}\n", identity.line(digest))?;
            file.persist(&record).map_err(|e| e.error)?;
            Ok(())
        })();
        let _ = written;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "3f0e5b1c2d4a6978e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";

    fn settled_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, bytes).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        path
    }

    /// A file whose change time is recent: `set_modified` moves the change time to now, so
    /// only the modification time can be made old, and the identity of such a file is not
    /// settled. The tests that need a settled one age it on the identity instead.
    fn aged(identity: FileIdentity) -> FileIdentity {
        FileIdentity { changed_ns: identity.modified_ns, ..identity }
    }

    #[test]
    fn recalls_a_settled_file_by_path_and_identity() {
        let dir = tempfile::tempdir().unwrap();
        let index = DigestIndex::in_cache(dir.path());
        let plugin = settled_file(dir.path(), "adopt.wasm", b"\0asm");
        let identity = aged(FileIdentity::of(&fs::metadata(&plugin).unwrap()));
        assert_eq!(index.recall(&plugin, &identity), None);
        index.remember(&plugin, &identity, DIGEST);
        assert_eq!(index.recall(&plugin, &identity).as_deref(), Some(DIGEST));
        let other = dir.path().join("elsewhere.wasm");
        assert_eq!(index.recall(&other, &identity), None, "another path is another record");
    }

    #[test]
    fn a_rewritten_file_is_not_recalled() {
        let dir = tempfile::tempdir().unwrap();
        let index = DigestIndex::in_cache(dir.path());
        let plugin = settled_file(dir.path(), "adopt.wasm", b"\0asm");
        let identity = aged(FileIdentity::of(&fs::metadata(&plugin).unwrap()));
        index.remember(&plugin, &identity, DIGEST);
        fs::write(&plugin, b"\0asm another").unwrap();
        let now = FileIdentity::of(&fs::metadata(&plugin).unwrap());
        assert_ne!(now, identity);
        assert_eq!(index.recall(&plugin, &now), None);
    }

    #[test]
    fn a_file_written_just_now_is_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let index = DigestIndex::in_cache(dir.path());
        let plugin = dir.path().join("adopt.wasm");
        fs::write(&plugin, b"\0asm").unwrap();
        let identity = FileIdentity::of(&fs::metadata(&plugin).unwrap());
        index.remember(&plugin, &identity, DIGEST);
        assert_eq!(index.recall(&plugin, &identity), None);
    }

    #[test]
    fn a_garbled_record_is_no_answer() {
        let dir = tempfile::tempdir().unwrap();
        let index = DigestIndex::in_cache(dir.path());
        let plugin = settled_file(dir.path(), "adopt.wasm", b"\0asm");
        let identity = aged(FileIdentity::of(&fs::metadata(&plugin).unwrap()));
        index.remember(&plugin, &identity, DIGEST);
        let (record, _) = index.record(&plugin).unwrap();
        let text = fs::read_to_string(&record).unwrap();
        for garbled in [text.replace(DIGEST, "not-a-digest"), text.replace("adopt.wasm", "other.wasm"), String::new()] {
            fs::write(&record, garbled).unwrap();
            assert_eq!(index.recall(&plugin, &identity), None);
        }
    }
}
