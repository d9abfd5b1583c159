//! Each module's plugin built by its language's toolchain ([`cargo`], [`node`], [`python`]),
//! then loaded on this host before anything is placed: what every toolchain's build shares.

mod cargo;
mod node;
mod python;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::catalogue::sha256_hex;

use super::source::ModuleSource;
use super::source_identity::source_identity;
use crate::commands::language::Language;

/// A plugin built from its source and loaded on this host.
#[derive(Debug)]
pub struct Built {
    /// What was built.
    pub source: ModuleSource,
    /// The component the toolchain made.
    pub artefact: PathBuf,
    /// Its sha256, hex.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Builds `source` with its language's toolchain and loads the build on `host` (so a plugin
/// of another world, or none, is refused before it is placed; the compiled form is cached
/// for the runs that follow). Builds go under `shared_target`, the catalogue's one build
/// directory: cargo's target directory, and a directory per language for the others.
/// `locked` builds from lock files only and writes none.
pub fn build(host: &PluginHost, source: ModuleSource, shared_target: &Path, locked: bool) -> Result<Built> {
    let artefact = match source.language {
        Language::Rust => cargo::build(&source, shared_target, locked)?,
        language => {
            let out = std::path::absolute(shared_target.join(language.name()).join(format!("{}.wasm", source.module)))?;
            ignore_in_git(shared_target);
            std::fs::create_dir_all(out.parent().expect("a file in a directory"))
                .with_context(|| format!("failed to create `{}`", out.display()))?;
            // A build that fails must not leave the last one to be taken for its output.
            let _ = std::fs::remove_file(&out);
            match language {
                Language::JavaScript => node::build(&source, &out, locked)?,
                _ => python::build(&source, &out, locked)?,
            }
            if !out.is_file() {
                bail!(
                    "the {} toolchain reported success but wrote no component to `{}`",
                    language.name(),
                    out.display()
                );
            }
            out
        }
    };
    let mut artefact = artefact;
    let mut bytes = std::fs::read(&artefact).with_context(|| format!("failed to read `{}`", artefact.display()))?;
    // A toolchain whose builds differ run to run marks each with what it was built from: a
    // placed plugin built from the same source is this build, kept as it is, so neither a
    // rebuild nor a check in another checkout sees a change where there is none.
    if let Some(identity) = source_identity(&bytes).map(str::to_string)
        && let Ok(placed) = std::fs::read(&source.plugin_path)
        && source_identity(&placed) == Some(identity.as_str())
    {
        crate::errln!("{} is built from the same source as the placed plugin ({identity}): kept", source.module);
        artefact = source.plugin_path.clone();
        bytes = placed;
    }
    let digest = sha256_hex(&bytes);
    let loaded = host.load_pinned(&artefact, Some(&digest)).with_context(|| {
        format!("the `{}` module's build `{}` does not load on this host", source.module, artefact.display())
    })?;
    // Compiled here, where the author waits on a toolchain anyway, so that no run waits.
    if let Some(took) = loaded.code.compiled
        && host.has_cache()
    {
        crate::errln!(
            "compiled {} to {} code in {:.1} s; runs take it from the compile cache",
            source.module,
            loaded.code.kind,
            took.as_secs_f64()
        );
    }
    Ok(Built { source, artefact, digest, size: bytes.len() as u64 })
}

/// The nearest `relative` path at or above `dir`: where a package manager or a virtual
/// environment put a tool for the project in `dir` (a workspace's is above its members).
fn find_up(dir: &Path, relative: &str) -> Option<PathBuf> {
    dir.ancestors().map(|at| at.join(relative)).find(|candidate| candidate.is_file())
}

/// Whether `file` was changed after `than` was (a file missing on either side: no).
fn newer(file: &Path, than: &Path) -> bool {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    matches!((modified(file), modified(than)), (Some(file), Some(than)) if file > than)
}

/// Runs a toolchain's command, its output shown as it comes (on stderr, beside the build's
/// own progress, so the command's stdout stays the list of what was placed).
fn run_tool(mut command: Command, what: &str) -> Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    command.stdout(std::process::Stdio::from(std::io::stderr()));
    let status = crate::interrupts::run_child(&mut command, false)
        .map(|done| done.status)
        .with_context(|| format!("failed to run `{program}`, which {what}"))?;
    if !status.success() {
        bail!("`{program}` failed ({status}); it {what}, and its messages are above");
    }
    Ok(())
}

/// Keeps the shared build directory out of the catalogue's commits, without editing the
/// catalogue's own `.gitignore`.
fn ignore_in_git(target: &Path) {
    let ignore = target.join(".gitignore");
    if !ignore.exists() && std::fs::create_dir_all(target).is_ok() {
        let _ = std::fs::write(ignore, "# Made by `mesh-adopt build`: everything here is a build product.\n*\n");
    }
}
