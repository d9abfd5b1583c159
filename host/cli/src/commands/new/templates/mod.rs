//! The files `mesh-adopt new` writes: a module installed by the provider sequence (in Rust,
//! JavaScript or Python), or one that adopts a container genesis raised (in Rust), each with
//! scenarios that pass as written. Each language's files are its own module's; what every
//! module shares (its manifest's form, its scenarios' command list) is here.
//!
//! Every file is a template kept as the file it becomes, brought in with `include_str!`, its
//! `{{name}}`s filled in by [`fill`]: the Rust crate's in `rust/`, the Python project's
//! requirements and `.gitignore` in `python/`, the adopting module's source and scenarios in
//! `adopted/`, and the installed module's scenario in `scenarios/`. Each is named as the file
//! it becomes with `.in` added, so that no tool takes a template for this repository's own
//! file: cargo a `Cargo.toml` for a crate, Rust's tools a `.rs` for this crate's source, git
//! a `.gitignore` for its rules. The JavaScript package's files, and the Python project's
//! own, are kept beside their SDKs, in `plugins/js/template/` and `plugins/python/template/`.
//! A manifest is JSON made from values, not a template.

mod adopted;
mod js;
mod python;
mod rust;

pub use adopted::{adopted_container, adopts_in_place, handover_for};

use crate::commands::language::Language;

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

/// `template` with each `{{name}}` of `values` replaced by its value, in one pass: a value
/// that itself holds `{{…}}` is written as it is. A `{{name}}` not in `values` is left as it
/// is.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut filled = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        filled.push_str(&rest[..open]);
        let inner = &rest[open + 2..];
        let value = inner.find("}}").and_then(|close| {
            let (name, after) = (&inner[..close], &inner[close + 2..]);
            values.iter().find(|(known, _)| *known == name).map(|(_, value)| (*value, after))
        });
        match value {
            Some((value, after)) => {
                filled.push_str(value);
                rest = after;
            }
            // Not a name: its first brace is text, and a name may start at the next.
            None => {
                filled.push('{');
                rest = &rest[open + 1..];
            }
        }
    }
    filled.push_str(rest);
    filled
}

/// A template's text for `module`, its plugin type and its SDK dependency.
fn filled(template: &str, module: &str, sdk: &str) -> String {
    fill(template, &[("module", module), ("type", &type_name(module)), ("sdk", sdk)])
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
            (".gitignore", rust::GITIGNORE.to_string()),
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

/// The installed module's scenario, with `{{module}}` and `{{commands}}` (the provider
/// sequence's) to fill in.
const INSTALLS: &str = include_str!("scenarios/installs.toml.in");

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
    let scenario = fill(INSTALLS, &[("module", module), ("commands", &sequence(module, &[]))]);
    Documents { manifest, lib_rs, scenarios: vec![("installs".to_string(), scenario)] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_each_name_in_one_pass_and_leaves_what_is_not_a_name() {
        let values = [("module", "cache"), ("sdk", "{{module}}")];
        assert_eq!(fill("{{module}}-{{sdk}}", &values), "cache-{{module}}");
        assert_eq!(fill("{{other}} {{{module}}} {{", &values), "{{other}} {cache} {{");
    }

    #[test]
    fn every_template_is_filled_whole() {
        let adopted = Adopted {
            bundle_id: "cache".into(),
            name: "mesh-cache".into(),
            image: "redis:7.4-alpine".into(),
            volumes: vec!["/var/lib/mesh/cache:/data".into()],
        };
        let handover = Handover { credential: "cache-password".into(), secret: "password".into() };
        let installed = installed("object-store", mesh_adopt_runtime::plugin::WORLD);
        let adopting = adopts_in_place("cache", &adopted, Some(&handover));
        for (language, documents) in [
            (Language::Rust, &installed),
            (Language::JavaScript, &installed),
            (Language::Python, &installed),
            (Language::Rust, &adopting),
        ] {
            let files = plugin_files(language, "object-store", "\"0.1.0\"", "0.1.0", documents);
            let scenarios = documents.scenarios.iter().map(|(name, text)| (name.as_str(), text.clone()));
            for (name, text) in files.into_iter().chain(scenarios) {
                assert!(!text.contains("{{"), "{} {name} holds a name not filled in:\n{text}", language.name());
            }
        }
    }
}
