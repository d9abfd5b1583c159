//! The key saved plans digest credentials with. A plan file says that the credentials it was
//! made with are still the same without saying anything a guess could be checked against: the
//! digest is an HMAC-SHA256 under a random key kept beside the user's state, never in the plan
//! file, so a weak password cannot be recovered from a plan file by trying words. A plan taken
//! to another machine (or user) meets another key and says it cannot check the credentials.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, Mac as _};
use sha2::{Digest as _, Sha256};

/// The key's length: as long as SHA-256's block needs to be no weaker than the hash.
const KEY_BYTES: usize = 32;

/// The file, in the key's directory, that holds it.
const KEY_FILE: &str = "plan-key";

/// Why the plan key cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PlanKeyError {
    /// The system refused a step of making, looking at or reading the key.
    #[error("failed to {step} `{}`", path.display())]
    Io {
        /// The key or its directory.
        path: PathBuf,
        /// The step, as `failed to …` goes on.
        step: &'static str,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The key or its directory is not this user's only.
    #[error(
        "{what} `{}` is not private to this user (owner {owner}, mode {mode:o}): a key others can read or \
         replace checks guesses at a saved plan's credentials; make it this user's only (`chmod go-rwx`) or \
         remove it, and make plans again",
        path.display()
    )]
    NotPrivate {
        /// `the plan key` or `the plan key's directory`.
        what: &'static str,
        /// It.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// Its permission bits.
        mode: u32,
    },
    /// The key file is not a regular file of the key's length.
    #[error(
        "the plan key `{}` is not a file of {KEY_BYTES} bytes: remove it and a new one is made (plans saved \
         with the old one must then be made again)",
        path.display()
    )]
    Malformed {
        /// It.
        path: PathBuf,
    },
    /// The key changed or vanished while it was read.
    #[error("the plan key `{}` changed as it was read", path.display())]
    Moved {
        /// It.
        path: PathBuf,
    },
}

impl PlanKeyError {
    /// What mends it: the key's file, or its directory, to make private or remove.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        let path = match self {
            PlanKeyError::Io { path, .. }
            | PlanKeyError::NotPrivate { path, .. }
            | PlanKeyError::Malformed { path }
            | PlanKeyError::Moved { path } => path.clone(),
        };
        crate::remedy::Remedy::EditFile { path, at: None }
    }
}

/// The error of a step of the key's making or reading that the system refused.
fn io<'a>(path: &'a Path, step: &'static str) -> impl FnOnce(std::io::Error) -> PlanKeyError + 'a {
    move |e| PlanKeyError::Io { path: path.to_path_buf(), step, source: Arc::new(e) }
}

/// A key for the credentials' digests in saved plans.
#[derive(Clone)]
pub struct PlanKey {
    key: [u8; KEY_BYTES],
}

impl std::fmt::Debug for PlanKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key itself is what keeps a plan file's digests from being checked by a guess.
        f.debug_struct("PlanKey").field("id", &self.id()).finish_non_exhaustive()
    }
}

impl PlanKey {
    /// A key for this process only: what a run that saves and applies no plan file digests
    /// with, and what a plan made by another process cannot be checked against.
    pub fn ephemeral() -> PlanKey {
        let mut key = [0; KEY_BYTES];
        rand::fill(&mut key);
        PlanKey { key }
    }

    /// The default place, which this machine's locks are kept under too:
    /// `$XDG_STATE_HOME/mesh-adopt`, else `~/.local/state/mesh-adopt`. As the XDG base
    /// directory specification says, an `XDG_STATE_HOME` that is not an absolute path is
    /// ignored (one relative to the working directory would give two directories two keys and
    /// two sets of locks); so is a `HOME` that is not.
    pub fn default_dir() -> Option<PathBuf> {
        let absolute = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|dir| dir.is_absolute());
        absolute("XDG_STATE_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".local/state")))
            .map(|dir| dir.join("mesh-adopt"))
    }

    /// The key kept in `dir`, made there (readable by this user only) the first time. Two
    /// processes making it at once agree on one: the first to place it wins, the other reads it.
    pub fn open(dir: &Path) -> Result<PlanKey, PlanKeyError> {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(dir, "make the directory of the plan key"))?;
        // Others who can write the directory could put a key of theirs in place.
        private("the plan key's directory", dir, 0o022)?;
        let path = dir.join(KEY_FILE);
        if let Some(key) = Self::read(&path)? {
            return Ok(key);
        }
        let made = PlanKey::ephemeral();
        let mut file =
            tempfile::Builder::new().prefix(".plan-key").tempfile_in(dir).map_err(io(dir, "write the plan key in"))?;
        file.write_all(&made.key).and_then(|()| file.as_file().sync_all()).map_err(io(dir, "write the plan key in"))?;
        match file.persist_noclobber(&path) {
            Ok(_) => Ok(made),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                Self::read(&path)?.ok_or(PlanKeyError::Moved { path })
            }
            Err(e) => Err(io(&path, "place the plan key")(e.error)),
        }
    }

    /// The key at `path`, or none there yet; anything but a regular file of the key's length
    /// is refused, naming it.
    fn read(path: &Path) -> Result<Option<PlanKey>, PlanKeyError> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(path, "read the plan key")(e)),
        };
        // A key others can read checks their guesses at a plan's credentials.
        private("the plan key", path, 0o077)?;
        if !meta.is_file() || meta.len() != KEY_BYTES as u64 {
            return Err(PlanKeyError::Malformed { path: path.to_path_buf() });
        }
        let mut bytes = Vec::new();
        let mut file =
            crate::files::open_regular(path).map_err(|_| PlanKeyError::Moved { path: path.to_path_buf() })?;
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(io(path, "read the plan key"))?;
        let key = bytes.try_into().map_err(|_| PlanKeyError::Moved { path: path.to_path_buf() })?;
        Ok(Some(PlanKey { key }))
    }

    /// Names the key without revealing it: a digest of the key alone, which says whether two
    /// plans were made with one key and, the key being random, nothing about a credential.
    pub fn id(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(b"mesh-adopt plan key id\0");
        hash.update(self.key);
        hex(&hash.finalize()[..8])
    }

    /// The keyed digest of `bytes`, in hex.
    pub fn digest(&self, bytes: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(bytes);
        hex(&mac.finalize().into_bytes())
    }
}

/// Refuses `path` unless this user owns it and none of the permission bits in `others` is
/// set: the key is only as secret as the files that hold it.
fn private(what: &'static str, path: &Path, others: u32) -> Result<(), PlanKeyError> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let meta = std::fs::metadata(path).map_err(io(path, "look at"))?;
    // This process's user owns its /proc entry.
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(meta.uid());
    let mode = meta.permissions().mode() & 0o777;
    if meta.uid() != me || mode & others != 0 {
        return Err(PlanKeyError::NotPrivate { what, path: path.to_path_buf(), owner: meta.uid(), mode });
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let made = PlanKey::open(dir.path()).unwrap();
        let again = PlanKey::open(dir.path()).unwrap();
        assert_eq!(made.id(), again.id());
        assert_eq!(made.digest(b"pw"), again.digest(b"pw"));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(KEY_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the key is this user's only");
    }

    #[test]
    fn two_keys_digest_one_value_differently_and_neither_is_the_plain_hash() {
        let (a, b) = (PlanKey::ephemeral(), PlanKey::ephemeral());
        assert_ne!(a.id(), b.id());
        assert_ne!(a.digest(b"pw"), b.digest(b"pw"));
        let plain = hex(&Sha256::digest(b"pw"));
        assert_ne!(a.digest(b"pw"), plain);
    }

    #[test]
    fn a_key_file_of_the_wrong_size_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), b"short").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.path().join(KEY_FILE), std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = format!("{:#}", PlanKey::open(dir.path()).unwrap_err());
        assert!(error.contains("plan-key") && error.contains("32 bytes"), "{error}");
    }

    #[test]
    fn a_key_or_directory_others_can_read_or_write_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        PlanKey::open(dir.path()).unwrap();
        let key = dir.path().join(KEY_FILE);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = format!("{:#}", PlanKey::open(dir.path()).unwrap_err());
        assert!(error.contains("not private to this user") && error.contains("mode 644"), "{error}");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = format!("{:#}", PlanKey::open(dir.path()).unwrap_err());
        assert!(error.contains("mode 777"), "{error}");
    }

    #[test]
    fn the_debug_form_shows_the_id_not_the_key() {
        let key = PlanKey::ephemeral();
        let shown = format!("{key:?}");
        assert!(shown.contains(&key.id()) && !shown.contains(&hex(&key.key)), "{shown}");
    }
}
