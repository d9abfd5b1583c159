//! Keeping what a command writes (a record, a plan) off what it reads: an output that is an
//! input, inside one, or another name for one's bytes would change the very inputs the run
//! is checked against.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// Refuses an output that is, or is inside, one of `inputs`, and two outputs that are one
/// file; each output is named by its option. `last` names the inputs beyond the catalogue's
/// modules, the foundation and the credentials.
pub fn refuse_overwriting(outputs: &[(&str, Option<&Path>)], inputs: &[PathBuf], last: &str) -> Result<()> {
    let given: Vec<(&str, &Path)> = outputs.iter().filter_map(|(o, p)| p.map(|p| (*o, p))).collect();
    if let [(first, a), (second, b)] = given.as_slice()
        && (resolved(a) == resolved(b) || same_file(a, b))
    {
        bail!("{first} and {second} name the same file `{}`: give each its own", a.display());
    }
    for (option, output) in given {
        let Some(written) = resolved(output) else { continue };
        if let Some(input) = inputs.iter().find(|i| resolved(i).is_some_and(|i| written.starts_with(&i))) {
            bail!(
                "{option} `{}` is one of this run's inputs (`{}`): choose a file outside the catalogue's \
                 modules, the foundation, the credentials, {last}",
                output.display(),
                input.display()
            );
        }
        // A hard link is another name for an input's bytes: writing it would change the input.
        if let Some(input) = inputs.iter().find(|i| holds_file(i, output)) {
            bail!(
                "{option} `{}` is the same file as one of this run's inputs (in `{}`): choose a file outside \
                 the catalogue's modules, the foundation, the credentials, {last}",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Whether two paths that exist are one file (device and inode), whatever their names.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether the existing file `output` is `input` or a file in it (searched two levels deep,
/// as deep as a catalogue's modules go).
fn holds_file(input: &Path, output: &Path) -> bool {
    if same_file(input, output) {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(input) else { return false };
    entries.flatten().any(|entry| {
        let path = entry.path();
        same_file(&path, output)
            || (path.is_dir()
                && std::fs::read_dir(&path).is_ok_and(|inner| inner.flatten().any(|e| same_file(&e.path(), output))))
    })
}

/// `path` made absolute with its existing part's links resolved, so two spellings of one file
/// compare equal; `None` when not even its directory exists.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}
