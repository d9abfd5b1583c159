//! The files `mesh-adopt new` writes: a module installed by the provider sequence (in Rust,
//! JavaScript or Python), or one that adopts a container genesis raised (in Rust), each with
//! scenarios that pass as written. Each language's files are its own module's; what every
//! module shares (its manifest's form, its scenarios' command list) is here.

mod adopted;
mod js;
mod python;
mod rust;

pub use adopted::{adopted_container, adopts_in_place, handover_for};

use crate::language::Language;

/// The container a new module adopts, as the foundation bundle has it.
pub struct Adopted {
    /// The bundle's id for it.
    pub bundle_id: String,
    /// Its name on the node.
    pub name: String,
    /// The image it runs.
    pub image: String,
    /// Its volumes, `HOST:CONTAINER[:OPTIONS]`.
    pub volumes: Vec<String>,
}

/// A genesis credential the module takes over as its own secret.
pub struct Handover {
    /// The credential's name in genesis.
    pub credential: String,
    /// The secret's name in the module.
    pub secret: String,
}

/// A new module's documents, before they are written.
pub struct Documents {
    /// `manifest.json`.
    pub manifest: String,
    /// The plugin's `src/lib.rs`.
    pub lib_rs: String,
    /// Scenario files, by file stem.
    pub scenarios: Vec<(String, String)>,
}

/// A template's text for `module`, its plugin type and its SDK dependency.
fn filled(template: &str, module: &str, sdk: &str) -> String {
    template.replace("{{module}}", module).replace("{{type}}", &type_name(module)).replace("{{sdk}}", sdk)
}

/// The plugin's files in `language`, by path in its directory: the project file with the
/// SDK as `dependency` (of `version`), and the source. A Rust plugin's source is
/// `documents.lib_rs`; the others install the module by the provider sequence.
pub fn plugin_files(
    language: Language,
    module: &str,
    dependency: &str,
    version: &str,
    documents: &Documents,
) -> Vec<(&'static str, String)> {
    match language {
        Language::Rust => vec![
            ("Cargo.toml", rust::cargo_toml(module, dependency)),
            (".gitignore", "/target/\n".to_string()),
            ("src/lib.rs", documents.lib_rs.clone()),
        ],
        Language::JavaScript => js::files(module, dependency),
        Language::Python => python::files(module, dependency, version),
    }
}

/// A manifest as `mesh-adopt build` writes one back when it pins the plugin, so the pin is
/// the only line a build changes.
fn pretty(manifest: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(manifest).expect("a manifest serialises");
    text.push('\n');
    text
}

/// The Rust type a module's plugin is: `object-store` → `ObjectStore`.
/// Suffixed, so no module name makes a keyword or an imported name (`self`, `provider`).
fn type_name(module: &str) -> String {
    let camel: String = module
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect();
    format!("{camel}Plugin")
}

/// The provider sequence's commands for `module` with the scenarios' defaults, `before_push`
/// where the module's own step goes: what a strict scenario lists.
fn sequence(module: &str, before_push: &[String]) -> String {
    let mut commands = vec![
        format!("module add /{module}-module.json"),
        format!("build https://git.mesh.test/catalogue.git --path modules/{module} --ref main --wait 1200s"),
        format!("module issue {module} --node node-1"),
        format!("assign node-1 {module}"),
        format!("prepare node-1 {module}"),
    ];
    commands.extend(before_push.iter().cloned());
    commands.push("push node-1".to_string());
    commands.iter().map(|c| format!("  {c:?},\n")).collect()
}

/// A module that genesis did not raise: installed by the provider sequence alone.
pub fn installed(module: &str, world: &str) -> Documents {
    let manifest = pretty(&serde_json::json!({
        "name": module,
        "version": "0.1.0",
        "resources": [{
            "id": "server",
            "type": "container",
            "name": module,
            "image": format!("registry.mesh.local/{module}:0.1.0"),
            "volumes": [format!("${{access:data}}:/var/lib/{module}")],
        }],
        "accesses": [{"id": "data", "path": format!("/var/lib/mesh/{module}")}],
        "bus-subjects": [format!("{module}.>")],
        "adopt": {"plugin": "adopt.wasm", "world": world, "source": "plugin"},
    }));
    let lib_rs = rust::installed_lib_rs(module);
    let scenario = format!(
        r#"name = "installs `{module}` by the provider sequence"

[expect]
outcome = "adopted"
messages = ["{module} installed"]
commands = [
{commands}]
created = ["{module}"]
"#,
        commands = sequence(module, &[])
    );
    Documents { manifest, lib_rs, scenarios: vec![("installs".to_string(), scenario)] }
}
