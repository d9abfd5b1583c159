//! The documents a run starts from: the catalogue's modules (a `manifest.json` with an
//! `adopt.wasm` beside it) and the foundation bundle genesis produced.

pub mod credentials;
pub mod plan_key;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;

pub use crate::model::FoundationResource;

pub use mesh_adopt_manifest::{AdoptSection, ModuleManifest};

/// The module's manifest.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The largest manifest read: real ones are a few KiB.
pub const MANIFEST_BYTES: u64 = 1 << 20;

/// The largest foundation bundle read.
pub const FOUNDATION_BYTES: u64 = 16 << 20;

/// A catalogue checkout: `modules/<name>/manifest.json` (+ `adopt.wasm`), read from disk, or
/// the same documents held in memory (a scenario's catalogue, edited), checked the same way.
#[derive(Debug, Clone)]
pub struct Catalogue {
    root: PathBuf,
    /// The modules, when they are held in memory rather than read from `root`; shared, so a
    /// sweep's thousand runs of one scenario hold one copy.
    in_memory: Option<Arc<BTreeMap<String, ModuleFiles>>>,
}

/// A module's directory as a catalogue holds it in memory: its manifest's bytes and what
/// else the directory has. The plugin stays in its file, named by its real path and known
/// by the metadata found here, so the loader recognises a plugin it already linked without
/// reading it again.
#[derive(Debug, Clone)]
pub struct ModuleFiles {
    /// Where the manifest was read from: what messages name, even once it is edited.
    pub manifest_path: PathBuf,
    /// The manifest's bytes (a scenario's edits applied), or why they could not be read: kept
    /// to be reported when the module is asked for, as a run on disk reports it.
    pub manifest: Result<Vec<u8>, String>,
    /// Every entry beside the manifest, by file name, with its metadata (symlinks followed, as
    /// [`std::fs::metadata`] does): where the manifest's `plugin` is looked up.
    pub files: BTreeMap<String, std::fs::Metadata>,
}

impl ModuleFiles {
    /// Reads the module directory `dir`: its manifest (bounded as a run bounds it) and the
    /// metadata of everything beside it. Only a directory that cannot be listed is an error.
    pub fn read(dir: &Path) -> Result<ModuleFiles, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Catalogue, || {
            let manifest_path = dir.join(MANIFEST_FILE);
            let manifest = read_bounded(&manifest_path, MANIFEST_BYTES).map_err(|e| format!("{e:#}"));
            let mut files = BTreeMap::new();
            for entry in std::fs::read_dir(dir).with_context(|| format!("failed to read `{}`", dir.display()))? {
                let entry = entry.with_context(|| format!("failed to read `{}`", dir.display()))?;
                if let (Some(name), Ok(meta)) = (entry.file_name().to_str(), std::fs::metadata(entry.path())) {
                    files.insert(name.to_string(), meta);
                }
            }
            Ok(ModuleFiles { manifest_path, manifest, files })
        })
    }
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
    /// The whole manifest as parsed: what the run predicts the module's push from.
    pub parsed: ModuleManifest,
}

impl Catalogue {
    /// A catalogue rooted at `root`; nothing is read until a module is asked for.
    pub fn at(root: impl Into<PathBuf>) -> Catalogue {
        Catalogue { root: root.into(), in_memory: None }
    }

    /// A catalogue whose modules (by directory name) are held in memory, as read from the
    /// checkout at `root` and perhaps edited: nothing of it is read or written again, and
    /// [`Catalogue::module`] checks each entry exactly as it checks one on disk.
    pub fn in_memory(root: impl Into<PathBuf>, modules: BTreeMap<String, ModuleFiles>) -> Catalogue {
        Catalogue { root: root.into(), in_memory: Some(Arc::new(modules)) }
    }

    /// Every module directory of the checkout that holds a manifest, read into memory: what
    /// [`Catalogue::in_memory`] is built from.
    pub fn read_modules(&self) -> Result<BTreeMap<String, ModuleFiles>, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Catalogue, || {
            if let Some(modules) = &self.in_memory {
                return Ok(modules.as_ref().clone());
            }
            let dir = self.root.join("modules");
            let mut modules = BTreeMap::new();
            for entry in std::fs::read_dir(&dir).with_context(|| format!("failed to read `{}`", dir.display()))? {
                let module_dir = entry.with_context(|| format!("failed to read `{}`", dir.display()))?.path();
                if let Some(name) = module_dir.file_name().and_then(|n| n.to_str())
                    && module_dir.join(MANIFEST_FILE).is_file()
                {
                    modules.insert(name.to_string(), ModuleFiles::read(&module_dir)?);
                }
            }
            Ok(modules)
        })
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
    pub fn module(&self, name: &str) -> Result<CatalogueModule, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Catalogue, || {
            crate::model::options::check_module_name(name)?;
            let dir = self.root.join("modules").join(name);
            let Some(modules) = &self.in_memory else {
                let manifest_path = dir.join(MANIFEST_FILE);
                if !dir.exists() {
                    bail!(
                        "the catalogue `{}` has no module `{name}` (no `modules/{name}/`); it has {}",
                        self.root.display(),
                        self.module_names()
                            .map_or_else(|| "no modules/ directory".to_string(), |names| names.join(", "))
                    );
                }
                inside(&self.root.join("modules"), &manifest_path).with_context(|| {
                    format!("the `{name}` module's manifest `{}` cannot be used", manifest_path.display())
                })?;
                let manifest = read_bounded(&manifest_path, MANIFEST_BYTES).with_context(|| {
                    format!("failed to read the `{name}` module's manifest `{}`", manifest_path.display())
                })?;
                let found = entry(name, &dir, manifest_path, manifest, |file| std::fs::metadata(dir.join(file)).ok())?;
                inside(&self.root.join("modules"), &found.plugin_path).with_context(|| {
                    format!("the `{name}` module's plugin `{}` cannot be used", found.plugin_path.display())
                })?;
                return Ok(found);
            };
            let Some(files) = modules.get(name) else {
                bail!(
                    "failed to read the `{name}` module's manifest `{}`: the catalogue has no such module",
                    dir.join(MANIFEST_FILE).display()
                );
            };
            let manifest = files
                .manifest
                .clone()
                .map_err(anyhow::Error::msg)
                .and_then(|bytes| Ok(within_bound(&bytes, MANIFEST_BYTES).map(|()| bytes)?))
                .with_context(|| {
                    format!("failed to read the `{name}` module's manifest `{}`", files.manifest_path.display())
                })?;
            entry(name, &dir, files.manifest_path.clone(), manifest, |file| files.files.get(file).cloned())
        })
    }
}

/// Checks one module's entry, wherever its manifest came from: the manifest parses, is named
/// after its directory, grants no more than any catalogue may, names a plugin file beside it
/// that `find` finds as a regular file, and pins a well-formed sha256 if it pins one.
fn entry(
    name: &str,
    dir: &Path,
    manifest_path: PathBuf,
    manifest: Vec<u8>,
    find: impl Fn(&str) -> Option<std::fs::Metadata>,
) -> Result<CatalogueModule> {
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
    ids_once(&parsed)
        .with_context(|| format!("the `{name}` module's manifest `{}` is ambiguous", manifest_path.display()))?;
    well_formed(&manifest, &parsed)
        .with_context(|| format!("the `{name}` module's manifest `{}` is malformed", manifest_path.display()))?;
    no_key_twice(&manifest)
        .with_context(|| format!("the `{name}` module's manifest `{}` is ambiguous", manifest_path.display()))?;
    within_ceiling(&parsed.adopt.grants)
        .with_context(|| format!("the `{name}` module's manifest `{}` grants too much", manifest_path.display()))?;
    let plugin_file = &parsed.adopt.plugin;
    if plugin_file.is_empty() || plugin_file.contains(['/', '\\']) || plugin_file == ".." {
        bail!(
            "the `{name}` module's manifest `{}` names plugin `{plugin_file}`: it must be a file beside the manifest",
            manifest_path.display()
        );
    }
    let plugin_path = dir.join(plugin_file);
    let plugin_file = match find(plugin_file) {
        Some(meta) if meta.is_file() => meta,
        Some(_) => bail!("the `{name}` module's plugin `{}` is not a regular file", plugin_path.display()),
        None => return Err(crate::error::Error::NoPlugin { module: name.to_string(), path: plugin_path }.into()),
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
        adopt: parsed.adopt.clone(),
        secrets: parsed.secrets.clone(),
        parsed,
    })
}

/// Refuses a manifest the control plane could not take as it is: bytes that are not UTF-8
/// (registered byte for byte, whatever a field the host skips holds), a container with no
/// name or image or a name a command could misread, a volume whose `${access:…}` names no
/// access.
fn well_formed(bytes: &[u8], manifest: &ModuleManifest) -> Result<()> {
    if let Err(e) = std::str::from_utf8(bytes) {
        bail!("it is not UTF-8 (the byte at offset {} is not)", e.valid_up_to());
    }
    if manifest.resources.is_empty() {
        bail!("its `resources` list nothing: a module raises something on its node, or there is nothing to install");
    }
    for container in manifest.resolved_containers() {
        let id = container.id.escape_debug();
        if container.image.trim().is_empty() {
            bail!("its container `{id}` names no image");
        }
        mesh_adopt_manifest::command::check_word("container name", &container.name)
            .map_err(|e| anyhow::anyhow!("its container `{id}`: {e}"))?;
        if let Some(volume) = container.volumes.iter().find(|v| v.contains("${access:")) {
            let ids: Vec<String> = manifest.accesses.iter().map(|a| format!("`{}`", a.id)).collect();
            bail!(
                "its container `{id}` mounts `{}`, whose `${{access:…}}` names no access (it declares {})",
                volume.escape_debug(),
                if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
            );
        }
    }
    Ok(())
}

/// Refuses a JSON document in which an object gives a key twice, wherever it is and whether
/// or not the host reads it: the manifest is registered byte for byte, and which of the two
/// counts would be up to each reader (the control plane's may take the other).
pub(crate) fn no_key_twice(bytes: &[u8]) -> Result<()> {
    use serde::de::{Deserializer as _, MapAccess, SeqAccess, Visitor};
    /// Walks any JSON value, failing at the first object that gives a key twice.
    struct Walk;
    impl<'de> Visitor<'de> for Walk {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            let mut keys = std::collections::BTreeSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key.clone()) {
                    return Err(serde::de::Error::custom(format!("the key `{}` is given twice", key.escape_debug())));
                }
                map.next_value_seed(Seed)?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
            while seq.next_element_seed(Seed)?.is_some() {}
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> std::result::Result<(), E> {
            Ok(())
        }
    }
    struct Seed;
    impl<'de> serde::de::DeserializeSeed<'de> for Seed {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            d.deserialize_any(Walk)
        }
    }
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    reader.deserialize_any(Walk).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Refuses what a reader could take two ways: two resources or two accesses with one id (a
/// volume's `${access:…}` would resolve to either), or a resource of type `Container` (read as
/// some other kind, so never predicted).
fn ids_once(manifest: &ModuleManifest) -> Result<()> {
    let twice =
        |ids: Vec<&str>| ids.iter().enumerate().find(|(i, id)| ids[..*i].contains(id)).map(|(_, id)| id.to_string());
    if let Some(id) = twice(manifest.resources.iter().map(|r| r.id.as_str()).collect()) {
        bail!("two of its resources have the id `{}`", id.escape_debug());
    }
    if let Some(id) = twice(manifest.accesses.iter().map(|a| a.id.as_str()).collect()) {
        bail!(
            "two of its accesses have the id `{}`, so `${{access:{}}}` could mean either",
            id.escape_debug(),
            id.escape_debug()
        );
    }
    if let Some(r) =
        manifest.resources.iter().find(|r| r.kind != "container" && r.kind.trim().eq_ignore_ascii_case("container"))
    {
        bail!(
            "its resource `{}` is of type `{}`; a container's type is `container`",
            r.id.escape_debug(),
            r.kind.escape_debug()
        );
    }
    Ok(())
}

/// sha256 of `bytes`, in hex: how plugins are pinned and documents are named in saved plans.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))
}

/// Reads a file of at most `limit` bytes, refusing a larger one before reading it.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::io::Read;
        let file = open_regular(path)?;
        // Refused before reading, where the file says its size.
        let size = file.metadata()?.len();
        if size > limit {
            bail!("it is {size} bytes, larger than the {limit} bytes allowed");
        }
        let mut bytes = Vec::new();
        file.take(limit + 1).read_to_end(&mut bytes)?;
        within_bound(&bytes, limit)?;
        Ok(bytes)
    })
}

/// Opens `path` to read, refusing anything but a regular file (symlinks followed). The open
/// itself never waits (a FIFO's writer, a device), and what is checked is the file opened,
/// so nothing put in place after a look can hold the program either.
pub fn open_regular(path: &Path) -> Result<std::fs::File, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
        if !file.metadata()?.is_file() {
            bail!("`{}` is not a regular file", path.display());
        }
        Ok(file)
    })
}

/// Refuses a file the catalogue points to that leaves its `modules/` through a link: a plugin
/// or a manifest linked to `../../genesis/credentials/…` would have its digest shown and
/// recorded. A path not there yet is left to the read that follows.
fn inside(root: &Path, path: &Path) -> Result<()> {
    // `modules/` itself is held to the catalogue too: a `modules` that is a link out of it is
    // no more the catalogue's than a plugin linked out of it.
    let anchored = root.parent().and_then(|top| Some(top.canonicalize().ok()?.join(root.file_name()?)));
    let (Some(root), Ok(resolved)) = (anchored, path.canonicalize()) else { return Ok(()) };
    if resolved.starts_with(&root) {
        return Ok(());
    }
    bail!(
        "it leads, through a link, to `{}`, outside the catalogue's modules `{}`: what a module ships stays there",
        resolved.display(),
        root.display()
    )
}

/// Refuses to write `what` to anything but a regular file or a path not there yet: a FIFO
/// nobody reads would hold the writer forever, and a device (`/dev/full`) is no record.
pub fn output_file(path: &Path, what: &str) -> Result<(), crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::os::unix::fs::FileTypeExt;
        let Ok(meta) = std::fs::metadata(path) else {
            // Not there yet: its directory must be, or the output could not be made at the end.
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !dir.is_dir() {
                bail!("`{}` cannot be written: its directory `{}` does not exist", path.display(), dir.display());
            }
            return Ok(());
        };
        let kind = meta.file_type();
        let named = if meta.is_file() {
            return Ok(());
        } else if meta.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        bail!("`{}` is {named}: {what} is written only to a regular file", path.display())
    })
}

/// Opens `path` to write `what` to, made readable by this user only and emptied: refused,
/// naming it, when it is anything but a regular file, even one put there after
/// [`output_file`] looked, since the open itself never waits for a FIFO's reader.
pub fn create_output(path: &Path, what: &str) -> Result<std::fs::File, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        output_file(path, what)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .with_context(|| format!("failed to open `{}` to write {what} to", path.display()))?;
        let meta = file.metadata().with_context(|| format!("failed to look at `{}`", path.display()))?;
        if !meta.is_file() {
            bail!("`{}` is not a regular file: {what} is written only to a regular file", path.display());
        }
        // Emptied only once known to be a regular file; one that was already there becomes
        // this user's only, as a new one is.
        file.set_len(0).with_context(|| format!("failed to empty `{}`", path.display()))?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("failed to make `{}` this user's only", path.display()))?;
        Ok(file)
    })
}

/// Refuses a document of more than `limit` bytes: what [`read_bounded`] holds a file to,
/// for one already in memory.
pub fn within_bound(bytes: &[u8], limit: u64) -> Result<(), crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::File, || {
        if bytes.len() as u64 > limit {
            bail!("it is larger than the {limit} bytes allowed");
        }
        Ok(())
    })
}

/// The foundation bundle: what genesis raised, before any module system existed.
#[derive(Debug, Clone, Default)]
pub struct Foundation {
    /// Its resources, in the bundle's order.
    pub resources: Vec<FoundationResource>,
    /// The sha256 of the bytes it was read from, for saved plans.
    pub digest: String,
    /// The genesis credentials each container runs with, by the container's id, as the bundle
    /// says (`"credentials": [...]` on a container): whichever module adopts it must hand them
    /// over, whatever that module declares.
    pub runs_with: BTreeMap<String, Vec<String>>,
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
}

impl Foundation {
    /// Reads a bundle file, naming the file and the resource in any error.
    pub fn load(path: &Path) -> Result<Foundation, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Foundation, || {
            let bytes = read_bounded(path, FOUNDATION_BYTES)
                .with_context(|| format!("failed to read the foundation bundle `{}`", path.display()))?;
            Foundation::parse(&bytes)
                .with_context(|| format!("the foundation bundle `{}` is malformed", path.display()))
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
    /// resources share an id, nor two containers a name (the node keys containers on it), and
    /// no object gives a key twice.
    pub fn parse(bytes: &[u8]) -> Result<Foundation, crate::error::Error> {
        crate::error::at_boundary(crate::error::Error::Foundation, || {
            let raw: RawBundle = serde_json::from_slice(bytes)?;
            no_key_twice(bytes)?;
            let mut resources: Vec<FoundationResource> = Vec::with_capacity(raw.resources.len());
            let mut runs_with = BTreeMap::new();
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
                if r.kind != "container"
                    && r.kind != "file"
                    && ["container", "file"].iter().any(|k| r.kind.trim().eq_ignore_ascii_case(k))
                {
                    bail!(
                        "resource {index} (`{}`) is of kind `{}`; kinds are lower case, with no spaces (`{}`), and \
                     any other kind is taken as something genesis raised that is neither a container nor a file",
                        r.id.escape_debug(),
                        r.kind.escape_debug(),
                        r.kind.trim().to_ascii_lowercase()
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
            Ok(Foundation { resources, digest: sha256_hex(bytes), runs_with })
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

/// Refuses grants no catalogue may give: credential and container names must be plain
/// names, and fetches must be http(s) URLs. (Grants for tell or carry cannot even be
/// written: the manifest's grants section has no such keys.)
fn within_ceiling(grants: &mesh_adopt_manifest::Grants) -> Result<()> {
    for name in &grants.credentials {
        if !is_plain_name(name) {
            bail!("credential grant `{name}` is not a plain name inside the credentials directory");
        }
    }
    let inspects = grants.inspect.iter().map(|name| inspect_grant_fault(name));
    let fetches = grants.fetch.iter().map(|url| fetch_grant_fault(url));
    match inspects.chain(fetches).flatten().next() {
        Some(fault) => bail!("{fault}"),
        None => Ok(()),
    }
}

/// Why no manifest may grant inspecting `name`, if none may.
pub(crate) fn inspect_grant_fault(name: &str) -> Option<String> {
    (!is_plain_name(name)).then(|| format!("inspect grant `{name}` is not a container name"))
}

/// Why no manifest may grant fetching `url`, if none may.
pub(crate) fn fetch_grant_fault(url: &str) -> Option<String> {
    let http = url.starts_with("http://") || url.starts_with("https://");
    (!http || url == "http://*" || url == "https://*")
        .then(|| format!("fetch grant `{url}` is not an http(s) URL or a prefix of one with a host"))
}

/// A name that is one file or container, nothing a path or a command could misread.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) && name != ".."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_anywhere_is_named_and_a_document_without_one_passes() {
        assert!(no_key_twice(br#"{"a": [{"b": 1, "c": {"d": 2}}], "e": null}"#).is_ok());
        for twice in [r#"{"a": 1, "a": 1}"#, r#"{"x": [{"v": 1, "v": 2}]}"#, r#"{"x": {"y": {"z": 0, "z": 0}}}"#] {
            let error = no_key_twice(twice.as_bytes()).unwrap_err().to_string();
            assert!(error.contains("is given twice"), "{twice}: {error}");
        }
    }

    /// A manifest for module `name` whose `adopt` section is `adopt`.
    fn manifest(name: &str, adopt: &str) -> String {
        format!(
            r#"{{"name":"{name}","version":"1.0.0","resources":[{{"id":"server","type":"container","name":"s","image":"i:1"}}],
                "adopt":{adopt}}}"#
        )
    }

    #[test]
    fn a_catalogue_in_memory_is_checked_as_one_on_disk() {
        let pin = "0".repeat(64);
        let cases = [
            ("store", manifest("store", r#"{"plugin":"adopt.wasm"}"#)),
            ("renamed", manifest("another", r#"{"plugin":"adopt.wasm"}"#)),
            ("no-plugin", manifest("no-plugin", r#"{"plugin":"missing.wasm"}"#)),
            ("escapes", manifest("escapes", r#"{"plugin":"../adopt.wasm"}"#)),
            ("plugin-dir", manifest("plugin-dir", r#"{"plugin":"sub"}"#)),
            ("bad-pin", manifest("bad-pin", r#"{"plugin":"adopt.wasm","sha256":"abc"}"#)),
            ("pinned", manifest("pinned", &format!(r#"{{"plugin":"adopt.wasm","sha256":"{pin}"}}"#))),
            ("too-much", manifest("too-much", r#"{"plugin":"adopt.wasm","grants":{"credentials":["../x"]}}"#)),
            ("malformed", "{\"name\": ".to_string()),
            ("huge", " ".repeat(MANIFEST_BYTES as usize + 1)),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &cases {
            let at = dir.path().join("modules").join(name);
            std::fs::create_dir_all(at.join("sub")).unwrap();
            std::fs::write(at.join(MANIFEST_FILE), text).unwrap();
            std::fs::write(at.join("adopt.wasm"), b"\0asm").unwrap();
        }
        let on_disk = Catalogue::at(dir.path());
        let in_memory = Catalogue::in_memory(dir.path(), on_disk.read_modules().unwrap());
        for (name, _) in &cases {
            let disk = on_disk.module(name).map(|m| (m.manifest_path, m.manifest, m.plugin_path, m.adopt.sha256));
            let memory = in_memory.module(name).map(|m| (m.manifest_path, m.manifest, m.plugin_path, m.adopt.sha256));
            match (disk, memory) {
                (Ok(disk), Ok(memory)) => assert_eq!(disk, memory, "{name}"),
                (Err(disk), Err(memory)) => assert_eq!(format!("{disk:#}"), format!("{memory:#}"), "{name}"),
                (disk, memory) => panic!("{name}: on disk {:?}, in memory {:?}", disk.is_ok(), memory.is_ok()),
            }
        }
        let refused = |name: &str| format!("{:#}", in_memory.module(name).unwrap_err());
        assert!(refused("renamed").contains("is named `another`, but it lives in `modules/renamed`"));
        assert!(refused("no-plugin").contains("ships no plugin"));
        assert!(refused("plugin-dir").contains("is not a regular file"));
        assert!(refused("bad-pin").contains("which is not a sha256"));
        assert!(refused("too-much").contains("grants too much"));
        assert!(refused("huge").contains("larger than the 1048576 bytes allowed"));
        assert!(refused("absent").contains("the catalogue has no such module"));
        assert!(in_memory.module("store").is_ok() && in_memory.module("pinned").is_ok());
    }

    #[test]
    fn an_edited_manifest_in_memory_is_checked_and_named_by_its_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("modules/store");
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join(MANIFEST_FILE), manifest("store", r#"{"plugin":"adopt.wasm"}"#)).unwrap();
        std::fs::write(at.join("adopt.wasm"), b"\0asm").unwrap();
        let mut modules = Catalogue::at(dir.path()).read_modules().unwrap();
        modules.get_mut("store").unwrap().manifest = Ok(manifest("other", r#"{"plugin":"adopt.wasm"}"#).into_bytes());
        let err = format!("{:#}", Catalogue::in_memory(dir.path(), modules.clone()).module("store").unwrap_err());
        assert!(
            err.contains(&format!("the manifest `{}` is named `other`", at.join(MANIFEST_FILE).display())),
            "{err}"
        );
        modules.get_mut("store").unwrap().manifest = Ok(vec![b' '; MANIFEST_BYTES as usize + 1]);
        let err = format!("{:#}", Catalogue::in_memory(dir.path(), modules).module("store").unwrap_err());
        assert!(err.contains("larger than the 1048576 bytes allowed"), "{err}");
        // The checkout itself was never written.
        assert_eq!(
            std::fs::read(at.join(MANIFEST_FILE)).unwrap(),
            manifest("store", r#"{"plugin":"adopt.wasm"}"#).as_bytes()
        );
    }

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

    #[test]
    fn a_kind_of_the_wrong_case_is_refused_and_credentials_are_a_containers() {
        let typo = Foundation::parse(br#"{"resources":[{"id":"control","kind":"Container","name":"c","image":"i"}]}"#)
            .unwrap_err();
        assert!(typo.to_string().contains("kinds are lower case, with no spaces (`container`)"), "{typo}");
        let padded = Foundation::parse(br#"{"resources":[{"id":"s","kind":"container ","name":"c","image":"i"}]}"#);
        assert!(padded.is_err(), "a kind with a space is refused");
        let file = Foundation::parse(br#"{"resources":[{"id":"f","kind":"file","path":"/p","credentials":["c"]}]}"#)
            .unwrap_err();
        assert!(file.to_string().contains("only a container runs with any"), "{file}");
        let store = Foundation::parse(
            br#"{"resources":[{"id":"s","kind":"container","name":"db","image":"i","credentials":["su"]}]}"#,
        )
        .unwrap();
        assert_eq!(store.runs_with["s"], ["su"]);
    }

    #[test]
    fn refuses_grants_beyond_the_ceiling() {
        let grants = |c: &str, f: &str| mesh_adopt_manifest::Grants {
            credentials: vec![c.into()],
            inspect: vec![],
            fetch: vec![f.into()],
        };
        assert!(within_ceiling(&grants("store-superuser", "http://127.0.0.1:8222/healthz")).is_ok());
        assert!(within_ceiling(&grants("../../etc/shadow", "http://x/")).is_err());
        assert!(within_ceiling(&grants("ok", "file:///etc/passwd")).is_err());
        assert!(within_ceiling(&grants("ok", "http://*")).is_err());
    }
}
