//! A module that adopts, in place, a container genesis raised: what the foundation bundle and
//! the genesis credentials say of it, and the manifest, plugin source and scenarios that keep
//! it, the source and scenarios kept in `adopted/`.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use mesh_adopt_runtime::Foundation;
use mesh_adopt_runtime::catalogue::FoundationResource;

use super::{Adopted, Documents, Handover, fill, pretty, sequence, type_name};

/// The plugin's `src/lib.rs`, on the SDK's helpers, with `{{module}}`, `{{type}}`, `{{id}}`
/// (the container's bundle id) and `{{handover}}` (its `HANDOVER`) to fill in.
const LIB_RS: &str = include_str!("adopted/lib.rs.in");

/// The scenario it adopts in: `{{name}}` (the container's), `{{container}}` (as a TOML
/// string), `{{commands}}` and `{{accepted}}` to fill in.
const ADOPTS_IN_PLACE: &str = include_str!("adopted/scenarios/adopts-in-place.toml.in");

/// The scenario it refuses a server of another image in, with `{{module}}` to fill in.
const IMAGE_DRIFT: &str = include_str!("adopted/scenarios/image-drift.toml.in");

/// The scenario it refuses a foundation without the container in, with `{{id}}` and
/// `{{id_json}}` (as a TOML string) to fill in.
const CONTAINER_MISSING: &str = include_str!("adopted/scenarios/container-missing.toml.in");

/// The scenario genesis left no credential to hand over in, with `{{credential}}` to fill in.
const CREDENTIAL_MISSING: &str = include_str!("adopted/scenarios/credential-missing.toml.in");

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
/// builder mounts what genesis mounted. A volume whose host side is no absolute path (an
/// engine's named volume) is no place on the node an access could name: it is kept as it is.
fn accesses(volumes: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let mut mounts = Vec::new();
    let mut accesses: Vec<(String, String)> = Vec::new();
    for volume in volumes {
        let Some((host, rest)) = volume.split_once(':').filter(|(host, _)| host.starts_with('/')) else {
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
            "world": mesh_adopt_runtime::plugin::WORLD,
            "source": "plugin",
            "grants": {
                "credentials": handover.map(|h| h.credential.clone()).into_iter().collect::<Vec<_>>(),
                "inspect": [adopted.name],
            },
        },
    }));
    let json = |v: &str| serde_json::to_string(v).expect("a string serialises");
    let lib_rs = lib_rs(module, adopted, handover);
    let accept: Vec<String> = handover
        .map(|h| format!("secret accept node-1 {module} {} --from /accepting-{}", h.secret, h.secret))
        .into_iter()
        .collect();
    let accepted = handover.map(|h| format!("{:?}", format!("{module}/{}", h.secret))).unwrap_or_default();
    let adopts = fill(
        ADOPTS_IN_PLACE,
        &[
            ("name", &adopted.name),
            ("container", &json(&adopted.name)),
            ("commands", &sequence(module, &accept)),
            ("accepted", &accepted),
        ],
    );
    let drifted = fill(IMAGE_DRIFT, &[("module", module)]);
    let missing = fill(CONTAINER_MISSING, &[("id", &adopted.bundle_id), ("id_json", &json(&adopted.bundle_id))]);
    let mut scenarios = vec![
        ("adopts-in-place".to_string(), adopts),
        ("image-drift".to_string(), drifted),
        ("container-missing".to_string(), missing),
    ];
    if let Some(h) = handover {
        scenarios.push(("credential-missing".to_string(), fill(CREDENTIAL_MISSING, &[("credential", &h.credential)])));
    }
    Documents { manifest, lib_rs, scenarios }
}

/// The adopt-in-place plugin's source, on the SDK's helpers.
fn lib_rs(module: &str, adopted: &Adopted, handover: Option<&Handover>) -> String {
    let handover_const = match handover {
        Some(h) => format!(
            "Some((\"{secret}\", \"{credential}\", \"the {id}'s {secret}\"))",
            secret = h.secret,
            credential = h.credential,
            id = adopted.bundle_id
        ),
        None => "None".to_string(),
    };
    fill(
        LIB_RS,
        &[("module", module), ("type", &type_name(module)), ("id", &adopted.bundle_id), ("handover", &handover_const)],
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_host_path_becomes_an_access_and_a_named_volume_stays_as_it_is() {
        let volumes = ["/var/lib/mesh/store:/var/lib/postgresql/data".to_string(), "pgdata:/cache:ro".to_string()];
        let (mounts, accesses) = super::accesses(&volumes);
        assert_eq!(mounts, ["${access:data}:/var/lib/postgresql/data", "pgdata:/cache:ro"]);
        assert_eq!(accesses, [("data".to_string(), "/var/lib/mesh/store".to_string())]);
    }
}
