//! Reading and writing the files a run touches, so that none can hold it: each is opened
//! without blocking and checked as opened, and bounded before it is read.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

/// Reads a file of at most `limit` bytes, refusing a larger one before reading it.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::io::Read;
        let file = open_regular(path)?;
        // Refused before reading, where the file says its size.
        let size = file.metadata()?.len();
        if size > limit {
            bail!("it is {size} bytes, larger than the {limit} bytes allowed");
        }
        let mut bytes = Vec::new();
        file.take(limit + 1).read_to_end(&mut bytes)?;
        within_bound(&bytes, limit)?;
        Ok(bytes)
    })
}

/// Opens `path` to read, refusing anything but a regular file (symlinks followed). The open
/// itself never waits (a FIFO's writer, a device), and what is checked is the file opened,
/// so nothing put in place after a look can hold the program either.
pub fn open_regular(path: &Path) -> Result<std::fs::File, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
        if !file.metadata()?.is_file() {
            bail!("`{}` is not a regular file", path.display());
        }
        Ok(file)
    })
}

/// Refuses a file the catalogue points to that leaves its `modules/` through a link: a plugin
/// or a manifest linked to `../../genesis/credentials/…` would have its digest shown and
/// recorded. A path not there yet is left to the read that follows.
pub(crate) fn inside(root: &Path, path: &Path) -> Result<()> {
    // `modules/` itself is held to the catalogue too: a `modules` that is a link out of it is
    // no more the catalogue's than a plugin linked out of it.
    let anchored = root.parent().and_then(|top| Some(top.canonicalize().ok()?.join(root.file_name()?)));
    let (Some(root), Ok(resolved)) = (anchored, path.canonicalize()) else { return Ok(()) };
    if resolved.starts_with(&root) {
        return Ok(());
    }
    bail!(
        "it leads, through a link, to `{}`, outside the catalogue's modules `{}`: what a module ships stays there",
        resolved.display(),
        root.display()
    )
}

/// Refuses to write `what` to anything but a regular file or a path not there yet: a FIFO
/// nobody reads would hold the writer forever, and a device (`/dev/full`) is no record.
pub fn output_file(path: &Path, what: &str) -> Result<(), crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::os::unix::fs::FileTypeExt;
        let Ok(meta) = std::fs::metadata(path) else {
            // Not there yet: its directory must be, or the output could not be made at the end.
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !dir.is_dir() {
                bail!("`{}` cannot be written: its directory `{}` does not exist", path.display(), dir.display());
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
        bail!("`{}` is {named}: {what} is written only to a regular file", path.display())
    })
}

/// Opens `path` to write `what` to, made readable by this user only and emptied: refused,
/// naming it, when it is anything but a regular file, even one put there after
/// [`output_file`] looked, since the open itself never waits for a FIFO's reader.
pub fn create_output(path: &Path, what: &str) -> Result<std::fs::File, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        output_file(path, what)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .with_context(|| format!("failed to open `{}` to write {what} to", path.display()))?;
        let meta = file.metadata().with_context(|| format!("failed to look at `{}`", path.display()))?;
        if !meta.is_file() {
            bail!("`{}` is not a regular file: {what} is written only to a regular file", path.display());
        }
        // Emptied only once known to be a regular file; one that was already there becomes
        // this user's only, as a new one is.
        file.set_len(0).with_context(|| format!("failed to empty `{}`", path.display()))?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("failed to make `{}` this user's only", path.display()))?;
        Ok(file)
    })
}

/// Refuses a document of more than `limit` bytes: what [`read_bounded`] holds a file to,
/// for one already in memory.
pub fn within_bound(bytes: &[u8], limit: u64) -> Result<(), crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        if bytes.len() as u64 > limit {
            bail!("it is larger than the {limit} bytes allowed");
        }
        Ok(())
    })
}
