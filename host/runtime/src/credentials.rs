//! Genesis credentials, read by the host from one directory and never beyond it.
//!
//! The directory is opened once as a capability (cap-std): a name with `..`, an absolute
//! path or a symlink pointing outside cannot reach anything else on the machine.
//!
//! A run reads the whole directory once, when its preflight begins
//! ([`Credentials::learn_all`]); from then on what it verifies, digests for a saved plan and
//! hands to plugins is what it read then, so the credential a plugin carries is the one its
//! plan was made and digested from. The next run reads the directory again.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::mesh::SecretValue;

/// The shortest value scrubbed from text: a shorter one cannot be told from ordinary words,
/// and is no secret worth the name.
pub const SCRUBBED_CHARS: usize = 6;

/// The largest credential read: a password or a key, never more.
pub const CREDENTIAL_BYTES: usize = 64 << 10;

/// The credentials directory of a run, or why there is none.
pub struct Credentials {
    path: PathBuf,
    dir: Result<Dir, String>,
    /// Every value known so far, as (name, value), so any text can be scrubbed of them: each
    /// handed to a plugin, and every credential of the directory once [`Credentials::learn_all`]
    /// has read them. Each pair is held once, however many sites of a fleet read it. Only
    /// values that are text are kept: text can only contain those.
    handed_out: Mutex<BTreeSet<(String, String)>>,
    /// Every usable credential's value as [`Credentials::learn_all`] last read it, by name:
    /// what reads are served from until it reads the directory again. A name not in it (not
    /// learnt yet, or not usable when it was) is read from the directory.
    learnt: Mutex<HashMap<String, Vec<u8>>>,
}

impl Credentials {
    /// Opens `path`; a missing directory is reported when a credential is first asked for,
    /// since plugins that need none should still run.
    pub fn open(path: &Path) -> Credentials {
        let dir = Dir::open_ambient_dir(path, ambient_authority())
            .map_err(|e| format!("the credentials directory `{}` cannot be opened: {e}", path.display()));
        Credentials {
            path: path.to_path_buf(),
            dir,
            handed_out: Mutex::new(BTreeSet::new()),
            learnt: Mutex::new(HashMap::new()),
        }
    }

    /// No credentials at all: a run whose plugins need none, or whose installer hands none
    /// over. Any credential asked for is reported missing.
    pub fn none() -> Credentials {
        Credentials {
            path: PathBuf::from("(no credentials)"),
            dir: Err("this run was given no credentials directory".into()),
            handed_out: Mutex::new(BTreeSet::new()),
            learnt: Mutex::new(HashMap::new()),
        }
    }

    /// Reads credential `name`: as the run's [`Credentials::learn_all`] read it, or from the
    /// directory. Names are plain file names inside the directory.
    pub fn read(&self, name: &str) -> Result<SecretValue, String> {
        let trimmed = self.value(name)?;
        self.remember(name, &trimmed);
        Ok(SecretValue { name: name.to_string(), bytes: trimmed })
    }

    /// The value of credential `name` as last learnt, else read from the directory.
    fn value(&self, name: &str) -> Result<Vec<u8>, String> {
        let learnt = self.learnt.lock().unwrap_or_else(|p| p.into_inner()).get(name).cloned();
        match learnt {
            Some(value) => Ok(value),
            None => self.read_value(name),
        }
    }

    fn remember(&self, name: &str, value: &[u8]) {
        if let Ok(text) = std::str::from_utf8(value)
            && text.chars().count() >= SCRUBBED_CHARS
        {
            self.handed_out.lock().unwrap_or_else(|p| p.into_inner()).insert((name.to_string(), text.to_string()));
        }
    }

    /// Reads the value of every credential in the directory, so that none can be shown
    /// anywhere — not only those a plugin asked for: a plugin that learnt a value some other
    /// way, or runs before the module that hands it over, is scrubbed and caught all the
    /// same. Entries that are not credentials (directories, oversized or empty files) are
    /// left alone here; a plugin asking for one is refused by [`Credentials::read`]. The
    /// values read are what the run's reads are served from, until this reads again.
    pub fn learn_all(&self) {
        let mut learnt = HashMap::new();
        if let Ok(dir) = &self.dir
            && let Ok(entries) = dir.entries()
        {
            for entry in entries.flatten() {
                let Some(name) = entry.file_name().to_str().map(String::from) else { continue };
                if let Ok(value) = self.read_value(&name) {
                    self.remember(&name, &value);
                    learnt.insert(name, value);
                }
            }
        }
        *self.learnt.lock().unwrap_or_else(|p| p.into_inner()) = learnt;
    }

    /// Verifies the named credentials as [`Credentials::verify`] does, reading each once, and
    /// gives one digest of them, names and values together (empty for none): what a saved
    /// plan keeps to see that a credential changed, without keeping the credential. The error
    /// names the first credential that cannot be used, and why.
    pub fn verify_all(&self, names: &[String]) -> Result<String, (String, String)> {
        if names.is_empty() {
            return Ok(String::new());
        }
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        let mut bytes = Vec::new();
        for name in sorted {
            let value = self.value(name).map_err(|why| (name.clone(), why))?;
            bytes.extend((name.len() as u64).to_le_bytes());
            bytes.extend(name.as_bytes());
            bytes.extend((value.len() as u64).to_le_bytes());
            bytes.extend(value);
        }
        Ok(crate::catalogue::sha256_hex(&bytes))
    }

    /// Checks that credential `name` can be handed over, without handing it out: what a
    /// run's preflight asks of every credential a manifest grants.
    pub fn verify(&self, name: &str) -> Result<(), String> {
        self.value(name).map(drop)
    }

    /// The credential's bytes without a trailing newline, refusing one that is missing, too
    /// large, or empty (an empty password would be delivered as the server's superuser).
    fn read_value(&self, name: &str) -> Result<Vec<u8>, String> {
        use std::io::Read;
        let dir = self.dir.as_ref().map_err(Clone::clone)?;
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(format!("`{name}` is not a credential name: names are plain file names"));
        }
        let at = || format!("`{}`", self.path.join(name).display());
        // Only a regular file is a credential: opening a FIFO would wait for a writer forever.
        match dir.metadata(name) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(format!("the credential {} is not a regular file", at())),
            Err(e) => return Err(format!("no credential `{name}` in `{}` ({e})", self.path.display())),
        }
        let file = dir.open(name).map_err(|e| format!("no credential `{name}` in `{}` ({e})", self.path.display()))?;
        let mut bytes = Vec::new();
        file.take(CREDENTIAL_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("failed to read {}: {e}", at()))?;
        if bytes.len() > CREDENTIAL_BYTES {
            return Err(format!("the credential {} is larger than the {CREDENTIAL_BYTES} bytes allowed", at()));
        }
        let trimmed = bytes.strip_suffix(b"\n").map(<[u8]>::to_vec).unwrap_or(bytes);
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            return Err(format!("the credential {} is empty or only whitespace", at()));
        }
        Ok(trimmed)
    }

    /// `text` with the value of every credential handed out replaced by its name, and the
    /// name of the first one found, if any. Text without any comes back as it was, unmoved.
    pub fn redact(&self, text: String) -> (String, Option<String>) {
        let handed_out = self.handed_out.lock().unwrap_or_else(|p| p.into_inner());
        let mut scrubbed = text;
        let mut found = None;
        for (name, value) in handed_out.iter() {
            if scrubbed.contains(value.as_str()) {
                scrubbed = scrubbed.replace(value.as_str(), &format!("<secret {name}>"));
                found.get_or_insert_with(|| name.clone());
            }
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
        assert_eq!(credentials.redact("say hunter2-long".into()).1, None);
        credentials.read("pw").unwrap();
        assert_eq!(credentials.redact("say hunter2-long".into()), ("say <secret pw>".to_string(), Some("pw".into())));
    }

    #[test]
    fn refuses_empty_whitespace_and_oversized_credentials() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        std::fs::write(dir.path().join("blank"), " \t\n").unwrap();
        std::fs::write(dir.path().join("huge"), vec![b'x'; CREDENTIAL_BYTES + 1]).unwrap();
        let credentials = Credentials::open(dir.path());
        for name in ["empty", "blank"] {
            assert!(credentials.verify(name).unwrap_err().contains("empty or only whitespace"), "{name}");
        }
        assert!(credentials.read("huge").unwrap_err().contains("larger than"));
    }

    #[test]
    fn every_credential_of_the_directory_is_redacted_once_learnt() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("never-asked-for"), "s3cret-value\n").unwrap();
        let credentials = Credentials::open(dir.path());
        credentials.learn_all();
        let (text, found) = credentials.redact("leaked s3cret-value".into());
        assert_eq!((text.as_str(), found.as_deref()), ("leaked <secret never-asked-for>", Some("never-asked-for")));
    }

    #[test]
    fn a_run_reads_what_it_learnt_until_it_learns_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "first-value\n").unwrap();
        let credentials = Credentials::open(dir.path());
        credentials.learn_all();
        let digest = credentials.verify_all(&["pw".into()]).unwrap();
        // Changed on disk during the run: the run hands over and digests what it learnt.
        std::fs::write(dir.path().join("pw"), "second-value\n").unwrap();
        assert_eq!(credentials.read("pw").unwrap().bytes, b"first-value");
        assert_eq!(credentials.verify_all(&["pw".into()]).unwrap(), digest);
        // The next run learns the new value, and a removed credential is gone with it.
        credentials.learn_all();
        assert_eq!(credentials.read("pw").unwrap().bytes, b"second-value");
        assert_ne!(credentials.verify_all(&["pw".into()]).unwrap(), digest);
        std::fs::remove_file(dir.path().join("pw")).unwrap();
        credentials.learn_all();
        assert!(credentials.read("pw").unwrap_err().contains("no credential `pw`"));
    }

    #[test]
    fn a_fifo_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let credentials = Credentials::open(dir.path());
        assert!(credentials.verify("pipe").unwrap_err().contains("not a regular file"));
    }

    #[test]
    fn a_missing_directory_is_named() {
        let credentials = Credentials::open(Path::new("/nonexistent/credentials"));
        assert!(credentials.read("x").unwrap_err().contains("/nonexistent/credentials"));
    }
}
