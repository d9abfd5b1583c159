//! The documents a run starts from: the catalogue's modules (a `manifest.json` with an
//! `adopt.wasm` beside it) and the foundation bundle genesis produced.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;

pub use mesh_adopt_manifest::{
    Access, AdoptSection, Grants, ManifestResource, ModuleManifest, PLUGIN_FILE, ParseError, mounts,
};

/// The module's manifest.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The largest manifest read: real ones are a few KiB.
pub const MANIFEST_BYTES: u64 = 1 << 20;

/// The largest foundation bundle read.
pub const FOUNDATION_BYTES: u64 = 16 << 20;

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
    /// The plugin file's metadata as it was found, so loading it needs no second look.
    pub plugin_file: std::fs::Metadata,
    /// The manifest's word on the plugin: pin, world, grants.
    pub adopt: AdoptSection,
    /// The secrets the manifest declares; the only ones the plugin may have accepted.
    pub secrets: Vec<String>,
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

    /// The names of the modules the catalogue holds, sorted; `None` without a `modules/`.
    pub fn module_names(&self) -> Option<Vec<String>> {
        let entries = std::fs::read_dir(self.root.join("modules")).ok()?;
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join(MANIFEST_FILE).is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Some(names)
    }

    /// Reads a module's manifest and finds its plugin, refusing a manifest that is not a
    /// JSON object or a module that ships no plugin.
    pub fn module(&self, name: &str) -> Result<CatalogueModule> {
        crate::options::check_module_name(name)?;
        let dir = self.root.join("modules").join(name);
        let manifest_path = dir.join(MANIFEST_FILE);
        if !dir.exists() {
            bail!(
                "the catalogue `{}` has no module `{name}` (no `modules/{name}/`); it has {}",
                self.root.display(),
                self.module_names().map_or_else(|| "no modules/ directory".to_string(), |names| names.join(", "))
            );
        }
        let manifest = read_bounded(&manifest_path, MANIFEST_BYTES)
            .with_context(|| format!("failed to read the `{name}` module's manifest `{}`", manifest_path.display()))?;
        let parsed = ModuleManifest::parse(&manifest)
            .with_context(|| format!("the `{name}` module's manifest `{}` is malformed", manifest_path.display()))?;
        if parsed.name != name {
            bail!(
                "the manifest `{}` is named `{}`, but it lives in `modules/{name}`: a manifest's `name` must be its \
                 directory's, or the control plane would register another module",
                manifest_path.display(),
                parsed.name.escape_debug()
            );
        }
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
        let plugin_file = match std::fs::metadata(&plugin_path) {
            Ok(meta) if meta.is_file() => meta,
            Ok(_) => bail!("the `{name}` module's plugin `{}` is not a regular file", plugin_path.display()),
            Err(_) => bail!(
                "the `{name}` module ships no plugin: `{}` does not exist (build the plugins with `just build-plugins`)",
                plugin_path.display()
            ),
        };
        if let Some(pin) = &parsed.adopt.sha256
            && !(pin.trim().len() == 64 && pin.trim().chars().all(|c| c.is_ascii_hexdigit()))
        {
            bail!(
                "the `{name}` module's manifest `{}` pins `{}`, which is not a sha256 (64 hex digits)",
                manifest_path.display(),
                pin.escape_debug()
            );
        }
        Ok(CatalogueModule {
            name: name.to_string(),
            manifest_path,
            manifest,
            plugin_path,
            plugin_file,
            adopt: parsed.adopt,
            secrets: parsed.secrets,
        })
    }
}

/// sha256 of `bytes`, in hex: how plugins are pinned and documents are named in saved plans.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))
}

/// Reads a file of at most `limit` bytes, refusing a larger one before reading it.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        bail!("it is larger than the {limit} bytes allowed");
    }
    Ok(bytes)
}

/// The foundation bundle: what genesis raised, before any module system existed.
#[derive(Debug, Clone, Default)]
pub struct Foundation {
    /// Its resources, in the bundle's order.
    pub resources: Vec<FoundationResource>,
    /// The sha256 of the bytes it was read from, for saved plans.
    pub digest: String,
}

/// One resource of the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundationResource {
    /// A container genesis raised.
    Container {
        /// The bundle's id for it, as manifests' `adopts` name it.
        id: String,
        /// The container's name on the node.
        name: String,
        /// The image it runs.
        image: String,
        /// Its volumes, as genesis mounted them.
        volumes: Vec<String>,
    },
    /// A file genesis placed.
    File {
        /// The bundle's id for it.
        id: String,
        /// Where it is on the node.
        path: String,
    },
    /// Any other kind, kept so refusals can list it.
    Other {
        /// The bundle's id for it.
        id: String,
        /// Its kind, as the bundle says.
        kind: String,
    },
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
        let bytes = read_bounded(path, FOUNDATION_BYTES)
            .with_context(|| format!("failed to read the foundation bundle `{}`", path.display()))?;
        Foundation::parse(&bytes).with_context(|| format!("the foundation bundle `{}` is malformed", path.display()))
    }

    /// Parses a bundle; every container needs a name and an image, every file a path, and no
    /// two resources share an id, nor two containers a name (the node keys containers on it).
    pub fn parse(bytes: &[u8]) -> Result<Foundation> {
        let raw: RawBundle = serde_json::from_slice(bytes)?;
        let mut resources: Vec<FoundationResource> = Vec::with_capacity(raw.resources.len());
        for (index, r) in raw.resources.into_iter().enumerate() {
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
        Ok(Foundation { resources, digest: sha256_hex(bytes) })
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
    fn refuses_two_resources_with_one_id_or_two_containers_with_one_name() {
        let twice = Foundation::parse(
            br#"{"resources":[{"id":"broker","kind":"file","path":"/a"},{"id":"broker","kind":"file","path":"/b"}]}"#,
        )
        .unwrap_err();
        assert!(twice.to_string().contains("both have the id `broker`"), "{twice}");
        let named = Foundation::parse(
            br#"{"resources":[{"id":"broker","kind":"container","name":"bus","image":"a"},
                              {"id":"other","kind":"container","name":"bus","image":"b"}]}"#,
        )
        .unwrap_err();
        assert!(named.to_string().contains("both containers named `bus`"), "{named}");
    }
}
