//! `mesh-adopt build`: each module's plugin built from the source its manifest names, loaded
//! on this host before it is placed, then placed beside the manifest and pinned in it.
//! `--check` builds the same way and only compares, for a catalogue's CI.
//!
//! Every module asked for is built and loaded before any is placed, so a build that fails
//! half-way through a catalogue leaves every module as it was.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::catalogue::{
    Catalogue, MANIFEST_BYTES, MANIFEST_FILE, ModuleManifest, read_bounded, sha256_hex,
};
use mesh_adopt_runtime::runtime::PluginHost;

/// The target every plugin is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// One module's plugin as its manifest describes it: where its source is and where the
/// build goes.
#[derive(Debug)]
pub struct ModuleSource {
    /// The module's name.
    pub module: String,
    /// Its manifest, which names the source and holds the pin.
    pub manifest_path: PathBuf,
    /// The source's crate directory (holding `Cargo.toml`).
    pub source: PathBuf,
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
    /// The component cargo made.
    pub artefact: PathBuf,
    /// Its sha256, hex.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

/// What `--check` found of one module.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The placed plugin is the source's build, and pinned.
    Matches,
    /// It is not: the words say what differs and what to run.
    Stale(String),
}

/// The modules of `catalogue` whose manifests name a source, sorted, each located: what
/// `build` builds when no module is named.
pub fn modules_with_source(catalogue: &Catalogue) -> Result<Vec<ModuleSource>> {
    let names = catalogue
        .module_names()
        .with_context(|| format!("the catalogue `{}` has no `modules/` directory", catalogue.root().display()))?;
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
    module: String,
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
            catalogue.module_names().map_or_else(|| "no modules".to_string(), |names| names.join(", "))
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
    if !source_dir.join("Cargo.toml").is_file() {
        bail!(
            "the `{module}` module's source `{}` (its manifest's `adopt.source`) holds no Cargo.toml: `mesh-adopt \
             build` builds a plugin's crate with cargo",
            source_dir.display()
        );
    }
    Ok(ModuleSource {
        module: module.to_string(),
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

/// Adds the wasm32-wasip2 target to the toolchain that builds in `dir` (a catalogue's
/// `rust-toolchain.toml` chooses it) when rustup manages it and lacks the target. Without
/// rustup, cargo's own error says what is missing.
pub fn ensure_target(dir: &Path) -> Result<()> {
    let Ok(installed) = Command::new("rustup").args(["target", "list", "--installed"]).current_dir(dir).output() else {
        return Ok(());
    };
    if String::from_utf8_lossy(&installed.stdout).lines().any(|l| l.trim() == TARGET) {
        return Ok(());
    }
    crate::errln!("adding the {TARGET} target (rustup target add {TARGET})");
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .current_dir(dir)
        .status()
        .context("failed to run rustup")?;
    if !status.success() {
        bail!("`rustup target add {TARGET}` failed ({status}); plugins are built for {TARGET}");
    }
    Ok(())
}

/// cargo, run in `dir` so that the toolchain a catalogue pins there is the one that builds.
fn cargo_in(dir: &Path) -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.current_dir(dir);
    cargo
}

/// Builds `source`'s crate as a component and loads it on `host` (so a plugin of another
/// world, or none, is refused before it is placed; the compiled form is cached for the runs
/// that follow). A crate of its own shares `shared_target` with the catalogue's other modules,
/// so their common dependencies compile once.
///
/// Unless the author sets their own `RUSTFLAGS`, every local path the build could embed (the
/// cargo home its dependencies are unpacked in, each crate built from a path) is remapped to
/// a fixed name, so the same source and toolchain build the same bytes on any machine and a
/// catalogue's CI can check the pin.
pub fn build(host: &PluginHost, source: ModuleSource, shared_target: &Path, locked: bool) -> Result<Built> {
    let dir = source.source.canonicalize().with_context(|| format!("failed to read `{}`", source.source.display()))?;
    ensure_target(&dir)?;
    let manifest = dir.join("Cargo.toml");
    let mut cargo = cargo_in(&dir);
    cargo
        .args(["build", "--release", "--target", TARGET, "--message-format", "json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(&manifest);
    if locked {
        // A check changes nothing, the lock file included: without one, cargo says so.
        cargo.arg("--locked");
    }
    let layout = CrateLayout::of(&manifest)?;
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        // Relative to where the author ran the command, not to the crate cargo runs in.
        cargo.env("CARGO_TARGET_DIR", std::path::absolute(PathBuf::from(target))?);
    } else if layout.standalone {
        let shared = std::path::absolute(shared_target)?;
        ignore_in_git(&shared);
        cargo.arg("--target-dir").arg(shared);
    }
    if std::env::var_os("RUSTFLAGS").is_none() && std::env::var_os("CARGO_ENCODED_RUSTFLAGS").is_none() {
        let flags: Vec<String> = layout
            .remaps
            .into_iter()
            .map(|(from, to)| format!("--remap-path-prefix={}={to}", from.display()))
            .collect();
        let flags = serde_json::to_string(&flags)?;
        cargo.arg("--config").arg(format!("target.{TARGET}.rustflags={flags}"));
    }
    let mut child = cargo
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("failed to run cargo, which builds the plugins")?;
    let mut artefact = None;
    for line in BufReader::new(child.stdout.take().expect("stdout is piped")).lines() {
        let line = line.context("failed to read cargo's messages")?;
        if let Some(wasm) = component_of(&line, &manifest) {
            artefact = Some(wasm);
        }
    }
    let status = child.wait().context("failed to wait for cargo")?;
    if !status.success() {
        bail!(
            "cargo failed to build the `{}` module's plugin from `{}` (its messages are above)",
            source.module,
            source.source.display()
        );
    }
    let Some(artefact) = artefact else {
        bail!(
            "`{}` built no WebAssembly library: a plugin's crate says `crate-type = [\"cdylib\"]` under `[lib]`",
            manifest.display()
        );
    };
    let bytes = std::fs::read(&artefact).with_context(|| format!("failed to read `{}`", artefact.display()))?;
    let digest = sha256_hex(&bytes);
    host.load_pinned(&artefact, Some(&digest)).with_context(|| {
        format!("the `{}` module's build `{}` does not load on this host", source.module, artefact.display())
    })?;
    Ok(Built { source, artefact, digest, size: bytes.len() as u64 })
}

/// What cargo says of the crate at `manifest`, read once: whether it is a workspace of its
/// own, so its target directory is ours to choose (a workspace member builds where its
/// workspace does), and the local directories its build reads source from by absolute path,
/// each with the fixed name it is remapped to: the cargo home as `/cargo`, and each crate
/// built from a path outside the plugin's workspace (an SDK next to a checkout) as
/// `/<name>-<version>`.
struct CrateLayout {
    standalone: bool,
    remaps: Vec<(PathBuf, String)>,
}

impl CrateLayout {
    fn of(manifest: &Path) -> Result<CrateLayout> {
        let metadata = metadata(manifest)?;
        let root = metadata["workspace_root"].as_str().map(|r| Path::new(r).canonicalize().ok());
        let standalone = root.flatten().is_some_and(|root| Some(root.as_path()) == manifest.parent());
        Ok(CrateLayout { standalone, remaps: remapped_paths(&metadata) })
    }
}

/// `cargo metadata` of the crate at `manifest`, for the plugins' target.
fn metadata(manifest: &Path) -> Result<serde_json::Value> {
    let output = cargo_in(manifest.parent().unwrap_or(Path::new(".")))
        .args(["metadata", "--format-version", "1", "--filter-platform", TARGET, "--manifest-path"])
        .arg(manifest)
        .stderr(Stdio::inherit())
        .output()
        .context("failed to run cargo, which builds the plugins")?;
    if !output.status.success() {
        bail!("cargo cannot read the crate at `{}` (its messages are above)", manifest.display());
    }
    serde_json::from_slice(&output.stdout).context("cargo metadata is not JSON")
}

/// The directories to remap in a build described by `metadata` (see [`CrateLayout`]).
fn remapped_paths(metadata: &serde_json::Value) -> Vec<(PathBuf, String)> {
    let mut paths = Vec::new();
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        && let Ok(home) = home.canonicalize()
    {
        paths.push((home, "/cargo".to_string()));
    }
    // The workspace's own crates reach rustc by paths relative to the workspace, which say
    // nothing of the machine: only crates from elsewhere need a fixed name. Keeping the
    // workspace out also keeps the flags the same for every module built from one checkout
    // (changed flags would rebuild every dependency).
    let members: Vec<&str> =
        metadata["workspace_members"].as_array().into_iter().flatten().filter_map(|m| m.as_str()).collect();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        if package["id"].as_str().is_some_and(|id| members.contains(&id)) {
            continue;
        }
        let (None, Some(name), Some(version), Some(at)) = (
            package["source"].as_str(),
            package["name"].as_str(),
            package["version"].as_str(),
            package["manifest_path"].as_str(),
        ) else {
            continue;
        };
        if let Some(dir) = Path::new(at).parent() {
            paths.push((dir.to_path_buf(), format!("/{name}-{version}")));
        }
    }
    paths
}

/// The `.wasm` file of a `compiler-artifact` message about the crate at `manifest`.
fn component_of(line: &str, manifest: &Path) -> Option<PathBuf> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" {
        return None;
    }
    let built_from = Path::new(message["manifest_path"].as_str()?);
    if built_from.canonicalize().ok()? != manifest {
        return None;
    }
    let kinds = message["target"]["crate_types"].as_array()?;
    if !kinds.iter().any(|k| k == "cdylib") {
        return None;
    }
    message["filenames"].as_array()?.iter().filter_map(|f| f.as_str()).find(|f| f.ends_with(".wasm")).map(PathBuf::from)
}

/// Keeps the shared build directory out of the catalogue's commits, without editing the
/// catalogue's own `.gitignore`.
fn ignore_in_git(target: &Path) {
    let ignore = target.join(".gitignore");
    if !ignore.exists() && std::fs::create_dir_all(target).is_ok() {
        let _ = std::fs::write(ignore, "# Made by `mesh-adopt build`: everything here is a build product.\n*\n");
    }
}

/// A module's new plugin, and its manifest with the new pin, written beside the ones they
/// replace and not yet in their place: every module is staged before any is placed, so a
/// directory that cannot be written to stops the build with nothing changed.
pub struct Staged<'a> {
    built: &'a Built,
    plugin: tempfile::NamedTempFile,
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
        let pinned = crate::pin::with_pin(&text, &built.digest)
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
