//! A module that adopts, in place, a container genesis raised: what the foundation bundle and
//! the genesis credentials say of it, and the manifest and scenarios that keep it.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::{Foundation, FoundationResource};

use super::{Adopted, Documents, Handover, pretty, rust, sequence};

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
    let lib_rs = rust::adopt_lib_rs(module, adopted, handover);
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
