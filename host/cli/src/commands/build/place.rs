//! The end of every build: the new plugin and its pinned manifest staged beside the files
//! they replace, then placed, every module staged before any is placed; and, for `--check`,
//! the comparison of what is placed with what the source builds to.

use std::path::Path;

use anyhow::{Context as _, Result};

use mesh_adopt_runtime::catalogue::MANIFEST_BYTES;
use mesh_adopt_runtime::catalogue::sha256_hex;
use mesh_adopt_runtime::files::read_bounded;

use super::toolchain::Built;

/// What `--check` found of one module.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The placed plugin is the source's build, and pinned.
    Matches,
    /// It is not: the words say what differs and what to run.
    Stale(String),
}

/// A module's new plugin, and its manifest with the new pin, written beside the ones they
/// replace and not yet in their place: every module is staged before any is placed, so a
/// directory that cannot be written to stops the build with nothing changed.
pub struct Staged<'a> {
    /// What was built.
    built: &'a Built,
    /// The new plugin, in the module's directory.
    plugin: tempfile::NamedTempFile,
    /// The manifest with the new pin, when the pin changes.
    manifest: Option<tempfile::NamedTempFile>,
}

/// A file written in `dir` to replace `replacing`, with its permissions (a new file's are
/// 0644: the plugin and manifest are read by whoever builds or runs the catalogue).
fn staged_file(dir: &Path, replacing: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt as _;
    let failed = || format!("failed to write in `{}`", dir.display());
    let mut file = tempfile::Builder::new().prefix(".staged-").tempfile_in(dir).with_context(failed)?;
    std::io::Write::write_all(file.as_file_mut(), bytes).with_context(failed)?;
    let mode = std::fs::metadata(replacing).map_or(0o644, |m| m.permissions().mode() & 0o777);
    file.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).with_context(failed)?;
    Ok(file)
}

/// Stages `built`'s plugin and, with `pin` and a pin that changes, its manifest.
pub fn stage(built: &Built, pin: bool) -> Result<Staged<'_>> {
    let source = &built.source;
    let dir = source.plugin_path.parent().context("a plugin lives in its module's directory")?;
    let bytes =
        std::fs::read(&built.artefact).with_context(|| format!("failed to read `{}`", built.artefact.display()))?;
    let plugin = staged_file(dir, &source.plugin_path, &bytes)?;
    let manifest = if pin && source.pin.as_deref() != Some(built.digest.as_str()) {
        let text = String::from_utf8(read_bounded(&source.manifest_path, MANIFEST_BYTES)?)
            .with_context(|| format!("`{}` is not UTF-8", source.manifest_path.display()))?;
        let pinned = super::pin::with_pin(&text, &built.digest)
            .with_context(|| format!("failed to pin the plugin in `{}`", source.manifest_path.display()))?;
        Some(staged_file(dir, &source.manifest_path, pinned.as_bytes())?)
    } else {
        None
    };
    Ok(Staged { built, plugin, manifest })
}

impl Staged<'_> {
    /// Puts the plugin, then the manifest, in place; if the manifest cannot be, the old
    /// plugin is put back, so the module is left whole either way. Returns whether the pin
    /// changed.
    pub fn place(self) -> Result<bool> {
        let source = &self.built.source;
        let dir = source.plugin_path.parent().context("a plugin lives in its module's directory")?;
        // Kept to put back: the plugin is replaced in one rename, and never missing meanwhile.
        let previous = self.manifest.is_some().then(|| std::fs::read(&source.plugin_path).ok()).flatten();
        self.plugin
            .persist(&source.plugin_path)
            .map_err(|e| e.error)
            .with_context(|| format!("failed to place `{}`", source.plugin_path.display()))?;
        let Some(manifest) = self.manifest else { return Ok(false) };
        if let Err(e) = manifest.persist(&source.manifest_path) {
            let restored = match previous {
                Some(bytes) => staged_file(dir, &source.plugin_path, &bytes)
                    .and_then(|old| old.persist(&source.plugin_path).map_err(|e| e.error.into()))
                    .is_ok(),
                None => std::fs::remove_file(&source.plugin_path).is_ok(),
            };
            let left = if restored { "the old plugin was put back" } else { "the new plugin stays, unpinned" };
            return Err(e.error).with_context(|| {
                format!("failed to write the pin into `{}` ({left})", source.manifest_path.display())
            });
        }
        Ok(true)
    }
}

/// Compares what is placed and pinned with what the source builds to.
pub fn verdict(built: &Built, pin: bool) -> Verdict {
    let source = &built.source;
    let module = &source.module;
    let placed = std::fs::read(&source.plugin_path).ok().map(|bytes| sha256_hex(&bytes));
    let mut wrong = Vec::new();
    match &placed {
        None => wrong.push(format!("`{}` is missing", source.plugin_path.display())),
        Some(digest) if digest != &built.digest => {
            wrong.push(format!("`{}` is sha256 {digest}", source.plugin_path.display()))
        }
        Some(_) => {}
    }
    match &source.pin {
        None if pin => wrong.push(format!("`{}` pins no sha256", source.manifest_path.display())),
        // Even unpinned builds are refused by a pin that is there and wrong.
        Some(p) if p != &built.digest => wrong.push(format!("`{}` pins {p}", source.manifest_path.display())),
        _ => {}
    }
    if wrong.is_empty() {
        Verdict::Matches
    } else {
        Verdict::Stale(format!(
            "the `{module}` module's source `{}` builds to sha256 {}, but {}: run `mesh-adopt build {module}`",
            source.source.display(),
            built.digest,
            wrong.join(", and ")
        ))
    }
}
