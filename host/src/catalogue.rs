//! The documents a run starts from: the catalogue's modules (a `manifest.json` with an
//! `adopt.wasm` beside it) and the foundation bundle genesis produced.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;

/// The file a module's plugin ships as, beside its manifest.
pub const PLUGIN_FILE: &str = "adopt.wasm";
/// The module's manifest.
pub const MANIFEST_FILE: &str = "manifest.json";

/// A catalogue checkout: `modules/<name>/manifest.json` (+ `adopt.wasm`).
#[derive(Debug, Clone)]
pub struct Catalogue {
    root: PathBuf,
}

/// One module as the catalogue ships it.
#[derive(Debug, Clone)]
pub struct CatalogueModule {
    /// The module's name, e.g. `postgres`.
    pub name: String,
    /// Where its manifest was read from, for messages.
    pub manifest_path: PathBuf,
    /// The manifest, byte for byte.
    pub manifest: Vec<u8>,
    /// Its adoption plugin.
    pub plugin_path: PathBuf,
    /// The manifest's word on the plugin: pin, world, grants.
    pub adopt: AdoptSection,
}

impl Catalogue {
    /// A catalogue rooted at `root`; nothing is read until a module is asked for.
    pub fn at(root: impl Into<PathBuf>) -> Catalogue {
        Catalogue { root: root.into() }
    }

    /// The catalogue's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads a module's manifest and finds its plugin, refusing a manifest that is not a
    /// JSON object or a module that ships no plugin.
    pub fn module(&self, name: &str) -> Result<CatalogueModule> {
        let dir = self.root.join("modules").join(name);
        let manifest_path = dir.join(MANIFEST_FILE);
        let manifest = std::fs::read(&manifest_path)
            .with_context(|| format!("failed to read the `{name}` module's manifest `{}`", manifest_path.display()))?;
        let parsed = ModuleManifest::parse(&manifest)
            .with_context(|| format!("the `{name}` module's manifest `{}` is malformed", manifest_path.display()))?;
        crate::grants::within_ceiling(&parsed.adopt.grants)
            .with_context(|| format!("the `{name}` module's manifest `{}` grants too much", manifest_path.display()))?;
        let plugin_file = &parsed.adopt.plugin;
        if plugin_file.is_empty() || plugin_file.contains(['/', '\\']) || plugin_file == ".." {
            bail!(
                "the `{name}` module's manifest `{}` names plugin `{plugin_file}`: it must be a file beside the manifest",
                manifest_path.display()
            );
        }
        let plugin_path = dir.join(plugin_file);
        if !plugin_path.is_file() {
            bail!(
                "the `{name}` module ships no plugin: `{}` does not exist (build the plugins with `just build-plugins`)",
                plugin_path.display()
            );
        }
        Ok(CatalogueModule { name: name.to_string(), manifest_path, manifest, plugin_path, adopt: parsed.adopt })
    }
}

/// A module manifest, read as far as the host and the simulated node need it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ModuleManifest {
    /// The module's name.
    pub name: String,
    /// What it raises on a node.
    pub resources: Vec<ManifestResource>,
    /// Named host paths its volumes refer to as `${access:<id>}`.
    pub accesses: Vec<Access>,
    /// Secrets the module declares; the node seals any not accepted before its push.
    pub secrets: Vec<String>,
    /// Subjects it speaks on the bus; a module with none is issued no account.
    #[serde(rename = "bus-subjects")]
    pub bus_subjects: Vec<String>,
    /// How the module's plugin ships and what it may do beyond the host's defaults.
    pub adopt: AdoptSection,
}

/// A manifest's `adopt` section: the catalogue author's word on the plugin.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdoptSection {
    /// The plugin's file, beside the manifest.
    pub plugin: String,
    /// The plugin's sha256, hex; when given, any other plugin is refused.
    pub sha256: Option<String>,
    /// The world the plugin targets, e.g. `mesh:adopt/adopter@0.1.0`.
    pub world: Option<String>,
    /// What the plugin may read beyond the defaults.
    pub grants: Grants,
}

impl Default for AdoptSection {
    fn default() -> Self {
        AdoptSection { plugin: PLUGIN_FILE.to_string(), sha256: None, world: None, grants: Grants::default() }
    }
}

/// What a catalogue grants its plugin. Only reads can be granted: what a plugin may tell and
/// carry is fixed by the host (its own module's provider sequence), so a manifest asking for
/// more is refused when it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Grants {
    /// Genesis credentials it may carry in, by name.
    pub credentials: Vec<String>,
    /// Containers it may inspect, by name.
    pub inspect: Vec<String>,
    /// URLs it may fetch: exact, or a prefix ending in `*`.
    pub fetch: Vec<String>,
}

/// One resource a module declares.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ManifestResource {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub image: String,
    pub volumes: Vec<String>,
}

/// A host path given to a module.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Access {
    pub id: String,
    pub path: String,
}

impl ModuleManifest {
    /// Parses a manifest; it must be a JSON object.
    pub fn parse(bytes: &[u8]) -> Result<ModuleManifest> {
        let value: serde_json::Value = serde_json::from_slice(bytes).context("not JSON")?;
        if !value.is_object() {
            bail!("not a JSON object");
        }
        serde_json::from_value(value).context("not a module manifest")
    }

    /// The container resources with every `${access:<id>}` in their volumes resolved.
    pub fn containers(&self) -> Vec<ManifestResource> {
        self.resources
            .iter()
            .filter(|r| r.kind == "container")
            .map(|r| {
                let mut resolved = r.clone();
                for volume in &mut resolved.volumes {
                    for access in &self.accesses {
                        *volume = volume.replace(&format!("${{access:{}}}", access.id), &access.path);
                    }
                }
                resolved
            })
            .collect()
    }
}

/// Maps each inside path to the host path mounted there, from `host:inside[:opts]` entries.
pub fn mounts(volumes: &[String]) -> BTreeMap<String, String> {
    volumes
        .iter()
        .filter_map(|v| {
            let mut parts = v.splitn(3, ':');
            Some((parts.nth(1)?.to_string(), v.split(':').next()?.to_string()))
        })
        .collect()
}

/// The foundation bundle: what genesis raised, before any module system existed.
#[derive(Debug, Clone, Default)]
pub struct Foundation {
    /// Its resources, in the bundle's order.
    pub resources: Vec<FoundationResource>,
}

/// One resource of the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundationResource {
    /// A container genesis raised.
    Container { id: String, name: String, image: String, volumes: Vec<String> },
    /// A file genesis placed.
    File { id: String, path: String },
    /// Any other kind, kept so refusals can list it.
    Other { id: String, kind: String },
}

impl FoundationResource {
    /// The bundle's identity for it.
    pub fn id(&self) -> &str {
        match self {
            FoundationResource::Container { id, .. }
            | FoundationResource::File { id, .. }
            | FoundationResource::Other { id, .. } => id,
        }
    }
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
}

impl Foundation {
    /// Reads a bundle file, naming the file and the resource in any error.
    pub fn load(path: &Path) -> Result<Foundation> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("failed to read the foundation bundle `{}`", path.display()))?;
        Foundation::parse(&bytes).with_context(|| format!("the foundation bundle `{}` is malformed", path.display()))
    }

    /// Parses a bundle; every container needs a name and an image, every file a path.
    pub fn parse(bytes: &[u8]) -> Result<Foundation> {
        let raw: RawBundle = serde_json::from_slice(bytes)?;
        let mut resources = Vec::with_capacity(raw.resources.len());
        for (index, r) in raw.resources.into_iter().enumerate() {
            let missing = |field: &str| anyhow::anyhow!("resource {index} (`{}`, a {}) has no `{field}`", r.id, r.kind);
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
        Ok(Foundation { resources })
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
    fn names_the_resource_missing_a_field() {
        let err = Foundation::parse(br#"{"resources":[{"id":"store","kind":"container","name":"s"}]}"#).unwrap_err();
        assert_eq!(err.to_string(), "resource 0 (`store`, a container) has no `image`");
    }

    #[test]
    fn reads_mounts_with_options() {
        let m = mounts(&["/a:/data".into(), "/b:/etc/nats:ro".into()]);
        assert_eq!(m["/data"], "/a");
        assert_eq!(m["/etc/nats"], "/b");
    }
}
