//! `mesh-adopt build`: each module's plugin built from the source its manifest names, loaded
//! on this host before it is placed, then placed beside the manifest and pinned in it.
//! `--check` builds the same way and only compares, for a catalogue's CI.
//!
//! A source is a Rust crate, a JavaScript package or a Python project, told by the project
//! file it holds; each is built by its own toolchain ([`cargo`], [`node`], [`python`]) and
//! every build ends the same way: loaded on this host, then staged and placed ([`place`]).
//!
//! Every module asked for is built and loaded before any is placed, so a build that fails
//! half-way through a catalogue leaves every module as it was.

mod cargo;
mod node;
mod place;
mod python;

pub use place::{Verdict, stage, verdict};

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::{
    Catalogue, MANIFEST_BYTES, MANIFEST_FILE, files::read_bounded, manifest::ModuleManifest, sha256_hex,
};

use crate::language::Language;

/// One module's plugin as its manifest describes it: where its source is and where the
/// build goes.
#[derive(Debug)]
pub struct ModuleSource {
    /// The module's name.
    pub module: String,
    /// Its manifest, which names the source and holds the pin.
    pub manifest_path: PathBuf,
    /// The source's directory (holding its language's project file).
    pub source: PathBuf,
    /// The language the source is in.
    pub language: Language,
    /// Where the plugin is placed: the manifest's `adopt.plugin`, beside it.
    pub plugin_path: PathBuf,
    /// The sha256 the manifest pins, if it pins one.
    pub pin: Option<String>,
}

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

/// The modules of `catalogue` whose manifests name a source, sorted, each located: what
/// `build` builds when no module is named.
pub fn modules_with_source(catalogue: &Catalogue) -> Result<Vec<ModuleSource>> {
    let names = catalogue.module_names().with_context(|| {
        format!(
            "the catalogue `{}` has no `modules/` directory: run `mesh-adopt build` from the catalogue's top \
                 directory, or pass `--catalogue DIR`",
            catalogue.root().display()
        )
    })?;
    let mut with_source = Vec::new();
    for name in names {
        match locate(catalogue, &name) {
            Ok(source) => with_source.push(source),
            // Shipped prebuilt: nothing to build. Any other problem is the author's to see.
            Err(e) if e.downcast_ref::<NoSource>().is_some() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(with_source)
}

/// A manifest that names no source: a module shipped prebuilt, which `build` with no module
/// named passes over.
#[derive(Debug)]
pub struct NoSource {
    /// The module.
    module: String,
    /// Its manifest, where the source would be named.
    manifest: PathBuf,
}

impl std::fmt::Display for NoSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the `{}` module's manifest `{}` names no source to build its plugin from: add `\"source\": \"DIR\"` \
             to its `adopt` section, the plugin's crate directory relative to the manifest",
            self.module,
            self.manifest.display()
        )
    }
}

impl std::error::Error for NoSource {}

/// Reads `module`'s manifest for its source, its plugin's place and its pin. A manifest that
/// names no source, or a source that is not a crate, is refused with what to write.
pub fn locate(catalogue: &Catalogue, module: &str) -> Result<ModuleSource> {
    mesh_adopt_runtime::check_module_name(module)?;
    let dir = lexically_normal(&catalogue.root().join("modules").join(module));
    let manifest_path = dir.join(MANIFEST_FILE);
    if !manifest_path.is_file() {
        bail!(
            "the catalogue `{}` has no module `{module}` (no `{}`); it has {}",
            catalogue.root().display(),
            manifest_path.display(),
            catalogue.module_names().map_or_else(
                || "no modules: run `mesh-adopt build` from the catalogue's top directory, or pass `--catalogue DIR`"
                    .to_string(),
                |names| names.join(", ")
            )
        );
    }
    let bytes = read_bounded(&manifest_path, MANIFEST_BYTES)?;
    let manifest = ModuleManifest::parse(&bytes)
        .with_context(|| format!("the `{module}` module's manifest `{}` is malformed", manifest_path.display()))?;
    let adopt = manifest.adopt;
    let Some(source) = adopt.source.filter(|s| !s.trim().is_empty()) else {
        return Err(NoSource { module: module.to_string(), manifest: manifest_path }.into());
    };
    if Path::new(&source).is_absolute() {
        bail!(
            "the `{module}` module's manifest `{}` names the source `{source}`, an absolute path: name it relative to \
             the manifest, so the catalogue builds wherever it is checked out",
            manifest_path.display()
        );
    }
    let source_dir = lexically_normal(&dir.join(&source));
    let language = Language::of_source(&source_dir).map_err(|why| {
        anyhow::anyhow!(
            "the `{module}` module's source `{}` (its manifest's `adopt.source`) {why}",
            source_dir.display()
        )
    })?;
    Ok(ModuleSource {
        module: module.to_string(),
        language,
        plugin_path: dir.join(&adopt.plugin),
        source: source_dir,
        manifest_path,
        pin: adopt.sha256.map(|p| p.trim().to_ascii_lowercase()),
    })
}

/// `path` with each `dir/..` taken out, without touching the disk: `catalogue/modules/nats/../../../plugins/nats`
/// is shown as `plugins/nats`.
pub fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if matches!(normal.components().next_back(), Some(Component::Normal(_))) => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    if normal.as_os_str().is_empty() { PathBuf::from(".") } else { normal }
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

/// The name of the custom section the JavaScript and Python SDKs' build commands add to a
/// component: `sha256:<hex>` of everything it was built from.
pub const SOURCE_SECTION: &str = "mesh-adopt:source";

/// What `component` says it was built from: its last [`SOURCE_SECTION`], if it has one.
/// Reads only the framing (wasmparser's, the top level's custom sections); anything that is
/// not framed as a binary has none.
pub fn source_identity(component: &[u8]) -> Option<&str> {
    if !component.starts_with(b"\0asm") {
        return None;
    }
    mesh_adopt_runtime::top_level_custom_sections(component)?
        .into_iter()
        .rev()
        .filter(|(name, _)| *name == SOURCE_SECTION)
        .find_map(|(_, payload)| std::str::from_utf8(payload).ok().filter(|p| p.starts_with("sha256:")))
}

/// The nearest `relative` path at or above `dir`: where a package manager or a virtual
/// environment put a tool for the project in `dir` (a workspace's is above its members).
fn find_up(dir: &Path, relative: &str) -> Option<PathBuf> {
    dir.ancestors().map(|at| at.join(relative)).find(|candidate| candidate.is_file())
}

/// Directories under a plugin's source that hold what tools made, or its scenarios, not the
/// code a build reads.
const NOT_SOURCE: &[&str] = &["target", "node_modules", ".venv", "__pycache__", ".git", "dist", "build", "scenarios"];

/// The most files of a source looked at for a change: a source tree bigger than this is not
/// a plugin's, and a warning is not worth walking it.
const SOURCE_FILES_LOOKED_AT: usize = 10_000;

/// A file of `source`'s own changed after its placed plugin was written, if there is one: the
/// plugin in place was built from an older source (or a build since failed), so a test of it
/// would not test what the source now says.
pub fn changed_since_built(source: &ModuleSource) -> Option<PathBuf> {
    let placed = std::fs::metadata(&source.plugin_path).and_then(|m| m.modified()).ok()?;
    let mut pending = vec![source.source.clone()];
    let mut looked_at = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            looked_at += 1;
            if looked_at > SOURCE_FILES_LOOKED_AT {
                return None;
            }
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name();
            if kind.is_dir() && !NOT_SOURCE.iter().any(|skip| name == *skip) {
                pending.push(entry.path());
            } else if kind.is_file()
                && !name.to_string_lossy().ends_with(".md")
                && entry.metadata().and_then(|m| m.modified()).is_ok_and(|changed| changed > placed)
            {
                return Some(entry.path());
            }
        }
    }
    None
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
    let status = command
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A component's preamble, then sections of (id, content).
    fn binary(sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        for (id, content) in sections {
            bytes.push(*id);
            let mut size = content.len();
            loop {
                let byte = (size & 0x7f) as u8;
                size >>= 7;
                bytes.push(if size == 0 { byte } else { byte | 0x80 });
                if size == 0 {
                    break;
                }
            }
            bytes.extend(content);
        }
        bytes
    }

    fn custom(name: &str, payload: &str) -> (u8, Vec<u8>) {
        let mut content = vec![name.len() as u8];
        content.extend(name.as_bytes());
        content.extend(payload.as_bytes());
        (0, content)
    }

    #[test]
    fn reads_the_source_section_wherever_it_is_among_the_sections() {
        let identity = format!("sha256:{}", "ab".repeat(32));
        // A core module nested in the component, and sections of other names around it.
        let module = (1, b"\0asm\x01\0\0\0".to_vec());
        let big = custom("other", &"7".repeat(300));
        let component =
            binary(&[module.clone(), big.clone(), custom("x", "y"), custom(SOURCE_SECTION, &identity), big, module]);
        assert_eq!(source_identity(&component), Some(identity.as_str()));
        assert_eq!(source_identity(&binary(&[custom("name", "x")])), None);
    }

    #[test]
    fn a_binary_cut_short_or_not_wasm_has_none() {
        let component = binary(&[custom(SOURCE_SECTION, "sha256:00")]);
        assert!(source_identity(&component).is_some());
        assert_eq!(source_identity(&component[..component.len() - 1]), None);
        assert_eq!(source_identity(b"not wasm"), None);
        assert_eq!(source_identity(&binary(&[custom(SOURCE_SECTION, "md5:00")])), None);
    }
}
