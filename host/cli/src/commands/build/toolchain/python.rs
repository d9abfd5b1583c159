//! Python plugins: a project built by the Python SDK's own `mesh-adopt-build-py` (which runs
//! componentize-py) in a virtual environment: the active one, else the nearest `.venv` at or
//! above the project, else one made in the project's `.venv` from its `requirements.txt`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use super::ModuleSource;

/// Where a virtual environment has the SDK's build command.
const TOOL: &str = "bin/mesh-adopt-build-py";

/// Written in an environment `build` made once its requirements are installed: older than
/// requirements.txt, they are installed again.
const INSTALLED: &str = ".venv/.mesh-adopt-installed";

/// Builds `source`'s project into the component `out`. A locked build (`--check`) builds
/// with the environment as it is: it installs nothing the requirements gained since.
pub fn build(source: &ModuleSource, out: &Path, locked: bool) -> Result<()> {
    let dir = source.source.canonicalize().with_context(|| format!("failed to read `{}`", source.source.display()))?;
    let made_here = dir.join(INSTALLED);
    let tool = match installed_tool(&dir) {
        Some(tool) if tool.starts_with(dir.join(".venv")) && made_here.is_file() => {
            if super::newer(&dir.join("requirements.txt"), &made_here) {
                if locked {
                    bail!(
                        "`{}` changed after the plugin's environment `{}` was made, and a check installs nothing: run \
                         `mesh-adopt build` to install it, then check",
                        dir.join("requirements.txt").display(),
                        dir.join(".venv").display()
                    );
                }
                install_requirements(&dir, &dir.join(".venv"))?;
            }
            tool
        }
        Some(tool) => tool,
        None => {
            let venv = make_environment(&dir)?;
            let tool = venv.join(TOOL);
            if !tool.is_file() {
                bail!(
                    "pip installed `{}` into `{}`, and none of it is the SDK's `mesh-adopt-build-py`: a Python plugin \
                     requires `mesh-adopt-sdk`",
                    dir.join("requirements.txt").display(),
                    venv.display()
                );
            }
            tool
        }
    };
    let mut command = Command::new(tool);
    command.arg("--out").arg(out).arg(&dir).current_dir(&dir);
    super::run_tool(command, &format!("builds the `{}` module's Python plugin", source.module))
}

/// The build command of the environment the author activated, or of the nearest `.venv`.
fn installed_tool(dir: &Path) -> Option<PathBuf> {
    let active = std::env::var_os("VIRTUAL_ENV").map(|venv| PathBuf::from(venv).join(TOOL));
    active.filter(|tool| tool.is_file()).or_else(|| super::find_up(dir, &format!(".venv/{TOOL}")))
}

/// Makes `dir/.venv` and installs the project's `requirements.txt` into it (pip reads its
/// relative paths from `dir`, so an SDK beside the catalogue is named `../../sdk`).
fn make_environment(dir: &Path) -> Result<PathBuf> {
    let requirements = dir.join("requirements.txt");
    if !requirements.is_file() {
        bail!(
            "`{}` has no virtual environment holding `mesh-adopt-build-py` (none active, no `.venv` at or above it) \
             and no requirements.txt to make one from: list `mesh-adopt-sdk` in a requirements.txt beside its \
             pyproject.toml",
            dir.display()
        );
    }
    let venv = dir.join(".venv");
    crate::errln!("making the Python plugin's environment {} (pip install -r requirements.txt)", venv.display());
    let mut python = Command::new(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()));
    // The pip a Python release bundles can be too old for what requirements.txt says (a
    // `git+file:///` requirement, for one): the environment gets the current pip.
    python.args(["-m", "venv", "--upgrade-deps"]).arg(&venv).current_dir(dir);
    super::run_tool(python, "makes a Python plugin's virtual environment")?;
    // A build product, like a Rust plugin's target directory.
    let _ = std::fs::write(venv.join(".gitignore"), "# Made by `mesh-adopt build`.\n*\n");
    install_requirements(dir, &venv)?;
    Ok(venv)
}

/// Installs `dir`'s requirements.txt into the environment `venv` that `build` made, and
/// notes when, so a changed requirements.txt is installed again.
fn install_requirements(dir: &Path, venv: &Path) -> Result<()> {
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--quiet", "--disable-pip-version-check", "-r", "requirements.txt"]).current_dir(dir);
    super::run_tool(pip, "installs a Python plugin's requirements")?;
    let _ = std::fs::write(dir.join(INSTALLED), "");
    Ok(())
}
