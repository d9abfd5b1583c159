//! The catalogue a run starts from: its modules, each a `manifest.json` with an `adopt.wasm`
//! beside it, read from disk or held in memory and checked the same way.

pub mod credentials;
mod error;
pub(crate) mod foundation;
pub(crate) mod plan_key;
pub(crate) mod read_once;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::files::{FileError, inside, read_bounded, within_bound};
use crate::model::faults::NoPlugin;

pub use crate::model::FoundationResource;
pub use credentials::{CredentialError, CredentialValues, Credentials, GrantedCredentialError};
pub use error::{BundleFault, CatalogueError, FoundationError};
pub use foundation::{FOUNDATION_BYTES, Foundation};

pub use mesh_adopt_manifest::{AdoptSection, ModuleManifest};

/// The module's manifest.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The largest manifest read: real ones are a few KiB.
pub const MANIFEST_BYTES: u64 = 1 << 20;

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
    pub manifest: Result<Vec<u8>, FileError>,
    /// Every entry beside the manifest, by file name, with its metadata (symlinks followed, as
    /// [`std::fs::metadata`] does): where the manifest's `plugin` is looked up.
    pub files: BTreeMap<String, std::fs::Metadata>,
}

impl ModuleFiles {
    /// Reads the module directory `dir`: its manifest (bounded as a run bounds it) and the
    /// metadata of everything beside it. Only a directory that cannot be listed is an error.
    pub fn read(dir: &Path) -> Result<ModuleFiles, CatalogueError> {
        let manifest_path = dir.join(MANIFEST_FILE);
        let manifest = read_bounded(&manifest_path, MANIFEST_BYTES);
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(dir).map_err(unlisted(dir))? {
            let entry = entry.map_err(unlisted(dir))?;
            if let (Some(name), Ok(meta)) = (entry.file_name().to_str(), std::fs::metadata(entry.path())) {
                files.insert(name.to_string(), meta);
            }
        }
        Ok(ModuleFiles { manifest_path, manifest, files })
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
    pub fn read_modules(&self) -> Result<BTreeMap<String, ModuleFiles>, CatalogueError> {
        if let Some(modules) = &self.in_memory {
            return Ok(modules.as_ref().clone());
        }
        let dir = self.root.join("modules");
        let mut modules = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).map_err(unlisted(&dir))? {
            let module_dir = entry.map_err(unlisted(&dir))?.path();
            if let Some(name) = module_dir.file_name().and_then(|n| n.to_str())
                && module_dir.join(MANIFEST_FILE).is_file()
            {
                modules.insert(name.to_string(), ModuleFiles::read(&module_dir)?);
            }
        }
        Ok(modules)
    }

    /// The catalogue's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether its modules are read from its directory, not held in memory: only then does
    /// the directory hold what a run read.
    pub(crate) fn on_disk(&self) -> bool {
        self.in_memory.is_none()
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
    pub fn module(&self, name: &str) -> Result<CatalogueModule, CatalogueError> {
        crate::model::options::check_module_name(name)?;
        let dir = self.root.join("modules").join(name);
        let module = || name.to_string();
        let Some(modules) = &self.in_memory else {
            let manifest_path = dir.join(MANIFEST_FILE);
            if !dir.exists() {
                return Err(CatalogueError::NoSuchModule {
                    root: self.root.clone(),
                    module: module(),
                    has: self.module_names(),
                    in_memory: false,
                });
            }
            let outside = |what, path: &Path| {
                let path = path.to_path_buf();
                move |source| CatalogueError::Outside { module: module(), what, path, source }
            };
            inside(&self.root.join("modules"), &manifest_path).map_err(outside("manifest", &manifest_path))?;
            let manifest = read_bounded(&manifest_path, MANIFEST_BYTES).map_err(|source| {
                CatalogueError::ManifestUnreadable { module: module(), manifest: manifest_path.clone(), source }
            })?;
            let found = entry(name, &dir, manifest_path, manifest, |file| std::fs::metadata(dir.join(file)).ok())?;
            inside(&self.root.join("modules"), &found.plugin_path).map_err(outside("plugin", &found.plugin_path))?;
            return Ok(found);
        };
        let Some(files) = modules.get(name) else {
            return Err(CatalogueError::NoSuchModule {
                root: self.root.clone(),
                module: module(),
                has: None,
                in_memory: true,
            });
        };
        let manifest =
            files.manifest.clone().and_then(|bytes| within_bound(&bytes, MANIFEST_BYTES).map(|()| bytes)).map_err(
                |source| CatalogueError::ManifestUnreadable {
                    module: module(),
                    manifest: files.manifest_path.clone(),
                    source,
                },
            )?;
        entry(name, &dir, files.manifest_path.clone(), manifest, |file| files.files.get(file).cloned())
    }
}

/// The error of a directory of the catalogue that could not be listed.
fn unlisted(dir: &Path) -> impl Fn(std::io::Error) -> CatalogueError + '_ {
    move |source| CatalogueError::Unlisted { dir: dir.to_path_buf(), source: Arc::new(source) }
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
) -> Result<CatalogueModule, CatalogueError> {
    let module = || name.to_string();
    let named_after_its_directory = |parsed: &ModuleManifest| match parsed.name == name {
        true => Ok(()),
        false => Err(CatalogueError::Misnamed {
            module: module(),
            manifest: manifest_path.clone(),
            named: parsed.name.clone(),
        }),
    };
    let parsed = match read_once::valid_manifest(&manifest) {
        Ok(parsed) => parsed,
        Err(read_once::Unusable::Unparsed(error)) => {
            return Err(CatalogueError::Malformed {
                module: module(),
                manifest: manifest_path,
                source: Arc::new(error),
            });
        }
        Err(read_once::Unusable::Invalid { manifest: parsed, invalid }) => {
            named_after_its_directory(&parsed)?;
            return Err(CatalogueError::Invalid { module: module(), manifest: manifest_path, invalid });
        }
    };
    named_after_its_directory(&parsed)?;
    let plugin_file = &parsed.adopt.plugin;
    if plugin_file.is_empty() || plugin_file.contains(['/', '\\']) || plugin_file == ".." {
        return Err(CatalogueError::PluginNotBeside {
            module: module(),
            manifest: manifest_path,
            plugin: plugin_file.clone(),
        });
    }
    let plugin_path = dir.join(plugin_file);
    let plugin_file = match find(plugin_file) {
        Some(meta) if meta.is_file() => meta,
        Some(_) => return Err(CatalogueError::PluginNotRegular { module: module(), path: plugin_path }),
        None => return Err(CatalogueError::NoPlugin(NoPlugin { module: Some(module()), path: plugin_path })),
    };
    if let Some(pin) = &parsed.adopt.sha256
        && !(pin.trim().len() == 64 && pin.trim().chars().all(|c| c.is_ascii_hexdigit()))
    {
        return Err(CatalogueError::PinNotSha256 { module: module(), manifest: manifest_path, pin: pin.clone() });
    }
    Ok(CatalogueModule {
        name: name.to_string(),
        manifest_path,
        manifest,
        plugin_path,
        plugin_file,
        adopt: parsed.adopt.clone(),
        secrets: parsed.secrets.clone(),
        parsed: ModuleManifest::clone(&parsed),
    })
}

/// sha256 of `bytes`, in hex: how plugins are pinned and documents are named in saved plans.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::model::digest::Sha256::of(bytes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_bundle_is_refused_naming_the_field_for_a_kind_no_one_knows_a_word_that_is_none_or_a_number_beyond() {
        let store = r#"{"id": "store", "kind": "container", "name": "mesh-store", "image": "postgres:16"}"#;
        // (a resource beside the store, and what the refusal says)
        let cases = [
            (
                r#"{"id": "control", "kind": "../../etc", "name": "mesh-control"}"#,
                "resource 1's kind `/resources/1/kind` (`../../etc`) holds a path separator",
            ),
            (
                r#"{"id": "control", "kind": "container", "name": "mesh\\control", "image": "c"}"#,
                "resource 1's name `/resources/1/name` (`mesh\\\\control`) holds a path separator",
            ),
            (
                r#"{"id": "con\u001btrol", "kind": "container", "name": "mesh-control", "image": "c"}"#,
                "resource 1's id `/resources/1/id` (`con\\u{1b}trol`) holds a control character",
            ),
            (
                r#"{"id": "control", "kind": "daemon"}"#,
                "resource 1 (`control`) is of kind `daemon` (`/resources/1/kind`), which the contract does not know",
            ),
            (r#"{"id": "control", "kind": "Network"}"#, "kinds are lower case, with no spaces (`network`)"),
            (
                r#"{"id": "control", "kind": "container", "name": "c", "image": "c", "user": 9007199254740993}"#,
                "the number `9007199254740993` at `/resources/1/user` is beyond ±2^53",
            ),
            (
                r#"{"id": "control", "kind": "container", "name": "c", "image": "c", "memory": 1e16}"#,
                "the number `1e16` at `/resources/1/memory`",
            ),
        ];
        for (beside, says) in cases {
            let bundle = format!(r#"{{"resources": [{store}, {beside}]}}"#);
            let refused = Foundation::parse(bundle.as_bytes()).map(drop).unwrap_err().to_string();
            assert!(refused.contains(says), "{beside}: {refused}");
        }
        // Every kind the contract knows is taken, and `-0` is a number within ±2^53.
        let known = format!(
            r#"{{"resources": [{store}, {{"id": "f", "kind": "file", "path": "/p"}}, {{"id": "n", "kind": "network"}},
                {{"id": "s", "kind": "service"}}, {{"id": "v", "kind": "volume", "size": -0}}]}}"#
        );
        assert_eq!(Foundation::parse(known.as_bytes()).unwrap().resources.len(), 5);
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
}
