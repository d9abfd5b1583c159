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

/// Builds `source`'s package into the component `out`.
pub fn build(source: &ModuleSource, out: &Path, locked: bool) -> Result<()> {
    let dir = source.source.canonicalize().with_context(|| format!("failed to read `{}`", source.source.display()))?;
    let tool = match super::find_up(&dir, TOOL) {
        Some(tool) => tool,
        None => {
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
/// lock file, by `npm install`, which writes one to commit. A locked build (`--check`) has
/// to have a lock file.
fn install(dir: &Path, locked: bool) -> Result<()> {
    let locked_file = dir.join("package-lock.json").is_file();
    if locked && !locked_file {
        bail!(
            "`{}` has no package-lock.json, and a check builds only from a lock file: run `mesh-adopt build` once \
             and commit the package-lock.json npm writes",
            dir.display()
        );
    }
    let verb = if locked_file { "ci" } else { "install" };
    crate::errln!("installing the JavaScript plugin's toolchain in {} (npm {verb})", dir.display());
    let mut npm = Command::new(std::env::var_os("NPM").unwrap_or_else(|| "npm".into()));
    npm.args([verb, "--no-audit", "--no-fund"]).current_dir(dir);
    super::run_tool(npm, "installs a JavaScript plugin's dependencies (node's package manager)")
}
