//! Rust plugins: a crate built with cargo for wasm32-wasip2, in the crate's own directory so
//! that a catalogue's `rust-toolchain.toml` chooses the toolchain.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use super::ModuleSource;

/// The target every plugin is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// Adds the wasm32-wasip2 target to the toolchain that builds in `dir` (a catalogue's
/// `rust-toolchain.toml` chooses it) when rustup manages it and lacks the target. Without
/// rustup, cargo's own error says what is missing.
pub fn ensure_target(dir: &Path) -> Result<()> {
    let mut list = Command::new("rustup");
    list.args(["target", "list", "--installed"]).current_dir(dir).stderr(Stdio::piped());
    let Ok(installed) = crate::interrupts::run_child(&mut list, true) else {
        return Ok(());
    };
    if String::from_utf8_lossy(&installed.stdout).lines().any(|l| l.trim() == TARGET) {
        return Ok(());
    }
    crate::errln!("adding the {TARGET} target (rustup target add {TARGET})");
    let status =
        crate::interrupts::run_child(Command::new("rustup").args(["target", "add", TARGET]).current_dir(dir), false)
            .map(|done| done.status)
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

/// Builds `source`'s crate as a component with cargo, returning the component's path. A
/// crate of its own shares `shared_target` with the catalogue's other modules, so their
/// common dependencies compile once.
///
/// Unless the author sets their own `RUSTFLAGS`, every local path the build could embed (the
/// cargo home its dependencies are unpacked in, each crate built from a path) is remapped to
/// a fixed name, so the same source and toolchain build the same bytes on any machine and a
/// catalogue's CI can check the pin.
pub fn build(source: &ModuleSource, shared_target: &Path, locked: bool) -> Result<PathBuf> {
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
        super::ignore_in_git(&shared);
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
        .process_group(0)
        .spawn()
        .context("failed to run cargo, which builds the plugins")?;
    // Ended with everything it started should the command be interrupted.
    let _tracked = crate::interrupts::Tracked::of(&child);
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
    Ok(artefact)
}

/// What cargo says of the crate at `manifest`, read once: whether it is a workspace of its
/// own, so its target directory is ours to choose (a workspace member builds where its
/// workspace does), and the local directories its build reads source from by absolute path,
/// each with the fixed name it is remapped to: the cargo home as `/cargo`, and each crate
/// built from a path outside the plugin's workspace (an SDK next to a checkout) as
/// `/<name>-<version>`.
struct CrateLayout {
    /// Whether the crate is a workspace of its own.
    standalone: bool,
    /// Each local directory read by absolute path, with the name it is remapped to.
    remaps: Vec<(PathBuf, String)>,
}

impl CrateLayout {
    /// Asks cargo, once, about the crate at `manifest`.
    fn of(manifest: &Path) -> Result<CrateLayout> {
        let metadata = metadata(manifest)?;
        let root = metadata["workspace_root"].as_str().map(|r| Path::new(r).canonicalize().ok());
        let standalone = root.flatten().is_some_and(|root| Some(root.as_path()) == manifest.parent());
        Ok(CrateLayout { standalone, remaps: remapped_paths(&metadata) })
    }
}

/// `cargo metadata` of the crate at `manifest`, for the plugins' target.
fn metadata(manifest: &Path) -> Result<serde_json::Value> {
    let mut cargo = cargo_in(manifest.parent().unwrap_or(Path::new(".")));
    cargo
        .args(["metadata", "--format-version", "1", "--filter-platform", TARGET, "--manifest-path"])
        .arg(manifest)
        .stderr(Stdio::inherit());
    let output =
        crate::interrupts::run_child(&mut cargo, true).context("failed to run cargo, which builds the plugins")?;
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
