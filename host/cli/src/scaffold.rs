//! `mesh-adopt new`: a new module's plugin, manifest and first scenario, which build and
//! pass as they are, for a plugin author to grow from.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// What `new` wrote, for the author's next steps.
#[derive(Debug)]
pub struct Scaffolded {
    pub plugin_dir: PathBuf,
    pub manifest: PathBuf,
    pub scenario: PathBuf,
    /// Whether the plugins workspace's member list was updated (else the author must).
    pub joined_workspace: bool,
}

/// Module names are what a control plane and a crate name both accept.
fn valid(module: &str) -> bool {
    !module.is_empty()
        && module.len() <= 40
        && module.starts_with(|c: char| c.is_ascii_lowercase())
        && module.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Writes `plugins/<module>/` (crate, source, first scenario) and
/// `catalogue/modules/<module>/manifest.json`, refusing to overwrite anything.
pub fn new_module(module: &str, plugins: &Path, catalogue: &Path) -> Result<Scaffolded> {
    if !valid(module) {
        bail!("`{module}` is not a module name: use lowercase letters, digits and `-`, starting with a letter");
    }
    let plugin_dir = plugins.join(module);
    let module_dir = catalogue.join("modules").join(module);
    for dir in [&plugin_dir, &module_dir] {
        if dir.exists() {
            bail!("`{}` already exists; nothing was written", dir.display());
        }
    }
    let workspace = plugins.join("Cargo.toml");
    let members = std::fs::read_to_string(&workspace)
        .with_context(|| format!("`{}` is not a plugins workspace (no Cargo.toml)", plugins.display()))?;

    std::fs::create_dir_all(plugin_dir.join("src"))?;
    std::fs::create_dir_all(plugin_dir.join("scenarios"))?;
    std::fs::create_dir_all(&module_dir)?;
    std::fs::write(plugin_dir.join("Cargo.toml"), cargo_toml(module))?;
    std::fs::write(plugin_dir.join("src/lib.rs"), lib_rs(module))?;
    let scenario = plugin_dir.join("scenarios/installs.toml");
    std::fs::write(&scenario, scenario_toml(module))?;
    let manifest = module_dir.join("manifest.json");
    std::fs::write(&manifest, manifest_json(module))?;

    let joined = members.replacen("members = [", &format!("members = [\"{module}\", "), 1);
    let joined_workspace = joined != members;
    if joined_workspace {
        std::fs::write(&workspace, joined)?;
    }
    Ok(Scaffolded { plugin_dir, manifest, scenario, joined_workspace })
}

/// The crate's name for the module's plugin, and so its `.wasm` file's stem.
pub fn crate_name(module: &str) -> String {
    format!("adopt-{module}")
}

fn cargo_toml(module: &str) -> String {
    format!(
        r#"[package]
name = "{crate_name}"
version = "0.1.0"
description = "Adoption rules of the `{module}` catalogue module"
edition.workspace = true
rust-version.workspace = true
license.workspace = true

[lib]
crate-type = ["cdylib"]

[dependencies]
mesh-adopt-sdk.workspace = true
"#,
        crate_name = crate_name(module)
    )
}

fn lib_rs(module: &str) -> String {
    let type_name: String = module
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect();
    format!(
        r#"//! The `{module}` module: installed by the shared provider sequence. Add its own rules
//! here: read `ctx.manifest` and `ctx.foundation`, refuse with `refuse(..)` before anything
//! is registered, and do the module's own step in the closure passed to `install`.

use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{{Context, Plan, Plugin, Refusal, Report}};

struct {type_name};

impl Plugin for {type_name} {{
    fn check(ctx: &Context) -> Result<Plan, Refusal> {{
        Ok(Plan {{
            summary: vec![format!("install `{{}}` from the catalogue", ctx.module)],
            commands: Provider::new(ctx, "").commands(Vec::new())?,
        }})
    }}

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {{
        Provider::new(ctx, "").install(|| Ok(()))?;
        let summary = format!("{{}} installed", ctx.module);
        say(&summary);
        Ok(Report {{ summary }})
    }}
}}

mesh_adopt_sdk::export!({type_name});
"#
    )
}

fn scenario_toml(module: &str) -> String {
    format!(
        r#"name = "installs `{module}` by the provider sequence"

[expect]
outcome = "adopted"
messages = ["{module} installed"]
commands = [
  "module add /{module}-module.json",
  "build https://git.mesh.test/catalogue.git --path modules/{module} --ref main --wait 1200s",
  "module issue {module} --node node-1",
  "assign node-1 {module}",
  "prepare node-1 {module}",
  "push node-1",
]
created = ["{module}"]
"#
    )
}

fn manifest_json(module: &str) -> String {
    format!(
        r#"{{
  "name": "{module}",
  "version": "0.1.0",
  "resources": [
    {{"id": "server", "type": "container", "name": "{module}", "image": "registry.mesh.local/{module}:0.1.0",
     "volumes": ["${{access:data}}:/var/lib/{module}"]}}
  ],
  "accesses": [{{"id": "data", "path": "/var/lib/mesh/{module}"}}],
  "bus-subjects": ["{module}.>"],
  "adopt": {{"plugin": "adopt.wasm", "world": "mesh:adopt/adopter@0.1.0"}}
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_names_that_are_not_module_names() {
        for bad in ["", "Postgres", "9lives", "a/b", "a b", "../x"] {
            assert!(!valid(bad), "{bad}");
        }
        assert!(valid("object-store2"));
    }

    #[test]
    fn writes_nothing_over_an_existing_module() {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir_all(plugins.join("cache")).unwrap();
        std::fs::write(plugins.join("Cargo.toml"), "[workspace]\nmembers = [\"sdk\", \"cache\"]\n").unwrap();
        let err = new_module("cache", &plugins, &dir.path().join("catalogue")).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
    }
}
