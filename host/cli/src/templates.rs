//! The files `mesh-adopt new` writes: a module installed by the provider sequence (in Rust,
//! JavaScript or Python), or one that adopts a container genesis raised (in Rust), each with
//! scenarios that pass as written.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::catalogue::{Foundation, FoundationResource};

use crate::language::Language;

/// A new module's documents, before they are written.
pub struct Documents {
    /// `manifest.json`.
    pub manifest: String,
    /// The plugin's `src/lib.rs`.
    pub lib_rs: String,
    /// Scenario files, by file stem.
    pub scenarios: Vec<(String, String)>,
}

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

/// The crate's `Cargo.toml`: a workspace of its own (so it builds the same wherever the
/// catalogue is checked out), with the release profile that keeps plugins small.
fn cargo_toml(module: &str, sdk: &str) -> String {
    format!(
        r#"[package]
name = "adopt-{module}"
version = "0.1.0"
description = "Adoption rules of the `{module}` catalogue module"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
mesh-adopt-sdk = {sdk}

# The plugin is a workspace of its own: `mesh-adopt build` builds it from the manifest's
# `adopt.source`, wherever the catalogue is checked out.
[workspace]

# Small plugins load fast and ship beside every manifest.
[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
strip = true
panic = "abort"
"#
    )
}

/// The JavaScript plugin's files, with `{{module}}`, `{{type}}` and `{{sdk}}` to fill in:
/// kept in `plugins/js/template/`, where the conformance suite's SDK sits beside them.
const JS_TEMPLATE: [(&str, &str); 4] = [
    ("package.json", include_str!("../../../plugins/js/template/package.json")),
    ("app.js", include_str!("../../../plugins/js/template/app.js")),
    // npm installs a `file:` SDK as a package, with its own dependencies (componentize-js),
    // instead of linking to it.
    (".npmrc", include_str!("../../../plugins/js/template/.npmrc")),
    (".gitignore", include_str!("../../../plugins/js/template/.gitignore")),
];

/// The Python plugin's files (see [`JS_TEMPLATE`]); its requirements.txt is written here.
const PYTHON_TEMPLATE: [(&str, &str); 2] = [
    ("pyproject.toml", include_str!("../../../plugins/python/template/pyproject.toml")),
    ("app.py", include_str!("../../../plugins/python/template/app.py")),
];

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
            ("Cargo.toml", cargo_toml(module, dependency)),
            (".gitignore", "/target/\n".to_string()),
            ("src/lib.rs", documents.lib_rs.clone()),
        ],
        Language::JavaScript => {
            JS_TEMPLATE.iter().map(|(name, text)| (*name, filled(text, module, dependency))).collect()
        }
        Language::Python => {
            let mut files: Vec<_> = PYTHON_TEMPLATE
                .iter()
                .map(|(name, text)| (*name, filled(text, module, &format!("mesh-adopt-sdk=={version}"))))
                .collect();
            files.push((
                "requirements.txt",
                format!(
                    "# What `mesh-adopt build` installs into this plugin's `.venv` to build it; pip reads a path\n\
                     # here from this directory.\n{dependency}\n"
                ),
            ));
            files.push((".gitignore", ".venv/\n__pycache__/\n".to_string()));
            files
        }
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
pub fn installed(module: &str) -> Documents {
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
        "adopt": {"plugin": "adopt.wasm", "world": mesh_adopt_runtime::WORLD, "source": "plugin"},
    }));
    let ty = type_name(module);
    let lib_rs = format!(
        r#"//! The `{module}` module: installed by the shared provider sequence. Add its own rules
//! here: read `ctx.manifest` and `ctx.foundation`, refuse with `refuse(..)` before anything
//! is registered, and do the module's own step in the closure passed to `install`.

use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::{{Context, Plan, Plugin, Refusal, Report}};

struct {ty};

impl Plugin for {ty} {{
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

mesh_adopt_sdk::export!({ty});
"#
    );
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

/// The foundation bundle's container `bundle_id`, refused by name when the bundle has no
/// such container.
pub fn adopted_container(catalogue: &Path, bundle_id: &str) -> Result<Adopted> {
    let path = catalogue.join("foundation.json");
    let foundation = Foundation::load(&path).context("--adopts reads the container from the foundation bundle")?;
    let containers: Vec<&str> = foundation
        .resources
        .iter()
        .filter_map(|r| match r {
            FoundationResource::Container { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let found = foundation.resources.iter().find_map(|r| match r {
        FoundationResource::Container { id, name, image, volumes } if id == bundle_id => {
            Some(Adopted { bundle_id: id.clone(), name: name.clone(), image: image.clone(), volumes: volumes.clone() })
        }
        _ => None,
    });
    match found {
        Some(adopted) => Ok(adopted),
        None => bail!(
            "the foundation bundle `{}` has no container `{bundle_id}` to adopt; its containers are {}",
            path.display(),
            containers.join(", ")
        ),
    }
}

/// The genesis credentials a module adopting `bundle_id` could take over: those named
/// `<bundle-id>-<secret>`, as `store-superuser` is the store's. Exactly one is handed over.
pub fn handover_for(catalogue: &Path, bundle_id: &str) -> Vec<Handover> {
    let prefix = format!("{bundle_id}-");
    let Ok(entries) = std::fs::read_dir(catalogue.join("genesis/credentials")) else { return Vec::new() };
    let mut found: Vec<Handover> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter_map(|name| {
            let secret = name.strip_prefix(&prefix)?.to_string();
            let plain = !secret.is_empty() && secret.chars().all(|c| c.is_ascii_lowercase() || c == '-');
            plain.then(|| Handover { credential: name.clone(), secret })
        })
        .collect();
    found.sort_by(|a, b| a.credential.cmp(&b.credential));
    found
}

/// The manifest's view of the adopted container's volumes: each host path an access, so the
/// builder mounts what genesis mounted.
fn accesses(volumes: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let mut mounts = Vec::new();
    let mut accesses: Vec<(String, String)> = Vec::new();
    for volume in volumes {
        let Some((host, rest)) = volume.split_once(':') else {
            mounts.push(volume.clone());
            continue;
        };
        let stem = rest.split(':').next().unwrap_or(rest).rsplit('/').find(|s| !s.is_empty()).unwrap_or("data");
        let mut id: String =
            stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
        while accesses.iter().any(|(taken, _)| taken == &id) {
            id.push('2');
        }
        mounts.push(format!("${{access:{id}}}:{rest}"));
        accesses.push((id, host.to_string()));
    }
    (mounts, accesses)
}

/// The manifest's `adopts` entry for a module keeping `adopted` in place as its `server`.
fn adoption(adopted: &Adopted, handover: Option<&Handover>) -> serde_json::Value {
    let mut adoption = serde_json::json!({
        "foundation": adopted.bundle_id,
        "container": "server",
        "how": "kept",
    });
    if let Some(h) = handover {
        adoption["credential"] = h.credential.clone().into();
        adoption["secret"] = h.secret.clone().into();
    }
    adoption
}

/// A module that adopts the container genesis raised as `adopted`, in place: refused unless
/// the manifest's server is that container (name and image), its credential handed over
/// before the push, and the container waited for after it.
pub fn adopts_in_place(module: &str, adopted: &Adopted, handover: Option<&Handover>) -> Documents {
    let (mounts, accesses) = accesses(&adopted.volumes);
    let manifest = pretty(&serde_json::json!({
        "name": module,
        "version": "0.1.0",
        "resources": [{
            "id": "server",
            "type": "container",
            "name": adopted.name,
            "image": adopted.image,
            "volumes": mounts,
        }],
        "accesses": accesses.iter().map(|(id, path)| serde_json::json!({"id": id, "path": path})).collect::<Vec<_>>(),
        "secrets": handover.map(|h| h.secret.clone()).into_iter().collect::<Vec<_>>(),
        // What the host predicts the push from and holds every module to: this module keeps
        // the container genesis raised, and hands its credential over before the push.
        "adopts": [adoption(adopted, handover)],
        "adopt": {
            "plugin": "adopt.wasm",
            "world": mesh_adopt_runtime::WORLD,
            "source": "plugin",
            "grants": {
                "credentials": handover.map(|h| h.credential.clone()).into_iter().collect::<Vec<_>>(),
                "inspect": [adopted.name],
            },
        },
    }));
    let json = |v: &str| serde_json::to_string(v).expect("a string serialises");
    let lib_rs = adopt_lib_rs(module, adopted, handover);
    let accept: Vec<String> = handover
        .map(|h| format!("secret accept node-1 {module} {} --from /accepting-{}", h.secret, h.secret))
        .into_iter()
        .collect();
    let accepted = handover.map(|h| format!("{:?}", format!("{module}/{}", h.secret))).unwrap_or_default();
    let adopts = format!(
        r#"name = "adopts {name} in place"

[expect]
outcome = "adopted"
messages = ["adopting {name}"]
commands = [
{commands}]
kept = [{container}]
accepted = [{accepted}]
"#,
        name = adopted.name,
        container = json(&adopted.name),
        commands = sequence(module, &accept),
    );
    let drifted = format!(
        r#"name = "refuses, before registering, a manifest whose server runs another image than the foundation's"

[[edit]]
file = "manifest:{module}"
set = "/resources/0/image"
to = "registry.mesh.local/something-else:1"

[expect]
outcome = "refused"
messages = ["is pinned to image `registry.mesh.local/something-else:1`", "Nothing has been registered"]
commands = []
"#,
    );
    let missing = format!(
        r#"name = "refuses, before registering, when the foundation bundle has no `{id}`"

[[edit]]
file = "foundation"
remove_resource = {id_json}

[expect]
outcome = "refused"
messages = ["the foundation bundle has no `{id}`"]
commands = []
"#,
        id = adopted.bundle_id,
        id_json = json(&adopted.bundle_id),
    );
    let mut scenarios = vec![
        ("adopts-in-place".to_string(), adopts),
        ("image-drift".to_string(), drifted),
        ("container-missing".to_string(), missing),
    ];
    if let Some(h) = handover {
        scenarios.push((
            "credential-missing".to_string(),
            format!(
                r#"name = "cannot be used, and nothing is registered, when genesis left no `{credential}`"

[mesh]
credentials = {{}}

[expect]
outcome = "unusable"
messages = ["{credential}"]
commands = []
"#,
                credential = h.credential
            ),
        ));
    }
    Documents { manifest, lib_rs, scenarios }
}

/// The adopt-in-place plugin's source, on the SDK's helpers.
fn adopt_lib_rs(module: &str, adopted: &Adopted, handover: Option<&Handover>) -> String {
    let ty = type_name(module);
    let handover_const = match handover {
        Some(h) => format!(
            "Some((\"{secret}\", \"{credential}\", \"the {id}'s {secret}\"))",
            secret = h.secret,
            credential = h.credential,
            id = adopted.bundle_id
        ),
        None => "None".to_string(),
    };
    format!(
        r#"//! The `{module}` module adopts the `{id}` container genesis raised, in place.
//!
//! The node keys containers on their name and compares their spec, so the module's server
//! must carry the name genesis gave it and run the very image the foundation runs: anything
//! else would replace the running server instead of adopting it. A credential the server was
//! made with is handed over before the push, and after it the module waits, bounded by
//! `--wait`, until the node runs its server.

use std::time::Duration;

use mesh_adopt_sdk::foundation::adopt_in_place;
use mesh_adopt_sdk::grants::Reads;
use mesh_adopt_sdk::handover::Handover;
use mesh_adopt_sdk::host::say;
use mesh_adopt_sdk::provider::Provider;
use mesh_adopt_sdk::wait::wait_for_image;
use mesh_adopt_sdk::{{Container, Context, Plan, Plugin, Refusal, Report}};

/// The foundation bundle's id for the container this module adopts.
const ADOPTED_ID: &str = "{id}";
/// What the operator calls it.
const WHAT: &str = "{id}";
/// The genesis credential handed over as one of the module's secrets: (secret, credential,
/// what it is), or `None` when the server needs none.
const HANDOVER: Option<(&str, &str, &str)> = {handover_const};
/// What the build is for, as the operator reads it.
const BUILD_NOTE: &str = "(the server is adopted, not built)";
/// How often the node is asked whether it runs the server after the push.
const POLL: Duration = Duration::from_secs(2);

struct {ty};

/// The adopted container, once the manifest is known to adopt it in place.
fn adoptable(ctx: &Context) -> Result<&Container, Refusal> {{
    adopt_in_place(
        ctx,
        ADOPTED_ID,
        WHAT,
        "a different one would replace the running server and raise a new one on its data. Pin both to one image",
    )
}}

fn handover(ctx: &Context) -> Option<Handover<'_>> {{
    HANDOVER.map(|(secret, credential, what)| Handover::new(ctx, secret, credential, what))
}}

impl Plugin for {ty} {{
    fn check(ctx: &Context) -> Result<Plan, Refusal> {{
        let server = adoptable(ctx)?;
        // What adopt reads after the push must be granted, or check refuses now, naming it.
        Reads::new().inspect(&server.name).check(ctx)?;
        let mut summary = vec![format!("adopt `{{}}` ({{}}) in place: kept, not recreated", server.name, server.image)];
        let mut before_push = Vec::new();
        if let Some(handover) = handover(ctx) {{
            handover.check()?;
            summary.push(handover.summary());
            before_push.push(handover.command());
        }}
        Ok(Plan {{ summary, commands: Provider::new(ctx, BUILD_NOTE).commands(before_push)? }})
    }}

    fn adopt(ctx: &Context) -> Result<Report, Refusal> {{
        let server = adoptable(ctx)?;
        say(&format!("adopting {{}}: the {{WHAT}} genesis raised, unchanged", server.name));
        Provider::new(ctx, BUILD_NOTE).install(|| match handover(ctx) {{
            Some(handover) => handover.deliver(),
            None => Ok(()),
        }})?;
        let wait = Duration::from_secs(ctx.options.wait_seconds.into());
        wait_for_image(&server.name, &server.image, wait, POLL)?;
        let summary = format!("{{}} is now the {{}} module's {{WHAT}}, kept in place", server.name, ctx.module);
        say(&format!("adopted {{summary}}"));
        Ok(Report {{ summary }})
    }}
}}

mesh_adopt_sdk::export!({ty});
"#,
        id = adopted.bundle_id,
    )
}
