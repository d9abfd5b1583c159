//! Where a module's plugin source is, as its manifest names it: what `build` builds, and
//! what `test` looks at to say a placed plugin is older than its source.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::catalogue::MANIFEST_BYTES;
use mesh_adopt_runtime::catalogue::MANIFEST_FILE;
use mesh_adopt_runtime::{Catalogue, files::read_bounded, manifest::ModuleManifest};

use crate::commands::language::Language;

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
    mesh_adopt_runtime::options::check_module_name(module)?;
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
    // A manifest no run would take is not built for: the catalogue's rule, said as a run says it.
    if let Err(invalid) = manifest.check_valid(&bytes) {
        let whose = format!("the `{module}` module's manifest `{}` {}", manifest_path.display(), invalid.kind());
        return Err(anyhow::anyhow!("{}", invalid.detail()).context(whose));
    }
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
