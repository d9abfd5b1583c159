//! Discovery and reading of scenario files: the `scenarios/*.toml` under the paths asked for,
//! each read into a [`ScenarioFile`] with its module to run filled in and its expectations
//! checked against one another, every error naming the file.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::events::OutcomeWord;
use mesh_adopt_runtime::files::read_bounded;

use crate::format::Scenario;

/// A scenario read from its file.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    /// The file, as messages name it.
    pub path: PathBuf,
    /// `module/file-stem`, for lines of output.
    pub label: String,
    /// What it says.
    pub scenario: Scenario,
}

/// The largest scenario file read: real ones are a few hundred bytes.
const SCENARIO_BYTES: u64 = 1 << 20;

/// Finds scenario files: each PATH is a file, or a directory searched for `scenarios/*.toml`.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_file() {
            files.push(path.clone());
        } else if path.is_dir() {
            collect(path, &mut files, &mut Default::default())?;
        } else {
            bail!("no scenario file or directory at `{}`", path.display());
        }
    }
    files.sort();
    // A module's source may sit inside its directory: both are searched, and the same file
    // reached by two paths (`modules/m/plugin` and `modules/m/./plugin`, a link) runs once.
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|path| seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())));
    files.iter().map(|p| read(p)).collect()
}

/// Directories toolchains fill with build products and other projects' files, never a
/// plugin author's scenarios: cargo's `target`, npm's `node_modules`, a Python `.venv`.
fn is_build_directory(dir: &Path) -> bool {
    dir.file_name().is_some_and(|name| ["target", "node_modules", ".venv", "__pycache__"].iter().any(|n| name == *n))
}

/// Collects the scenario files under `dir`, each directory searched once however many links
/// lead to it (`visited` holds them resolved), so a link back up the tree ends the search.
fn collect(dir: &Path, files: &mut Vec<PathBuf>, visited: &mut std::collections::BTreeSet<PathBuf>) -> Result<()> {
    let resolved = dir.canonicalize().with_context(|| format!("failed to read `{}`", dir.display()))?;
    if !visited.insert(resolved) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("failed to read `{}`", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() && !is_build_directory(&path) {
            collect(&path, files, visited)?;
        } else if path.extension().is_some_and(|e| e == "toml")
            && path.parent().is_some_and(|p| p.ends_with("scenarios"))
        {
            files.push(path);
        }
    }
    Ok(())
}

/// Reads one scenario, naming the file in any error. Its default module is the module whose
/// directory holds `scenarios/`, or holds the plugin source that does (`modules/<module>/`
/// with a `manifest.json`, or its `plugin/` inside it); else the name of the directory
/// holding `scenarios/` (a source kept apart, named as its module).
pub fn read(path: &Path) -> Result<ScenarioFile> {
    let text = read_bounded(path, SCENARIO_BYTES)
        .map_err(|e| anyhow::anyhow!("{e:#}"))
        .and_then(|bytes| Ok(String::from_utf8(bytes)?))
        .with_context(|| format!("failed to read the scenario `{}`", path.display()))?;
    let mut scenario: Scenario =
        toml::from_str(&text).with_context(|| format!("the scenario `{}` is malformed", path.display()))?;
    // Without `.` components, whose file name is none.
    let holder: PathBuf = path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    let owner = holder
        .ancestors()
        .take(2)
        .find(|dir| dir.join(mesh_adopt_runtime::catalogue::MANIFEST_FILE).is_file())
        .unwrap_or(&holder)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if scenario.modules.is_empty() {
        // The directory holding `scenarios/` names the module run by default, unless it is a
        // catalogue's own (whose scenarios run several modules and must say which).
        let beside = path.parent().and_then(Path::parent).unwrap_or(Path::new("."));
        let a_catalogue = beside.join("modules").is_dir() || beside.join("foundation.json").is_file();
        if a_catalogue || mesh_adopt_runtime::options::check_module_name(&owner).is_err() {
            bail!(
                "the scenario `{}` names no `modules`, and it is not beside one module to run by default: say \
                 `modules = [\"...\"]`",
                path.display()
            );
        }
        scenario.modules.push(owner.clone());
    }
    if let Some((remote, kind)) =
        scenario.expect.carried.iter().flatten().find(|(_, kind)| !["file", "secret"].contains(&kind.as_str()))
    {
        bail!(
            "the scenario `{}` expects `{}` carried as `{}`: say `file` or `secret`",
            path.display(),
            remote.escape_debug(),
            kind.escape_debug()
        );
    }
    if let Some(code) = &scenario.expect.code {
        if scenario.expect.outcome != OutcomeWord::Refused {
            bail!(
                "the scenario `{}` expects the code {code:?} with the outcome {:?}: only a refusal has a code",
                path.display(),
                scenario.expect.outcome.words()
            );
        }
        if let Some(fault) = mesh_adopt_runtime::plan::Refusal::code_fault(code) {
            bail!("the scenario `{}` expects the code {code:?}, which {fault}", path.display());
        }
    }
    if scenario.expect.strict && scenario.expect.commands.is_none() {
        bail!("the scenario `{}` lists no `expect.commands`; list them, or say `strict = false`", path.display());
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(ScenarioFile { path: path.to_path_buf(), label: format!("{owner}/{stem}"), scenario })
}
