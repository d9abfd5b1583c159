//! Why the catalogue, a module's entry in it or the foundation bundle cannot be used, typed
//! where each is found: an installer tells a module that is not there from a manifest to mend
//! or a plugin to build, and reads the file and the field to mend from the value, not its words.

use std::path::PathBuf;
use std::sync::Arc;

use mesh_adopt_manifest::ParseError;
use mesh_adopt_manifest::command::CommandError;
use mesh_adopt_manifest::validity::Invalid;

use crate::files::FileError;
use crate::model::faults::NoPlugin;
use crate::model::options::NameError;
use crate::remedy::Remedy;

/// Why a module of the catalogue cannot be read as one: each case names the module and the
/// file, and says what mends it through [`CatalogueError::remedy`].
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogueError {
    /// A directory of the catalogue could not be listed.
    #[error("failed to read `{}`", dir.display())]
    Unlisted {
        /// The directory.
        dir: PathBuf,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The name asked for is not a module's name at all.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The catalogue holds no module of that name.
    #[error("{}", no_such_module(root, module, has.as_deref(), *in_memory))]
    NoSuchModule {
        /// The catalogue's directory.
        root: PathBuf,
        /// The module asked for.
        module: String,
        /// The modules it does hold; `None` when it has no `modules/` directory.
        has: Option<Vec<String>>,
        /// Whether the catalogue was held in memory (a scenario's), not read from disk.
        in_memory: bool,
    },
    /// The manifest or the plugin is a link out of the catalogue, or cannot be looked at.
    #[error("the `{module}` module's {what} `{}` cannot be used", path.display())]
    Outside {
        /// The module.
        module: String,
        /// Which of its files: `manifest` or `plugin`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: FileError,
    },
    /// The manifest could not be read, or is larger than a manifest may be.
    #[error("failed to read the `{module}` module's manifest `{}`", manifest.display())]
    ManifestUnreadable {
        /// The module.
        module: String,
        /// The manifest.
        manifest: PathBuf,
        /// Why.
        #[source]
        source: FileError,
    },
    /// The manifest is not a manifest: not JSON, not an object, not of a manifest's shape.
    #[error("the `{module}` module's manifest `{}` is malformed", manifest.display())]
    Malformed {
        /// The module.
        module: String,
        /// The manifest.
        manifest: PathBuf,
        /// How it fails to parse.
        #[source]
        source: Arc<ParseError>,
    },
    /// The manifest parses but breaks a rule every reader holds it to.
    #[error("the `{module}` module's manifest `{}` {}: {}", manifest.display(), invalid.kind(), invalid.detail())]
    Invalid {
        /// The module.
        module: String,
        /// The manifest.
        manifest: PathBuf,
        /// The first rule broken.
        invalid: Invalid,
    },
    /// The manifest's `name` is not its directory's.
    #[error(
        "the manifest `{}` is named `{}`, but it lives in `modules/{module}`: a manifest's `name` must be its \
         directory's, or the control plane would register another module",
        manifest.display(),
        named.escape_debug()
    )]
    Misnamed {
        /// The module (its directory).
        module: String,
        /// The manifest.
        manifest: PathBuf,
        /// The name it gives.
        named: String,
    },
    /// The manifest names a plugin that is not a file beside it.
    #[error(
        "the `{module}` module's manifest `{}` names plugin `{plugin}`: it must be a file beside the manifest",
        manifest.display()
    )]
    PluginNotBeside {
        /// The module.
        module: String,
        /// The manifest.
        manifest: PathBuf,
        /// What it names.
        plugin: String,
    },
    /// The plugin is there, but not a regular file.
    #[error("the `{module}` module's plugin `{}` is not a regular file", path.display())]
    PluginNotRegular {
        /// The module.
        module: String,
        /// The plugin's path.
        path: PathBuf,
    },
    /// The module ships no plugin: it has not been built yet.
    #[error(transparent)]
    NoPlugin(NoPlugin),
    /// The manifest's pin is not a sha256.
    #[error(
        "the `{module}` module's manifest `{}` pins `{}`, which is not a sha256 (64 hex digits)",
        manifest.display(),
        pin.escape_debug()
    )]
    PinNotSha256 {
        /// The module.
        module: String,
        /// The manifest.
        manifest: PathBuf,
        /// What it pins.
        pin: String,
    },
}

fn no_such_module(root: &std::path::Path, module: &str, has: Option<&[String]>, in_memory: bool) -> String {
    if in_memory {
        return format!(
            "failed to read the `{module}` module's manifest `{}`: the catalogue has no such module",
            root.join("modules").join(module).join(super::MANIFEST_FILE).display()
        );
    }
    format!(
        "the catalogue `{}` has no module `{module}` (no `modules/{module}/`); it has {}",
        root.display(),
        has.map_or_else(|| "no modules/ directory".to_string(), |names| names.join(", "))
    )
}

impl CatalogueError {
    /// What mends it, as data: the file to mend (and where in it), the plugin to build, or the
    /// module to name instead.
    pub fn remedy(&self) -> Remedy {
        let edit = |path: &PathBuf, at: Option<&str>| Remedy::EditFile { path: path.clone(), at: at.map(String::from) };
        match self {
            CatalogueError::Unlisted { dir, .. } => edit(dir, None),
            CatalogueError::Name(error) => error.remedy(),
            CatalogueError::NoSuchModule { has, .. } => Remedy::SetOption {
                option: "MODULE".into(),
                must: match has {
                    Some(names) if !names.is_empty() => format!("one of {}", names.join(", ")),
                    _ => "a module of the catalogue (it has none)".into(),
                },
            },
            CatalogueError::Outside { path, .. } => edit(path, None),
            CatalogueError::ManifestUnreadable { manifest, .. }
            | CatalogueError::Malformed { manifest, .. }
            | CatalogueError::Invalid { manifest, .. } => edit(manifest, None),
            CatalogueError::Misnamed { manifest, .. } => edit(manifest, Some("/name")),
            CatalogueError::PluginNotBeside { manifest, .. } => edit(manifest, Some("/adopt/plugin")),
            CatalogueError::PinNotSha256 { manifest, .. } => edit(manifest, Some("/adopt/sha256")),
            CatalogueError::PluginNotRegular { module, .. } => Remedy::BuildPlugin { module: module.clone() },
            CatalogueError::NoPlugin(missing) => missing.remedy(),
        }
    }
}

/// Why the foundation bundle cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FoundationError {
    /// Its file could not be read, or is larger than a bundle may be.
    #[error("failed to read the foundation bundle `{}`", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: FileError,
    },
    /// A bundle held in memory is larger than a file may be.
    #[error("the foundation bundle {named} cannot be used")]
    TooLarge {
        /// Which document it is, in words.
        named: String,
        /// By how much.
        #[source]
        source: FileError,
    },
    /// Its bytes are no bundle the host can raise a mesh from.
    #[error("the foundation bundle {named} is malformed")]
    Malformed {
        /// Which document it is, in words (its path in backquotes, for a file).
        named: String,
        /// The file, when it was read from one.
        path: Option<PathBuf>,
        /// The fault.
        #[source]
        fault: BundleFault,
    },
}

impl FoundationError {
    /// What mends it: the bundle's file, at the field to blame where one is.
    pub fn remedy(&self) -> Remedy {
        match self {
            FoundationError::Unreadable { path, .. } => Remedy::EditFile { path: path.clone(), at: None },
            FoundationError::Malformed { path: Some(path), fault, .. } => {
                Remedy::EditFile { path: path.clone(), at: fault.pointer() }
            }
            FoundationError::TooLarge { .. } | FoundationError::Malformed { path: None, .. } => Remedy::Report,
        }
    }
}

/// What is wrong in a foundation bundle's bytes, naming the resource by its index (and the
/// field by its JSON Pointer where one is to blame).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BundleFault {
    /// Not JSON, or not of a bundle's shape.
    #[error("{0}")]
    Json(Arc<serde_json::Error>),
    /// A key given twice, or a number beyond ±2^53: readers of JSON would take it apart. The
    /// words are the manifest crate's, which holds manifests to the same rule.
    #[error("{0}")]
    Ambiguous(String),
    /// A resource's id, kind or name that is no plain word.
    #[error("resource {index}'s {field} `/resources/{index}/{field}` (`{}`) {fault}", word.escape_debug())]
    NotAWord {
        /// The resource's index.
        index: usize,
        /// Which field.
        field: &'static str,
        /// Its value.
        word: String,
        /// What is wrong with it.
        fault: &'static str,
    },
    /// A kind the contract knows, written in another case or with spaces.
    #[error(
        "resource {index} (`{}`) is of kind `{}`; kinds are lower case, with no spaces (`{lower}`)",
        id.escape_debug(),
        kind.escape_debug()
    )]
    KindCase {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
        /// Its kind as written.
        kind: String,
        /// The kind as the contract spells it.
        lower: String,
    },
    /// A kind the contract does not know.
    #[error(
        "resource {index} (`{}`) is of kind `{}` (`/resources/{index}/kind`), which the contract does not know; a \
         resource's kind is one of {}",
        id.escape_debug(),
        kind.escape_debug(),
        mesh_adopt_manifest::ResourceKind::listed()
    )]
    UnknownKind {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
        /// Its kind.
        kind: String,
    },
    /// Two resources with one id.
    #[error("resources {first} and {index} both have the id `{}`; ids name one resource each", id.escape_debug())]
    SameId {
        /// The first.
        first: usize,
        /// The second.
        index: usize,
        /// The id.
        id: String,
    },
    /// Two containers with one name.
    #[error(
        "resources {first} and {index} (`{}`) are both containers named `{}`; the node keys containers on their name",
        id.escape_debug(),
        name.escape_debug()
    )]
    SameName {
        /// The first.
        first: usize,
        /// The second.
        index: usize,
        /// The second's id.
        id: String,
        /// The name.
        name: String,
    },
    /// A field its kind needs is missing.
    #[error("resource {index} (`{id}`, a {kind}) has no `{field}`")]
    Missing {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
        /// Its kind.
        kind: String,
        /// The field.
        field: &'static str,
    },
    /// Credentials on a resource that runs nothing.
    #[error("resource {index} (`{id}`, a {kind}) names credentials; only a container runs with any")]
    CredentialsNotRun {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
        /// Its kind.
        kind: String,
    },
    /// A credential's name that is no word a command may carry.
    #[error("resource {index} (`{id}`) names a credential: {why}")]
    CredentialName {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
        /// What is wrong with the name.
        why: CommandError,
    },
    /// A container's name that is no word a command may carry.
    #[error("resource {index} (`{id}`): {why}")]
    ContainerName {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
        /// What is wrong with the name.
        why: CommandError,
    },
    /// A container whose image is blank.
    #[error("resource {index} (`{id}`, a container) names no image")]
    NoImage {
        /// The resource's index.
        index: usize,
        /// Its id.
        id: String,
    },
}

impl BundleFault {
    /// The JSON Pointer of the field to blame, where one is.
    pub fn pointer(&self) -> Option<String> {
        match self {
            BundleFault::Json(_) | BundleFault::Ambiguous(_) => None,
            BundleFault::NotAWord { index, field, .. } => Some(format!("/resources/{index}/{field}")),
            BundleFault::KindCase { index, .. } | BundleFault::UnknownKind { index, .. } => {
                Some(format!("/resources/{index}/kind"))
            }
            BundleFault::SameId { index, .. } => Some(format!("/resources/{index}/id")),
            BundleFault::SameName { index, .. } | BundleFault::ContainerName { index, .. } => {
                Some(format!("/resources/{index}/name"))
            }
            BundleFault::Missing { index, field, .. } => Some(format!("/resources/{index}/{field}")),
            BundleFault::CredentialsNotRun { index, .. } | BundleFault::CredentialName { index, .. } => {
                Some(format!("/resources/{index}/credentials"))
            }
            BundleFault::NoImage { index, .. } => Some(format!("/resources/{index}/image")),
        }
    }
}
