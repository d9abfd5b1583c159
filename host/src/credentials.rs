//! Genesis credentials, read by the host from one directory and never beyond it.
//!
//! The directory is opened once as a capability (cap-std): a name with `..`, an absolute
//! path or a symlink pointing outside cannot reach anything else on the machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::mesh::SecretValue;

/// The credentials directory of a run, or why there is none.
pub struct Credentials {
    path: PathBuf,
    dir: Result<Dir, String>,
    /// Every value handed to a plugin so far, so any text can be scrubbed of them. Keyed by
    /// name and value, so a credential read on every site of a fleet is held once.
    handed_out: Mutex<BTreeMap<(String, Vec<u8>), SecretValue>>,
}

impl Credentials {
    /// Opens `path`; a missing directory is reported when a credential is first asked for,
    /// since plugins that need none should still run.
    pub fn open(path: &Path) -> Credentials {
        let dir = Dir::open_ambient_dir(path, ambient_authority())
            .map_err(|e| format!("the credentials directory `{}` cannot be opened: {e}", path.display()));
        Credentials { path: path.to_path_buf(), dir, handed_out: Mutex::new(BTreeMap::new()) }
    }

    /// Reads credential `name`. Names are plain file names inside the directory.
    pub fn read(&self, name: &str) -> Result<SecretValue, String> {
        let dir = self.dir.as_ref().map_err(Clone::clone)?;
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(format!("`{name}` is not a credential name: names are plain file names"));
        }
        let bytes = dir.read(name).map_err(|e| format!("no credential `{name}` in `{}` ({e})", self.path.display()))?;
        let trimmed = bytes.strip_suffix(b"\n").map(<[u8]>::to_vec).unwrap_or(bytes);
        let value = SecretValue { name: name.to_string(), bytes: trimmed };
        self.handed_out
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((name.to_string(), value.bytes.clone()), value.clone());
        Ok(value)
    }

    /// `text` with the value of every credential handed out replaced by its name, and the
    /// name of the first one found, if any.
    pub fn redact(&self, text: &str) -> (String, Option<String>) {
        let mut scrubbed = text.to_string();
        let mut found = None;
        for secret in self.handed_out.lock().unwrap_or_else(|p| p.into_inner()).values() {
            let Ok(value) = std::str::from_utf8(&secret.bytes) else { continue };
            if value.is_empty() || !scrubbed.contains(value) {
                continue;
            }
            scrubbed = scrubbed.replace(value, &format!("<secret {}>", secret.name));
            found.get_or_insert_with(|| secret.name.clone());
        }
        (scrubbed, found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_and_refuses_escapes() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("store-superuser"), "pw\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        let credentials = Credentials::open(dir.path());

        // A plain name reads, without the trailing newline.
        assert_eq!(credentials.read("store-superuser").unwrap().bytes, b"pw");
        // Traversal and paths are refused by name.
        assert!(credentials.read("../secret").unwrap_err().contains("not a credential name"));
        // A symlink out of the directory is refused by the capability.
        assert!(credentials.read("link").is_err());
    }

    #[test]
    fn redacts_values_handed_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "hunter2-long").unwrap();
        let credentials = Credentials::open(dir.path());
        // Nothing is redacted before the value has been handed out.
        assert_eq!(credentials.redact("say hunter2-long").1, None);
        credentials.read("pw").unwrap();
        assert_eq!(credentials.redact("say hunter2-long"), ("say <secret pw>".to_string(), Some("pw".into())));
    }

    #[test]
    fn a_missing_directory_is_named() {
        let credentials = Credentials::open(Path::new("/nonexistent/credentials"));
        assert!(credentials.read("x").unwrap_err().contains("/nonexistent/credentials"));
    }
}
