//! Reading and writing the files a run touches, so that none can hold it: each is opened
//! without blocking and checked as opened, and bounded before it is read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a file could not be read or written as a run needs it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The system refused to open, read or look at it: said in the system's words, after
    /// whatever names the file.
    #[error("{error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: Arc<std::io::Error>,
    },
    /// The system refused a step of writing it: opening, emptying, making it private.
    #[error("{}", step.failed(path))]
    Write {
        /// The file.
        path: PathBuf,
        /// The step.
        step: WriteStep,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// It is a directory, a FIFO, a device or a socket where a regular file is read or written.
    #[error("`{}` is {kind}{}", path.display(), written.as_ref().map_or(String::new(), |w| format!(": {w} is written only to a regular file")))]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead (`a FIFO`).
        kind: &'static str,
        /// What was to be written to it, when it was to be written.
        written: Option<String>,
    },
    /// It is larger than what is read of it.
    #[error("it is {}larger than the {limit} bytes allowed", size.map_or(String::new(), |s| format!("{s} bytes, ")))]
    TooLarge {
        /// Its size, where it says.
        size: Option<u64>,
        /// The most read.
        limit: u64,
    },
    /// An output whose directory does not exist.
    #[error("`{}` cannot be written: its directory `{}` does not exist", path.display(), dir.display())]
    NoDirectory {
        /// The output.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// A file a catalogue points to that leaves its `modules/` through a link.
    #[error(
        "it leads, through a link, to `{}`, outside the catalogue's modules `{}`: what a module ships stays there",
        resolved.display(),
        root.display()
    )]
    OutsideModules {
        /// Where the link leads.
        resolved: PathBuf,
        /// The catalogue's `modules/`.
        root: PathBuf,
    },
}

/// A step of writing an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteStep {
    /// Opening it to write what is named.
    Open(String),
    /// Looking at what was opened.
    LookAt,
    /// Emptying it.
    Empty,
    /// Making it this user's only.
    MakePrivate,
}

impl WriteStep {
    fn failed(&self, path: &Path) -> String {
        let path = path.display();
        match self {
            WriteStep::Open(what) => format!("failed to open `{path}` to write {what} to"),
            WriteStep::LookAt => format!("failed to look at `{path}`"),
            WriteStep::Empty => format!("failed to empty `{path}`"),
            WriteStep::MakePrivate => format!("failed to make `{path}` this user's only"),
        }
    }
}

impl FileError {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
        move |e| FileError::Io { path: path.to_path_buf(), error: Arc::new(e) }
    }

    fn write(path: &Path, step: WriteStep) -> impl FnOnce(std::io::Error) -> FileError + '_ {
        move |e| FileError::Write { path: path.to_path_buf(), step, source: Arc::new(e) }
    }

    /// What mends it: the file named, when one is to blame.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        let path = match self {
            FileError::Io { path, .. }
            | FileError::Write { path, .. }
            | FileError::NotRegular { path, .. }
            | FileError::NoDirectory { path, .. } => path.clone(),
            FileError::OutsideModules { resolved, .. } => resolved.clone(),
            FileError::TooLarge { .. } => return crate::remedy::Remedy::Report,
        };
        crate::remedy::Remedy::EditFile { path, at: None }
    }
}

/// Reads a file of at most `limit` bytes, refusing a larger one before reading it.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    use std::io::Read;
    let file = open_regular(path)?;
    // Refused before reading, where the file says its size.
    let size = file.metadata().map_err(FileError::io(path))?.len();
    if size > limit {
        return Err(FileError::TooLarge { size: Some(size), limit });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(FileError::io(path))?;
    within_bound(&bytes, limit)?;
    Ok(bytes)
}

/// Opens `path` to read, refusing anything but a regular file (symlinks followed). The open
/// itself never waits (a FIFO's writer, a device), and what is checked is the file opened,
/// so nothing put in place after a look can hold the program either.
pub fn open_regular(path: &Path) -> Result<std::fs::File, FileError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(FileError::io(path))?;
    if !file.metadata().map_err(FileError::io(path))?.is_file() {
        return Err(FileError::NotRegular { path: path.to_path_buf(), kind: "not a regular file", written: None });
    }
    Ok(file)
}

/// Refuses a file the catalogue points to that leaves its `modules/` through a link: a plugin
/// or a manifest linked to `../../genesis/credentials/…` would have its digest shown and
/// recorded. A path not there yet is left to the read that follows.
pub(crate) fn inside(root: &Path, path: &Path) -> Result<(), FileError> {
    // `modules/` itself is held to the catalogue too: a `modules` that is a link out of it is
    // no more the catalogue's than a plugin linked out of it.
    let anchored = root.parent().and_then(|top| Some(top.canonicalize().ok()?.join(root.file_name()?)));
    let (Some(root), Ok(resolved)) = (anchored, path.canonicalize()) else { return Ok(()) };
    if resolved.starts_with(&root) {
        return Ok(());
    }
    Err(FileError::OutsideModules { resolved, root })
}

/// Refuses to write `what` to anything but a regular file or a path not there yet: a FIFO
/// nobody reads would hold the writer forever, and a device (`/dev/full`) is no record.
pub fn output_file(path: &Path, what: &str) -> Result<(), FileError> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        // Not there yet: its directory must be, or the output could not be made at the end.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(FileError::NoDirectory { path: path.to_path_buf(), dir: dir.to_path_buf() });
        }
        return Ok(());
    };
    let kind = meta.file_type();
    let named = if meta.is_file() {
        return Ok(());
    } else if meta.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(FileError::NotRegular { path: path.to_path_buf(), kind: named, written: Some(what.to_string()) })
}

/// Opens `path` to write `what` to, made readable by this user only and emptied: refused,
/// naming it, when it is anything but a regular file, even one put there after
/// [`output_file`] looked, since the open itself never waits for a FIFO's reader.
pub fn create_output(path: &Path, what: &str) -> Result<std::fs::File, FileError> {
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    output_file(path, what)?;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(FileError::write(path, WriteStep::Open(what.to_string())))?;
    let meta = file.metadata().map_err(FileError::write(path, WriteStep::LookAt))?;
    if !meta.is_file() {
        let written = Some(what.to_string());
        return Err(FileError::NotRegular { path: path.to_path_buf(), kind: "not a regular file", written });
    }
    // Emptied only once known to be a regular file; one that was already there becomes
    // this user's only, as a new one is.
    file.set_len(0).map_err(FileError::write(path, WriteStep::Empty))?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(FileError::write(path, WriteStep::MakePrivate))?;
    Ok(file)
}

/// Refuses a document of more than `limit` bytes: what [`read_bounded`] holds a file to,
/// for one already in memory.
pub fn within_bound(bytes: &[u8], limit: u64) -> Result<(), FileError> {
    match bytes.len() as u64 > limit {
        true => Err(FileError::TooLarge { size: None, limit }),
        false => Ok(()),
    }
}
