//! JavaScript plugins: a package built by the JavaScript SDK's own `mesh-adopt-build-js`
//! (which bundles it and runs componentize-js), installed by npm from the package's lock
//! file when the tool is not there yet.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use super::ModuleSource;

/// Where npm puts the SDK's build command, in the package's `node_modules` or a workspace's
/// above it.
const TOOL: &str = "node_modules/.bin/mesh-adopt-build-js";

/// What npm writes in `node_modules` at every install: older than the package's manifest or
/// lock file, the installed dependencies are not the ones they name.
const INSTALLED: &str = "node_modules/.package-lock.json";

/// Builds `source`'s package into the component `out`. The package's own dependencies are
/// installed again when its package.json or lock file changed since they were, so a
/// dependency added is a dependency built with.
pub fn build(source: &ModuleSource, out: &Path, locked: bool) -> Result<()> {
    let dir = source.source.canonicalize().with_context(|| format!("failed to read `{}`", source.source.display()))?;
    let installed = dir.join(INSTALLED);
    let changed = ["package.json", "package-lock.json"].iter().any(|file| super::newer(&dir.join(file), &installed));
    let tool = match super::find_up(&dir, TOOL) {
        Some(tool) if !changed => tool,
        _ => {
            install(&dir, locked)?;
            super::find_up(&dir, TOOL).with_context(|| {
                format!(
                    "npm installed `{}`'s dependencies, and none of them is the SDK's `mesh-adopt-build-js`: a \
                     JavaScript plugin depends on `@mesh-adopt/sdk`",
                    dir.join("package.json").display()
                )
            })?
        }
    };
    let mut command = Command::new(tool);
    command.arg("--out").arg(out).arg(&dir).current_dir(&dir);
    super::run_tool(command, &format!("builds the `{}` module's JavaScript plugin", source.module))
}

/// Installs the package's dependencies: exactly its lock file's with `npm ci`, or, with no
/// lock file or one older than package.json, by `npm install`, which writes it to commit. A
/// locked build (`--check`) has to have a lock file in step with package.json.
fn install(dir: &Path, locked: bool) -> Result<()> {
    let lock = dir.join("package-lock.json");
    let locked_file = lock.is_file();
    if locked && !locked_file {
        bail!(
            "`{}` has no package-lock.json, and a check builds only from a lock file: run `mesh-adopt build` once \
             and commit the package-lock.json npm writes",
            dir.display()
        );
    }
    // A package.json changed after its lock file (a dependency added) is installed afresh,
    // which brings the lock file up to date; `npm ci` would refuse the two as out of step.
    let in_step = locked_file && !super::newer(&dir.join("package.json"), &lock);
    if locked && !in_step {
        bail!(
            "`{}` changed after its package-lock.json, and a check builds only from a lock file: run `mesh-adopt \
             build` and commit the package-lock.json npm brings up to date",
            dir.join("package.json").display()
        );
    }
    let verb = if in_step { "ci" } else { "install" };
    crate::errln!("installing the JavaScript plugin's toolchain in {} (npm {verb})", dir.display());
    let mut npm = Command::new(std::env::var_os("NPM").unwrap_or_else(|| "npm".into()));
    npm.args([verb, "--no-audit", "--no-fund"]).current_dir(dir);
    super::run_tool(npm, "installs a JavaScript plugin's dependencies (node's package manager)")
}
