//! The foundation bundle genesis produced: what it raised before any module system existed,
//! read and checked once so every reader sees the same resources.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use serde::Deserialize;

use super::error::{BundleFault, FoundationError};

use crate::files::{read_bounded, within_bound};
use crate::model::FoundationResource;
use crate::model::spec::{ContainerSpec, Spec};
use mesh_adopt_manifest::ResourceKind;
use mesh_adopt_manifest::validity::{no_key_twice, numbers_within_safe_range, word_fault};

/// The owner a node records for what genesis raised.
pub const GENESIS_OWNER: &str = "genesis";

/// The largest foundation bundle read.
pub const FOUNDATION_BYTES: u64 = 16 << 20;

/// The foundation bundle: what genesis raised, before any module system existed.
#[derive(Debug, Clone, Default)]
pub struct Foundation {
    /// Its resources, in the bundle's order.
    pub resources: Vec<FoundationResource>,
    /// The sha256 of the bytes it was read from, for saved plans.
    pub digest: crate::model::digest::Sha256,
    /// The genesis credentials each container runs with, by the container's id, as the bundle
    /// says (`"credentials": [...]` on a container): whichever module adopts it must hand them
    /// over, whatever that module declares.
    pub runs_with: BTreeMap<String, Vec<String>>,
    /// Each container's whole spec as the bundle writes it, by the container's name: what the
    /// node compares a module's container with (docs/push-rule.md).
    pub specs: BTreeMap<String, Spec>,
    /// The file the bundle was read from, absolute; `None` for one parsed from memory. A run's
    /// record names it, so a replay started anywhere reads the same bundle.
    pub path: Option<PathBuf>,
}

#[derive(Deserialize)]
struct RawBundle {
    resources: Vec<RawResource>,
}

#[derive(Deserialize)]
struct RawResource {
    id: String,
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    volumes: Vec<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    credentials: Vec<String>,
    /// Every other field: part of a container's spec.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// Refuses a resource whose id, kind or name is no plain word ([`word_fault`]), or whose kind
/// the contract does not know: `Container` for `container` is a mistake said as such, and
/// `../../etc` is no kind at all (taken for one, the resource would be passed over unraised).
fn known_and_plain(index: usize, r: &RawResource) -> Result<(), BundleFault> {
    let words = [("id", Some(&r.id)), ("kind", Some(&r.kind)), ("name", r.name.as_ref())];
    for (field, word) in words.into_iter().filter_map(|(field, word)| Some((field, word?))) {
        if let Some(fault) = word_fault(word) {
            return Err(BundleFault::NotAWord { index, field, word: word.clone(), fault });
        }
    }
    if ResourceKind::parse(&r.kind).is_some() {
        return Ok(());
    }
    let (id, kind) = (r.id.clone(), r.kind.clone());
    let lower = r.kind.trim().to_ascii_lowercase();
    match ResourceKind::parse(&lower) {
        Some(_) => Err(BundleFault::KindCase { index, id, kind, lower }),
        None => Err(BundleFault::UnknownKind { index, id, kind }),
    }
}

impl Foundation {
    /// Reads a bundle file, naming the file and the resource in any error.
    pub fn load(path: &Path) -> Result<Foundation, FoundationError> {
        let bytes = read_bounded(path, FOUNDATION_BYTES)
            .map_err(|source| FoundationError::Unreadable { path: path.to_path_buf(), source })?;
        let foundation = Foundation::parse(&bytes).map_err(|fault| FoundationError::Malformed {
            named: format!("`{}`", path.display()),
            path: Some(path.to_path_buf()),
            fault,
        })?;
        Ok(Foundation { path: std::path::absolute(path).ok(), ..foundation })
    }

    /// A bundle already in memory (a scenario's, perhaps edited), held to what
    /// [`Foundation::load`] holds a file to; `named` says in errors which document it is.
    pub fn from_memory(bytes: &[u8], named: &str) -> Result<Foundation, FoundationError> {
        within_bound(bytes, FOUNDATION_BYTES)
            .map_err(|source| FoundationError::TooLarge { named: named.to_string(), source })?;
        Foundation::parse(bytes).map_err(|fault| FoundationError::Malformed {
            named: named.to_string(),
            path: None,
            fault,
        })
    }

    /// Parses a bundle; every container needs a name and an image, every file a path, no two
    /// resources share an id, nor two containers a name (the node keys containers on it), every
    /// resource is of a kind the contract knows ([`ResourceKind`]) and its id, kind and name
    /// are plain words ([`word_fault`]), no object gives a key twice, and no number is beyond
    /// ±2^53 (readers of JSON would not agree on its value, nor the host and a node on a spec's
    /// digest). A fault is named by its JSON Pointer.
    pub fn parse(bytes: &[u8]) -> Result<Foundation, BundleFault> {
        let raw: RawBundle = serde_json::from_slice(bytes).map_err(|e| BundleFault::Json(Arc::new(e)))?;
        no_key_twice(bytes).map_err(BundleFault::Ambiguous)?;
        numbers_within_safe_range(bytes).map_err(BundleFault::Ambiguous)?;
        let mut resources: Vec<FoundationResource> = Vec::with_capacity(raw.resources.len());
        let mut runs_with = BTreeMap::new();
        let mut specs = BTreeMap::new();
        for (index, r) in raw.resources.into_iter().enumerate() {
            known_and_plain(index, &r)?;
            if let Some(first) = resources.iter().position(|seen| seen.id() == r.id) {
                return Err(BundleFault::SameId { first, index, id: r.id });
            }
            if let Some(name) = &r.name
                && r.kind == "container"
                && let Some(first) = resources
                    .iter()
                    .position(|seen| matches!(seen, FoundationResource::Container { name: n, .. } if n == name))
            {
                return Err(BundleFault::SameName { first, index, id: r.id.clone(), name: name.clone() });
            }
            let missing =
                |field: &'static str| BundleFault::Missing { index, id: r.id.clone(), kind: r.kind.clone(), field };
            if !r.credentials.is_empty() {
                if r.kind != "container" {
                    return Err(BundleFault::CredentialsNotRun { index, id: r.id, kind: r.kind });
                }
                for credential in &r.credentials {
                    mesh_adopt_manifest::command::check_word("credential name", credential)
                        .map_err(|why| BundleFault::CredentialName { index, id: r.id.clone(), why })?;
                }
                runs_with.insert(r.id.clone(), r.credentials.clone());
            }
            if r.kind == "container" {
                // What a plugin's commands and the node's keys are made of: held as a module's are.
                if let Some(name) = &r.name {
                    mesh_adopt_manifest::command::check_word("container name", name)
                        .map_err(|why| BundleFault::ContainerName { index, id: r.id.clone(), why })?;
                }
                if r.image.as_deref().is_some_and(|image| image.trim().is_empty()) {
                    return Err(BundleFault::NoImage { index, id: r.id });
                }
            }
            if r.kind == "container"
                && let (Some(name), Some(image)) = (&r.name, &r.image)
            {
                specs.insert(name.clone(), Spec::from_fields(name, image, &r.volumes, &r.other));
            }
            resources.push(match r.kind.as_str() {
                "container" => FoundationResource::Container {
                    name: r.name.clone().ok_or_else(|| missing("name"))?,
                    image: r.image.clone().ok_or_else(|| missing("image"))?,
                    volumes: r.volumes,
                    id: r.id,
                },
                "file" => FoundationResource::File { path: r.path.clone().ok_or_else(|| missing("path"))?, id: r.id },
                _ => FoundationResource::Other { id: r.id, kind: r.kind },
            });
        }
        Ok(Foundation { resources, digest: crate::model::digest::Sha256::of(bytes), runs_with, specs, path: None })
    }

    /// The container named `name` as genesis raised it, with its spec digest: what the node
    /// runs before any module has pushed.
    pub fn raised(&self, name: &str) -> Option<ContainerSpec> {
        self.resources.iter().find_map(|r| match r {
            FoundationResource::Container { name: n, image, volumes, .. } if n == name => Some(
                ContainerSpec::new(image.clone(), Some(volumes.clone()))
                    .with_digest(self.specs.get(name).map(Spec::digest))
                    .with_owner(Some(GENESIS_OWNER.to_string())),
            ),
            _ => None,
        })
    }

    /// The container the bundle calls `id`, if it is one.
    pub fn container(&self, id: &str) -> Option<(&str, &str, &[String])> {
        self.resources.iter().find_map(|r| match r {
            FoundationResource::Container { id: i, name, image, volumes } if i == id => {
                Some((name.as_str(), image.as_str(), volumes.as_slice()))
            }
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_catalogues_digests_are_what_they_were_before_rfc_8785() {
        // Digests taken with the form the push rule wrote before RFC 8785 (keys sorted by code
        // point, serde_json's strings): every shipped spec is strings only, where the two agree.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let read = |path: &str| std::fs::read(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut digests = Vec::new();
        for catalogue in ["catalogue", "node/catalogue"] {
            let foundation = Foundation::parse(&read(&format!("{catalogue}/foundation.json"))).unwrap();
            for (name, spec) in &foundation.specs {
                digests.push((
                    format!("{catalogue}/foundation.json {name}"),
                    spec.digest().to_string().trim_start_matches("sha256:").to_string(),
                ));
            }
            for module in ["mesh-vault", "nats", "postgres"] {
                let path = format!("{catalogue}/modules/{module}/manifest.json");
                let manifest = mesh_adopt_manifest::ModuleManifest::parse(&read(&path)).unwrap();
                for container in manifest.resolved_containers() {
                    digests.push((
                        format!("{path} {}", container.name),
                        crate::model::spec::Spec::of_module(&container)
                            .digest()
                            .to_string()
                            .trim_start_matches("sha256:")
                            .to_string(),
                    ));
                }
            }
        }
        let before = [
            ("catalogue/foundation.json mesh-bus", "696f7503c5a5ae032a70b7317149d6a483847d27430e6a529f8cbecebeedce7f"),
            (
                "catalogue/foundation.json mesh-control",
                "0d70a35d3df70fc11eaf92125a5163c46b4e11588c9e571f5f3018832841ae34",
            ),
            (
                "catalogue/foundation.json mesh-store",
                "a60ea3086ef6c8411d8f6e418cd0e2491c375efaf39a71b06c6bf7288f31c12c",
            ),
            (
                "catalogue/modules/mesh-vault/manifest.json mesh-vault",
                "bf60e71d3180abdd90a444b1671ea60f8800cfa5aaabb96d0458fce2f00e2f7f",
            ),
            (
                "catalogue/modules/nats/manifest.json mesh-bus",
                "6f9ddd649c4d23311802964b15445350d27df61c0aa8069ad11068674bb0d36e",
            ),
            (
                "catalogue/modules/postgres/manifest.json mesh-store",
                "a60ea3086ef6c8411d8f6e418cd0e2491c375efaf39a71b06c6bf7288f31c12c",
            ),
            (
                "node/catalogue/foundation.json mesh-bus",
                "eb913852636e559bd6c628c7e5a133c660a3a8895f09e1f92be353e4c6b44a31",
            ),
            (
                "node/catalogue/foundation.json mesh-control",
                "7d82d892d216b0fe82c330b8a5b09deaf2c3f580102d78a011fb2e9e2ce6d46c",
            ),
            (
                "node/catalogue/foundation.json mesh-store",
                "d439a78da64366ed91bc73523b9fb6d1182185eefbd2f1f92e4d8f6d2fc012d4",
            ),
            (
                "node/catalogue/modules/mesh-vault/manifest.json mesh-vault",
                "44ac1d10bff9e40605c69985540f865905d880ddbb847e5791e57c78d4a9fdc0",
            ),
            (
                "node/catalogue/modules/nats/manifest.json mesh-bus",
                "ab2ece18ec5fd1d4aefaf39772aab03ea03ca1dc1f407bf7a673582e530acf19",
            ),
            (
                "node/catalogue/modules/postgres/manifest.json mesh-store",
                "d439a78da64366ed91bc73523b9fb6d1182185eefbd2f1f92e4d8f6d2fc012d4",
            ),
        ];
        let before: Vec<(String, String)> = before.iter().map(|(at, d)| (at.to_string(), d.to_string())).collect();
        assert_eq!(digests, before);
    }
}
