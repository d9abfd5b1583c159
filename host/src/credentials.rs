//! Genesis credentials, read by the host from one directory and never beyond it.
//!
//! The directory is opened once as a capability (cap-std): a name with `..`, an absolute
//! path or a symlink pointing outside cannot reach anything else on the machine.

use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::mesh::SecretValue;

/// The credentials directory of a run, or why there is none.
pub struct Credentials {
    path: PathBuf,
    dir: Result<Dir, String>,
}

impl Credentials {
    /// Opens `path`; a missing directory is reported when a credential is first asked for,
    /// since plugins that need none should still run.
    pub fn open(path: &Path) -> Credentials {
        let dir = Dir::open_ambient_dir(path, ambient_authority()).map_err(|e| {
            format!(
                "the credentials directory `{}` cannot be opened: {e}",
                path.display()
            )
        });
        Credentials {
            path: path.to_path_buf(),
            dir,
        }
    }

    /// Reads credential `name`. Names are plain file names inside the directory.
    pub fn read(&self, name: &str) -> Result<SecretValue, String> {
        let dir = self.dir.as_ref().map_err(Clone::clone)?;
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(format!(
                "`{name}` is not a credential name: names are plain file names"
            ));
        }
        let bytes = dir
            .read(name)
            .map_err(|e| format!("no credential `{name}` in `{}` ({e})", self.path.display()))?;
        let trimmed = bytes
            .strip_suffix(b"\n")
            .map(<[u8]>::to_vec)
            .unwrap_or(bytes);
        Ok(SecretValue {
            name: name.to_string(),
            bytes: trimmed,
        })
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
        assert!(
            credentials
                .read("../secret")
                .unwrap_err()
                .contains("not a credential name")
        );
        // A symlink out of the directory is refused by the capability.
        assert!(credentials.read("link").is_err());
    }

    #[test]
    fn a_missing_directory_is_named() {
        let credentials = Credentials::open(Path::new("/nonexistent/credentials"));
        assert!(
            credentials
                .read("x")
                .unwrap_err()
                .contains("/nonexistent/credentials")
        );
    }
}
