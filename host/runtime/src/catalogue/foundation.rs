//! The foundation bundle genesis produced: what it raised before any module system existed,
//! read and checked once so every reader sees the same resources.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;

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
fn known_and_plain(index: usize, r: &RawResource) -> Result<()> {
    let words = [("id", Some(&r.id)), ("kind", Some(&r.kind)), ("name", r.name.as_ref())];
    for (field, word) in words.into_iter().filter_map(|(field, word)| Some((field, word?))) {
        if let Some(fault) = word_fault(word) {
            bail!("resource {index}'s {field} `/resources/{index}/{field}` (`{}`) {fault}", word.escape_debug());
        }
    }
    if ResourceKind::parse(&r.kind).is_some() {
        return Ok(());
    }
    let id = r.id.escape_debug();
    let kind = r.kind.escape_debug();
    let lower = r.kind.trim().to_ascii_lowercase();
    if ResourceKind::parse(&lower).is_some() {
        bail!("resource {index} (`{id}`) is of kind `{kind}`; kinds are lower case, with no spaces (`{lower}`)");
    }
    bail!(
        "resource {index} (`{id}`) is of kind `{kind}` (`/resources/{index}/kind`), which the contract does not know; a \
         resource's kind is one of {}",
        ResourceKind::listed()
    )
}

impl Foundation {
    /// Reads a bundle file, naming the file and the resource in any error.
    pub fn load(path: &Path) -> Result<Foundation, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Foundation, || {
            let bytes = read_bounded(path, FOUNDATION_BYTES)
                .with_context(|| format!("failed to read the foundation bundle `{}`", path.display()))?;
            let foundation = Foundation::parse(&bytes)
                .with_context(|| format!("the foundation bundle `{}` is malformed", path.display()))?;
            Ok(Foundation { path: std::path::absolute(path).ok(), ..foundation })
        })
    }

    /// A bundle already in memory (a scenario's, perhaps edited), held to what
    /// [`Foundation::load`] holds a file to; `named` says in errors which document it is.
    pub fn from_memory(bytes: &[u8], named: &str) -> Result<Foundation, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Foundation, || {
            within_bound(bytes, FOUNDATION_BYTES)
                .with_context(|| format!("the foundation bundle {named} cannot be used"))?;
            Foundation::parse(bytes).with_context(|| format!("the foundation bundle {named} is malformed"))
        })
    }

    /// Parses a bundle; every container needs a name and an image, every file a path, no two
    /// resources share an id, nor two containers a name (the node keys containers on it), every
    /// resource is of a kind the contract knows ([`ResourceKind`]) and its id, kind and name
    /// are plain words ([`word_fault`]), no object gives a key twice, and no number is beyond
    /// ±2^53 (readers of JSON would not agree on its value, nor the host and a node on a spec's
    /// digest). A fault is named by its JSON Pointer.
    pub fn parse(bytes: &[u8]) -> Result<Foundation, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Foundation, || {
            let raw: RawBundle = serde_json::from_slice(bytes)?;
            no_key_twice(bytes).map_err(anyhow::Error::msg)?;
            numbers_within_safe_range(bytes).map_err(anyhow::Error::msg)?;
            let mut resources: Vec<FoundationResource> = Vec::with_capacity(raw.resources.len());
            let mut runs_with = BTreeMap::new();
            let mut specs = BTreeMap::new();
            for (index, r) in raw.resources.into_iter().enumerate() {
                known_and_plain(index, &r)?;
                if let Some(first) = resources.iter().position(|seen| seen.id() == r.id) {
                    bail!(
                        "resources {first} and {index} both have the id `{}`; ids name one resource each",
                        r.id.escape_debug()
                    );
                }
                if let Some(name) = &r.name
                    && r.kind == "container"
                    && let Some(first) = resources
                        .iter()
                        .position(|seen| matches!(seen, FoundationResource::Container { name: n, .. } if n == name))
                {
                    bail!(
                        "resources {first} and {index} (`{}`) are both containers named `{}`; the node keys containers on their name",
                        r.id.escape_debug(),
                        name.escape_debug()
                    );
                }
                let missing =
                    |field: &str| anyhow::anyhow!("resource {index} (`{}`, a {}) has no `{field}`", r.id, r.kind);
                if !r.credentials.is_empty() {
                    if r.kind != "container" {
                        bail!(
                            "resource {index} (`{}`, a {}) names credentials; only a container runs with any",
                            r.id,
                            r.kind
                        );
                    }
                    for credential in &r.credentials {
                        mesh_adopt_manifest::command::check_word("credential name", credential)
                            .map_err(|e| anyhow::anyhow!("resource {index} (`{}`) names a credential: {e}", r.id))?;
                    }
                    runs_with.insert(r.id.clone(), r.credentials.clone());
                }
                if r.kind == "container" {
                    // What a plugin's commands and the node's keys are made of: held as a module's are.
                    if let Some(name) = &r.name {
                        mesh_adopt_manifest::command::check_word("container name", name)
                            .map_err(|e| anyhow::anyhow!("resource {index} (`{}`): {e}", r.id))?;
                    }
                    if r.image.as_deref().is_some_and(|image| image.trim().is_empty()) {
                        bail!("resource {index} (`{}`, a container) names no image", r.id);
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
                    "file" => {
                        FoundationResource::File { path: r.path.clone().ok_or_else(|| missing("path"))?, id: r.id }
                    }
                    _ => FoundationResource::Other { id: r.id, kind: r.kind },
                });
            }
            Ok(Foundation { resources, digest: crate::model::digest::Sha256::of(bytes), runs_with, specs, path: None })
        })
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
