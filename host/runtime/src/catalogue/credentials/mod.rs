//! Genesis credentials, read by the host from one directory and never beyond it.
//!
//! The directory is opened once as a capability (cap-std): a name with `..`, an absolute
//! path or a symlink pointing outside cannot reach anything else on the machine. A scenario
//! reads the directory once into memory ([`CredentialValues`]), or gives values of its own,
//! and every run of it checks them as a run checks files.
//!
//! A run reads all its credentials once, when its preflight begins
//! ([`Credentials::learn_all`]); from then on what it verifies, digests for a saved plan and
//! hands to plugins is what it read then, so the credential a plugin carries is the one its
//! plan was made and digested from. The next run reads them again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::catalogue::plan_key::PlanKey;

mod redact;

/// A credential's bytes, held by the host. Its `Debug` never shows the value, so it cannot
/// reach a log by accident.
#[derive(Clone)]
pub struct SecretValue {
    /// The credential's name, safe to show.
    pub name: String,
    /// The value; only a mesh backend delivering it may read this.
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretValue({}, <redacted>)", self.name)
    }
}

/// The shortest value scrubbed from text: a shorter one cannot be told from ordinary words,
/// and is no secret worth the name.
pub const SCRUBBED_CHARS: usize = 6;

/// The largest credential read: a password or a key, never more.
pub const CREDENTIAL_BYTES: usize = 64 << 10;

/// What messages name as the directory of a run given no credentials.
const NO_DIRECTORY: &str = "(no credentials)";

/// Why a credential cannot be used, naming it and where it was looked for.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// A name that is not a plain file name.
    #[error("`{name}` is not a credential name: names are plain file names")]
    NotAName {
        /// The name.
        name: String,
    },
    /// A table that names something that is not a credential's name.
    #[error("`{key}` names `{}`, which is not a credential name: names are plain file names", name.escape_debug())]
    GivenName {
        /// The table's key.
        key: String,
        /// The name.
        name: String,
    },
    /// The run was given no credentials.
    #[error("this run was given no credentials directory")]
    NoneGiven,
    /// The directory cannot be opened.
    #[error("the credentials directory `{}` cannot be opened: {error}", path.display())]
    NoDirectory {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// The directory cannot be listed.
    #[error("the credentials directory `{}` cannot be read: {error}", path.display())]
    Unlisted {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// No such credential.
    #[error("no credential `{name}` in {within}{}", error.as_ref().map_or(String::new(), |e| format!(" ({e})")))]
    Missing {
        /// The credential.
        name: String,
        /// Where it was looked for, as a message names it.
        within: String,
        /// What the system said, when it said anything.
        error: Option<Arc<std::io::Error>>,
    },
    /// Not a regular file.
    #[error("the credential {at} is not a regular file")]
    NotRegular {
        /// The credential, as a message names it.
        at: String,
    },
    /// Its file could not be read.
    #[error("failed to read {at}: {error}")]
    Unreadable {
        /// The credential, as a message names it.
        at: String,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// Larger than a credential may be.
    #[error("the credential {at} is larger than the {CREDENTIAL_BYTES} bytes allowed")]
    TooLarge {
        /// The credential, as a message names it.
        at: String,
    },
    /// Empty: an empty password would be delivered as a server's superuser.
    #[error("the credential {at} is empty or only whitespace")]
    Empty {
        /// The credential, as a message names it.
        at: String,
    },
}

/// A credential a manifest grants that cannot be used: which, and why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("credential `{name}`, which cannot be used: {error}")]
pub struct GrantedCredentialError {
    /// The credential's name.
    pub name: String,
    /// Why it cannot be used.
    pub error: CredentialError,
}

impl CredentialError {
    /// What mends it: the credential, or its directory, put right where it is.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        let path = match self {
            CredentialError::NoneGiven => {
                return crate::remedy::Remedy::SetOption {
                    option: "--credentials".into(),
                    must: "the genesis credentials the catalogue's grants name".into(),
                };
            }
            CredentialError::NoDirectory { path, .. } | CredentialError::Unlisted { path, .. } => path.clone(),
            CredentialError::Missing { name, within, .. } => PathBuf::from(within.trim_matches('`')).join(name),
            CredentialError::NotRegular { at }
            | CredentialError::Unreadable { at, .. }
            | CredentialError::TooLarge { at }
            | CredentialError::Empty { at } => PathBuf::from(at.trim_matches('`')),
            CredentialError::NotAName { name } => PathBuf::from(name),
            CredentialError::GivenName { key, .. } => PathBuf::from(key),
        };
        crate::remedy::Remedy::EditFile { path, at: None }
    }
}

/// The credentials of a run: a directory, or values already in memory (a scenario's), and
/// every value handed out so far.
pub struct Credentials {
    source: Source,
    /// Every value known so far, as (name, value), so any text can be scrubbed of them: each
    /// handed to a plugin, and every credential of the directory once [`Credentials::learn_all`]
    /// has read them. Each pair is held once, however many sites of a fleet read it. Only
    /// values that are text are kept: text can only contain those.
    handed_out: Mutex<BTreeSet<(String, String)>>,
    /// What the last [`Credentials::learn_all`] could not read; see [`Credentials::unreadable`].
    unreadable: Mutex<Vec<(String, CredentialError)>>,
    /// Every usable credential's value as [`Credentials::learn_all`] last read it, by name:
    /// what reads are served from until it reads again. A name not in it (not learnt yet, or
    /// not usable when it was) is read from the source.
    learnt: Mutex<HashMap<String, Vec<u8>>>,
}

/// Where a run's credentials are read from.
enum Source {
    /// A directory, opened once as a capability, or why it could not be.
    Directory { path: PathBuf, dir: Result<Dir, CredentialError> },
    /// Values read earlier or given, checked as a file's would be when asked for.
    Memory(CredentialValues),
}

/// Credentials held in memory: each as the bytes its file held (read no further than a
/// file would be) or why it cannot be read, and where they came from, for messages. Cheap to
/// clone: a sweep hands one set to every run of a scenario.
#[derive(Debug, Clone)]
pub struct CredentialValues {
    origin: Origin,
    values: Arc<Result<BTreeMap<String, Stored>, CredentialError>>,
}

/// One credential held in memory: the bytes its file held, or why it could not be read.
type Stored = Result<Vec<u8>, CredentialError>;

/// Where credentials held in memory came from, as messages name them.
#[derive(Debug, Clone)]
enum Origin {
    /// Read from this directory.
    Directory(PathBuf),
    /// Given by a document's table, e.g. a scenario's `mesh.credentials`.
    Table { file: PathBuf, key: String },
}

impl CredentialValues {
    /// Reads every credential of the directory at `path` through the same capability a run
    /// uses, each as far as a run would read it: what fails to read (a directory, a FIFO, a
    /// symlink out of it) is kept as the reason, given when that credential is asked for, as
    /// is a directory that cannot be opened.
    pub fn read_dir(path: &Path) -> CredentialValues {
        let directory = Credentials::open(path);
        let values = directory
            .names()
            .map(|names| names.into_iter().map(|name| (name.clone(), directory.read_raw(&name))).collect());
        CredentialValues { origin: Origin::Directory(path.to_path_buf()), values: Arc::new(values) }
    }

    /// Credentials given as text by the table `key` of `file` (a scenario's `mesh.credentials`),
    /// refusing a name that could not be a file in a credentials directory.
    pub fn given(
        file: &Path,
        key: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<CredentialValues, CredentialError> {
        if let Some(bad) = values.keys().find(|name| !plain_name(name)) {
            return Err(CredentialError::GivenName { key: key.to_string(), name: bad.clone() });
        }
        Ok(CredentialValues {
            origin: Origin::Table { file: file.to_path_buf(), key: key.to_string() },
            values: Arc::new(Ok(values.iter().map(|(n, v)| (n.clone(), Ok(v.as_bytes().to_vec()))).collect())),
        })
    }
}

/// No credential `name` in the directory at `path`, as the system said.
fn missing(name: &str, path: &Path, error: std::io::Error) -> CredentialError {
    CredentialError::Missing {
        name: name.to_string(),
        within: format!("`{}`", path.display()),
        error: Some(Arc::new(error)),
    }
}

/// Whether `name` could be a file directly inside a credentials directory.
fn plain_name(name: &str) -> bool {
    !(name.is_empty() || name.contains(['/', '\\']) || name == "." || name == "..")
}

impl Credentials {
    /// Opens `path`; a missing directory is reported when a credential is first asked for,
    /// since plugins that need none should still run.
    pub fn open(path: &Path) -> Credentials {
        let dir = Dir::open_ambient_dir(path, ambient_authority())
            .map_err(|e| CredentialError::NoDirectory { path: path.to_path_buf(), error: Arc::new(e) });
        Credentials::from_source(Source::Directory { path: path.to_path_buf(), dir })
    }

    /// No credentials at all: a run whose plugins need none, or whose installer hands none
    /// over. Any credential asked for is reported missing.
    pub fn none() -> Credentials {
        Credentials::from_source(Source::Directory {
            path: PathBuf::from(NO_DIRECTORY),
            dir: Err(CredentialError::NoneGiven),
        })
    }

    fn from_source(source: Source) -> Credentials {
        Credentials {
            source,
            handed_out: Mutex::new(BTreeSet::new()),
            unreadable: Mutex::new(Vec::new()),
            learnt: Mutex::new(HashMap::new()),
        }
    }

    /// Credentials read from memory, checked when asked for exactly as files are (present, a
    /// regular file, not empty, at most 64 KiB), with nothing handed out yet.
    pub fn in_memory(values: CredentialValues) -> Credentials {
        Credentials::from_source(Source::Memory(values))
    }

    /// The directory the credentials are read from, as it was given; `None` when there is
    /// none ([`Credentials::none`], or values held in memory). A run's record names it.
    pub(crate) fn directory(&self) -> Option<&Path> {
        match &self.source {
            Source::Directory { path, .. } if path.as_os_str() != NO_DIRECTORY => Some(path),
            _ => None,
        }
    }

    /// Reads credential `name`: as the run's [`Credentials::learn_all`] read it, or from the
    /// source. Names are plain file names inside the directory.
    pub fn read(&self, name: &str) -> Result<SecretValue, CredentialError> {
        let trimmed = self.value(name)?;
        self.remember(name, &trimmed);
        Ok(SecretValue { name: name.to_string(), bytes: trimmed })
    }

    /// The value of credential `name` as last learnt, else read from the source.
    fn value(&self, name: &str) -> Result<Vec<u8>, CredentialError> {
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
        let mut unreadable = Vec::new();
        for name in self.names().unwrap_or_default() {
            match self.read_value(&name) {
                Ok(value) => {
                    self.remember(&name, &value);
                    learnt.insert(name, value);
                }
                // A directory or an empty file holds no value to keep from being shown.
                Err(_) if self.is_directory(&name) => {}
                Err(CredentialError::Empty { .. }) => {}
                Err(why) => unreadable.push((name, why)),
            }
        }
        *self.learnt.lock().unwrap_or_else(|p| p.into_inner()) = learnt;
        *self.unreadable.lock().unwrap_or_else(|p| p.into_inner()) = unreadable;
    }

    /// The entries [`Credentials::learn_all`] found but could not read as credentials (a FIFO,
    /// a link leading out of the directory, a file too large), with why: whatever value they
    /// hold cannot be kept from being shown, so a program refuses to run beside them.
    pub fn unreadable(&self) -> Vec<(String, CredentialError)> {
        self.unreadable.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A credential whose value is part of a credential's name (its own or another's), with
    /// that name: a name is shown wherever a value is redacted, in the host's words and in a
    /// plugin's calls, so such a value cannot be kept from being shown.
    pub fn value_in_a_name(&self) -> Option<(String, String)> {
        let handed_out = self.handed_out.lock().unwrap_or_else(|p| p.into_inner());
        handed_out.iter().find_map(|(credential, value)| {
            handed_out
                .iter()
                .find(|(name, _)| name.contains(value.as_str()))
                .map(|(name, _)| (credential.clone(), name.clone()))
        })
    }

    fn is_directory(&self, name: &str) -> bool {
        match &self.source {
            Source::Directory { dir: Ok(dir), .. } => dir.metadata(name).is_ok_and(|m| m.is_dir()),
            _ => false,
        }
    }

    /// The name of every entry there is, credential or not, or why they cannot be listed.
    fn names(&self) -> Result<Vec<String>, CredentialError> {
        match &self.source {
            Source::Directory { path, dir } => {
                let entries = dir
                    .as_ref()
                    .map_err(Clone::clone)?
                    .entries()
                    .map_err(|e| CredentialError::Unlisted { path: path.clone(), error: Arc::new(e) })?;
                Ok(entries.flatten().filter_map(|entry| entry.file_name().to_str().map(String::from)).collect())
            }
            Source::Memory(given) => {
                Ok(given.values.as_ref().as_ref().map_err(Clone::clone)?.keys().cloned().collect())
            }
        }
    }

    /// Verifies the named credentials as [`Credentials::verify`] does, reading each once, and
    /// gives one digest of them under `key`, names and values together (empty for none): what
    /// a saved plan keeps to see that a credential changed, without keeping the credential or
    /// anything a guess could be checked against. The error names the first credential that
    /// cannot be used, and why.
    pub fn verify_all(&self, names: &[String], key: &PlanKey) -> Result<String, GrantedCredentialError> {
        if names.is_empty() {
            return Ok(String::new());
        }
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        let mut bytes = Vec::new();
        for name in sorted {
            let value = self.value(name).map_err(|error| GrantedCredentialError { name: name.clone(), error })?;
            bytes.extend((name.len() as u64).to_le_bytes());
            bytes.extend(name.as_bytes());
            bytes.extend((value.len() as u64).to_le_bytes());
            bytes.extend(value);
        }
        Ok(key.digest(&bytes))
    }

    /// Checks that credential `name` can be handed over, without handing it out: what a
    /// run's preflight asks of every credential a manifest grants.
    pub fn verify(&self, name: &str) -> Result<(), CredentialError> {
        self.value(name).map(drop)
    }

    /// The credential's bytes without a trailing newline, refusing one that is missing, too
    /// large, or empty (an empty password would be delivered as the server's superuser).
    fn read_value(&self, name: &str) -> Result<Vec<u8>, CredentialError> {
        let bytes = self.read_raw(name)?;
        if bytes.len() > CREDENTIAL_BYTES {
            return Err(CredentialError::TooLarge { at: self.at(name) });
        }
        let trimmed = bytes.strip_suffix(b"\n").map(<[u8]>::to_vec).unwrap_or(bytes);
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            return Err(CredentialError::Empty { at: self.at(name) });
        }
        Ok(trimmed)
    }

    /// The credential's bytes as stored, at most one more than [`CREDENTIAL_BYTES`], refusing
    /// a name that is not a plain file name and, in a directory, anything but a regular file.
    fn read_raw(&self, name: &str) -> Result<Vec<u8>, CredentialError> {
        use std::io::Read;
        if !plain_name(name) {
            return Err(CredentialError::NotAName { name: name.to_string() });
        }
        let (path, dir) = match &self.source {
            Source::Directory { path, dir } => (path, dir.as_ref().map_err(Clone::clone)?),
            Source::Memory(given) => {
                let values = given.values.as_ref().as_ref().map_err(Clone::clone)?;
                return match values.get(name) {
                    Some(value) => value.clone(),
                    None => {
                        Err(CredentialError::Missing { name: name.to_string(), within: self.within(), error: None })
                    }
                };
            }
        };
        // Only a regular file is a credential: opening a FIFO would wait for a writer forever.
        match dir.metadata(name) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(CredentialError::NotRegular { at: self.at(name) }),
            Err(e) => return Err(missing(name, path, e)),
        }
        let file = dir.open(name).map_err(|e| missing(name, path, e))?;
        let mut bytes = Vec::new();
        file.take(CREDENTIAL_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CredentialError::Unreadable { at: self.at(name), error: Arc::new(e) })?;
        Ok(bytes)
    }

    /// Where the credentials are, as a message names it.
    fn within(&self) -> String {
        match &self.source {
            Source::Directory { path, .. }
            | Source::Memory(CredentialValues { origin: Origin::Directory(path), .. }) => {
                format!("`{}`", path.display())
            }
            Source::Memory(CredentialValues { origin: Origin::Table { file, key }, .. }) => {
                format!("`{key}` of `{}`", file.display())
            }
        }
    }

    /// Credential `name`, as a message names it: its file, or its key in the table it came from.
    fn at(&self, name: &str) -> String {
        match &self.source {
            Source::Directory { path, .. }
            | Source::Memory(CredentialValues { origin: Origin::Directory(path), .. }) => {
                format!("`{}`", path.join(name).display())
            }
            Source::Memory(CredentialValues { origin: Origin::Table { file, key }, .. }) => {
                format!("`{name}` (`{key}` of `{}`)", file.display())
            }
        }
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
        assert!(credentials.read("../secret").unwrap_err().to_string().contains("not a credential name"));
        // A symlink out of the directory is refused by the capability.
        assert!(credentials.read("link").is_err());
    }

    #[test]
    fn refuses_empty_whitespace_and_oversized_credentials() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        std::fs::write(dir.path().join("blank"), " \t\n").unwrap();
        std::fs::write(dir.path().join("huge"), vec![b'x'; CREDENTIAL_BYTES + 1]).unwrap();
        let credentials = Credentials::open(dir.path());
        for name in ["empty", "blank"] {
            assert!(credentials.verify(name).unwrap_err().to_string().contains("empty or only whitespace"), "{name}");
        }
        assert!(credentials.read("huge").unwrap_err().to_string().contains("larger than"));
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
    fn a_fifo_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let credentials = Credentials::open(dir.path());
        assert!(credentials.verify("pipe").unwrap_err().to_string().contains("not a regular file"));
    }

    #[test]
    fn credentials_read_into_memory_are_checked_as_files_are() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside-value").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("good"), "a-good-value\n").unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        std::fs::write(dir.path().join("blank"), " \t\n").unwrap();
        std::fs::write(dir.path().join("huge"), vec![b'x'; CREDENTIAL_BYTES + 1]).unwrap();
        std::fs::create_dir(dir.path().join("subdir")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(dir.path().join("pipe")).status().unwrap().success());
        let on_disk = Credentials::open(dir.path());
        let in_memory = Credentials::in_memory(CredentialValues::read_dir(dir.path()));
        for name in ["good", "empty", "blank", "huge", "subdir", "link", "pipe", "../secret"] {
            let disk = on_disk.read(name).map(|v| v.bytes).map_err(|e| e.to_string());
            let memory = in_memory.read(name).map(|v| v.bytes).map_err(|e| e.to_string());
            assert_eq!(disk, memory, "{name}");
        }
        assert_eq!(in_memory.read("good").unwrap().bytes, b"a-good-value");
        let absent = in_memory.verify("absent").unwrap_err().to_string();
        assert_eq!(absent, format!("no credential `absent` in `{}`", dir.path().display()));
        assert!(in_memory.verify("huge").unwrap_err().to_string().contains("larger than"));
        // Every credential is learnt for redaction, as from the directory.
        in_memory.learn_all();
        assert_eq!(in_memory.redact("a-good-value".into()).1.as_deref(), Some("good"));
    }

    #[test]
    fn a_directory_that_cannot_be_opened_is_named_from_memory_too() {
        let values = CredentialValues::read_dir(Path::new("/nonexistent/credentials"));
        let err = Credentials::in_memory(values).read("x").unwrap_err().to_string();
        assert!(err.contains("the credentials directory `/nonexistent/credentials` cannot be opened"), "{err}");
    }

    #[test]
    fn credentials_given_by_a_table_name_it_and_its_file() {
        let file = Path::new("plugins/postgres/scenarios/given.toml");
        let given = BTreeMap::from([("pw".to_string(), "a-given-value\n".to_string()), ("blank".into(), " ".into())]);
        let credentials = Credentials::in_memory(CredentialValues::given(file, "mesh.credentials", &given).unwrap());
        assert_eq!(credentials.read("pw").unwrap().bytes, b"a-given-value");
        let blank = credentials.verify("blank").unwrap_err().to_string();
        assert_eq!(
            blank,
            "the credential `blank` (`mesh.credentials` of `plugins/postgres/scenarios/given.toml`) is empty or only \
             whitespace"
        );
        let absent = credentials.verify("absent").unwrap_err().to_string();
        assert_eq!(absent, "no credential `absent` in `mesh.credentials` of `plugins/postgres/scenarios/given.toml`");
        let escaping = BTreeMap::from([("../pw".to_string(), "value".to_string())]);
        let refused = CredentialValues::given(file, "mesh.credentials", &escaping).unwrap_err().to_string();
        assert!(refused.contains("`../pw`, which is not a credential name"), "{refused}");
    }

    #[test]
    fn a_missing_directory_is_named() {
        let credentials = Credentials::open(Path::new("/nonexistent/credentials"));
        assert!(credentials.read("x").unwrap_err().to_string().contains("/nonexistent/credentials"));
    }

    #[test]
    fn a_run_reads_what_it_learnt_until_it_learns_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "first-value\n").unwrap();
        let credentials = Credentials::open(dir.path());
        credentials.learn_all();
        let key = PlanKey::ephemeral();
        let digest = credentials.verify_all(&["pw".into()], &key).unwrap();
        // Changed on disk during the run: the run hands over and digests what it learnt.
        std::fs::write(dir.path().join("pw"), "second-value\n").unwrap();
        assert_eq!(credentials.read("pw").unwrap().bytes, b"first-value");
        assert_eq!(credentials.verify_all(&["pw".into()], &key).unwrap(), digest);
        // The next run learns the new value, and a removed credential is gone with it.
        credentials.learn_all();
        assert_eq!(credentials.read("pw").unwrap().bytes, b"second-value");
        assert_ne!(credentials.verify_all(&["pw".into()], &key).unwrap(), digest);
        std::fs::remove_file(dir.path().join("pw")).unwrap();
        credentials.learn_all();
        assert!(credentials.read("pw").unwrap_err().to_string().contains("no credential `pw`"));
    }
}
