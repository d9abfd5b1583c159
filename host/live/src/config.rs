//! The live mesh's configuration, `mesh-adopt.toml`: read once, every check made as it is
//! read, its commands parsed into [`Template`]s. What is refused names the file and the key:
//! a command that would ask the engine about no container or carry to no destination, an
//! `inspect_absent` that would read an engine in trouble as an empty mesh, a bound that would
//! cut every answer to nothing, lock commands a run could not use, a node that is no node's
//! name. The optional read-only commands (`state`, `images`, `lock_holder`) are what the host
//! asks the control plane and the node before any effect.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::engine;
use crate::templates::{Placeholder, Template, TemplateError, TemplateKey};

/// The file the live mesh is configured by, looked for in the working directory.
pub const CONFIG_FILE: &str = "mesh-adopt.toml";

/// The largest configuration read: real ones are a few hundred bytes.
const CONFIG_BYTES: u64 = 1 << 20;

/// An inspect template's `--format` for an engine whose JSON answer is not wanted: the
/// image, whether it runs, and its mounts, as words. The default asks for the engine's JSON,
/// which also carries the labels a node records the spec digest and the owner in.
pub const INSPECT_FORMAT: &str =
    "{{.Config.Image}} {{.State.Running}} mounts{{range .Mounts}} {{.Source}}:{{.Destination}}{{end}}";

/// The configuration as the file writes it: every command a list of words, run without a
/// shell. The placeholders each may hold are [`TemplateKey::given`]'s: `{remote}` (needed) and
/// `{name}` in `carry` and `carry_secret`, `{container}` (needed) and `{node}` in `inspect`,
/// `{node}` in `state` and `images`, `{id}` (needed) in `unlock`, none elsewhere.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ConfigFile {
    control: Vec<String>,
    carry: Vec<String>,
    carry_secret: Vec<String>,
    inspect: Vec<String>,
    state: Option<Vec<String>>,
    state_timeout_seconds: u64,
    images: Option<Vec<String>>,
    images_timeout_seconds: u64,
    node: String,
    inspect_absent: String,
    inspect_timeout_seconds: u64,
    fetch_timeout_seconds: u64,
    fetch_body_bytes: u64,
    fetch_rewrite: BTreeMap<String, String>,
    output_bytes: usize,
    lock: Option<Vec<String>>,
    unlock: Option<Vec<String>>,
    lock_holder: Option<Vec<String>>,
    lock_command_timeout_seconds: u64,
    lock_fences: bool,
}

impl Default for ConfigFile {
    /// A control plane run by docker as `mesh-control`.
    fn default() -> Self {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ConfigFile {
            control: words(&["docker", "exec", "-i", "mesh-control", "mesh"]),
            carry: words(&["docker", "exec", "-i", "mesh-control", "mesh", "carry", "{remote}"]),
            carry_secret: words(&["docker", "exec", "-i", "mesh-control", "mesh", "carry", "--secret", "{remote}"]),
            inspect: words(&["docker", "container", "inspect", "{container}"]),
            state: None,
            state_timeout_seconds: 10,
            images: None,
            images_timeout_seconds: 30,
            node: mesh_adopt_runtime::options::DEFAULT_NODE.to_string(),
            inspect_absent: engine::ABSENT_BY_DEFAULT.into(),
            inspect_timeout_seconds: 10,
            fetch_timeout_seconds: 5,
            fetch_body_bytes: 64 << 10,
            fetch_rewrite: BTreeMap::new(),
            output_bytes: 256 << 10,
            lock: None,
            unlock: None,
            lock_holder: None,
            lock_command_timeout_seconds: 10,
            lock_fences: false,
        }
    }
}

/// How a live mesh is reached, read and checked: the control plane's commands as templates,
/// the node its reads without `{node}` answer for, and the bounds on every answer.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// The control plane's CLI; a tell runs it with the command's words appended.
    pub(crate) control: Template,
    /// Stores the bytes on its standard input at `{remote}` in the control plane.
    pub(crate) carry: Template,
    /// As `carry`, for a secret; the secret is still only on standard input.
    pub(crate) carry_secret: Template,
    /// Describes `{container}` on `{node}`: the engine's JSON (`container inspect`), or the
    /// words `IMAGE RUNNING [mounts HOST:INSIDE…]` ([`crate::inspect::read_answer`]).
    pub(crate) inspect: Template,
    /// Says what the control plane holds for `{node}` ([`crate::state`] gives the contract).
    /// None: the prediction starts from the containers alone, and a push that would seal a
    /// secret of a module whose container runs is refused, since it may be sealed over.
    pub(crate) state: Option<Template>,
    /// How long a `state` command may take.
    pub(crate) state_timeout: Duration,
    /// Says whether `{node}` has each image asked on its standard input ([`crate::images`]
    /// gives the contract). None: the node is not asked, and the run warns that an image it
    /// lacks is found only when the module that runs it is built.
    pub(crate) images: Option<Template>,
    /// How long an `images` command may take.
    pub(crate) images_timeout: Duration,
    /// The node `inspect` and `state` answer for when they have no `{node}` word: they see
    /// that node alone, and a run on another node through them is refused before any effect.
    pub(crate) node: String,
    /// Text in the inspect command's error output that means "no such container", matched
    /// as a whole phrase without regard to case ([`engine::says`]).
    pub(crate) inspect_absent: String,
    /// How long an inspect may take.
    pub(crate) inspect_timeout: Duration,
    /// How long a fetch may take.
    pub(crate) fetch_timeout: Duration,
    /// The most of a fetched body kept, in bytes.
    pub(crate) fetch_body_bytes: u64,
    /// URL prefixes to reach elsewhere from this machine, e.g. a monitor published on
    /// another port: `"http://127.0.0.1:8222" = "http://127.0.0.1:18222"`.
    pub(crate) fetch_rewrite: BTreeMap<String, String>,
    /// The most of a command's output kept, in bytes.
    pub(crate) output_bytes: usize,
    /// Takes the mesh's lock for the holder on its standard input ([`crate::lock`]).
    pub(crate) lock: Option<Template>,
    /// Releases the lock held under the id in its `{id}` word; with `lock`.
    pub(crate) unlock: Option<Template>,
    /// Prints who holds the mesh's lock, for a check; optional, with `lock`.
    pub(crate) lock_holder: Option<Template>,
    /// How long a `lock`, `unlock` or `lock_holder` command may take.
    pub(crate) lock_command_timeout: Duration,
    /// Whether the control plane fences, as the configuration declares: it refuses a changing
    /// command whose lock ([`crate::fence::LOCK_ID_VAR`]) is not the one it holds, and lets a
    /// lock go only once nothing sent under it runs. With `lock`.
    pub(crate) lock_fences: bool,
}

/// Why the live mesh's configuration cannot be used, naming the file (or the built-in
/// configuration) and the key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read, or is not UTF-8.
    #[error("failed to read the live mesh configuration `{}`", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The file is not TOML of the configuration's keys.
    #[error("the live mesh configuration `{}` is malformed", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What the TOML reader says.
        #[source]
        source: toml::de::Error,
    },
    /// A command's template.
    #[error("`{}` in `{}` {}", error.key().key(), path.display(), error.predicate())]
    Template {
        /// The file.
        path: PathBuf,
        /// What is wrong with the template.
        error: TemplateError,
    },
    /// A bound outside what works: a zero would cut every answer to nothing or time every call
    /// out at once.
    #[error("`{key}` in `{}` is {value}; it must be from 1 to {most}", path.display())]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// The key.
        key: &'static str,
        /// What it says.
        value: u64,
        /// The most it may be.
        most: u64,
    },
    /// `lock` without `unlock`, or the other way round.
    #[error("`lock` and `unlock` go together in `{}`: a run that takes the mesh's lock releases it at its end", path.display())]
    LockWithoutUnlock {
        /// The file.
        path: PathBuf,
    },
    /// `lock_fences` without `lock`.
    #[error("`lock_fences` in `{}` says the control plane fences the lock `lock` takes, and there is no `lock`", path.display())]
    FencesWithoutLock {
        /// The file.
        path: PathBuf,
    },
    /// `lock_holder` without `lock`.
    #[error("`lock_holder` in `{}` says who holds the lock `lock` takes, and there is no `lock`", path.display())]
    HolderWithoutLock {
        /// The file.
        path: PathBuf,
    },
    /// `node` is no node's name.
    #[error("`node` in `{}` cannot be used", path.display())]
    Node {
        /// The file.
        path: PathBuf,
        /// What the runtime's rule for node names says.
        #[source]
        source: mesh_adopt_runtime::options::NameError,
    },
    /// `inspect_absent` could be said by an engine that cannot answer.
    #[error("`inspect_absent` in `{}` {fault}", path.display())]
    Absent {
        /// The file.
        path: PathBuf,
        /// Why it cannot be taken for "no such container".
        fault: String,
    },
}

impl ConfigError {
    /// What mends it: the configuration file, at the key to blame.
    pub fn remedy(&self) -> mesh_adopt_runtime::Remedy {
        let (path, at) = match self {
            ConfigError::Unreadable { path, .. } | ConfigError::Malformed { path, .. } => (path, None),
            ConfigError::Template { path, error } => (path, Some(error.key().key())),
            ConfigError::OutOfRange { path, key, .. } => (path, Some(*key)),
            ConfigError::LockWithoutUnlock { path } => (path, Some("unlock")),
            ConfigError::HolderWithoutLock { path } | ConfigError::FencesWithoutLock { path } => (path, Some("lock")),
            ConfigError::Node { path, .. } => (path, Some("node")),
            ConfigError::Absent { path, .. } => (path, Some("inspect_absent")),
        };
        mesh_adopt_runtime::Remedy::EditFile { path: path.clone(), at: at.map(String::from) }
    }
}

impl Default for LiveConfig {
    /// A control plane run by docker as `mesh-control`, its containers inspected by docker.
    fn default() -> Self {
        LiveConfig::read(ConfigFile::default(), Path::new("(built in)")).expect("the built-in configuration is valid")
    }
}

impl LiveConfig {
    /// Reads a configuration file, naming it in any error.
    pub fn load(path: &Path) -> Result<LiveConfig, ConfigError> {
        let unreadable = |source| ConfigError::Unreadable { path: path.to_path_buf(), source };
        let bytes = mesh_adopt_runtime::files::read_bounded(path, CONFIG_BYTES).map_err(|e| unreadable(e.into()))?;
        let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8".into()))?;
        LiveConfig::from_toml(&text, path)
    }

    /// Reads a configuration's text, as a file at `path` holds it.
    pub fn from_toml(text: &str, path: &Path) -> Result<LiveConfig, ConfigError> {
        let file: ConfigFile =
            toml::from_str(text).map_err(|source| ConfigError::Malformed { path: path.to_path_buf(), source })?;
        LiveConfig::read(file, path)
    }

    /// Every check, in the order a refusal is said: the commands' templates, the bounds, the
    /// lock's commands together (and its fence with them), the node, `inspect_absent`.
    fn read(file: ConfigFile, path: &Path) -> Result<LiveConfig, ConfigError> {
        let at = || path.to_path_buf();
        let template =
            |key, words| Template::parse(key, words).map_err(|error| ConfigError::Template { path: at(), error });
        let optional = |key, words: Option<Vec<String>>| words.map(|w| template(key, w)).transpose();
        let seconds = |key: &'static str, value: u64| -> Result<Duration, ConfigError> {
            within(path, key, value, 3600).map(Duration::from_secs)
        };
        let config = LiveConfig {
            control: template(TemplateKey::Control, file.control)?,
            carry: template(TemplateKey::Carry, file.carry)?,
            carry_secret: template(TemplateKey::CarrySecret, file.carry_secret)?,
            inspect: template(TemplateKey::Inspect, file.inspect)?,
            state: optional(TemplateKey::State, file.state)?,
            images: optional(TemplateKey::Images, file.images)?,
            lock: optional(TemplateKey::Lock, file.lock)?,
            unlock: optional(TemplateKey::Unlock, file.unlock)?,
            lock_holder: optional(TemplateKey::LockHolder, file.lock_holder)?,
            inspect_timeout: seconds("inspect_timeout_seconds", file.inspect_timeout_seconds)?,
            fetch_timeout: seconds("fetch_timeout_seconds", file.fetch_timeout_seconds)?,
            fetch_body_bytes: within(path, "fetch_body_bytes", file.fetch_body_bytes, 64 << 20)?,
            output_bytes: within(path, "output_bytes", file.output_bytes as u64, 64 << 20)? as usize,
            lock_command_timeout: seconds("lock_command_timeout_seconds", file.lock_command_timeout_seconds)?,
            state_timeout: seconds("state_timeout_seconds", file.state_timeout_seconds)?,
            images_timeout: seconds("images_timeout_seconds", file.images_timeout_seconds)?,
            lock_fences: file.lock_fences,
            node: file.node,
            inspect_absent: file.inspect_absent,
            fetch_rewrite: file.fetch_rewrite,
        };
        if config.lock.is_some() != config.unlock.is_some() {
            return Err(ConfigError::LockWithoutUnlock { path: at() });
        }
        if config.lock_holder.is_some() && config.lock.is_none() {
            return Err(ConfigError::HolderWithoutLock { path: at() });
        }
        if config.lock_fences && config.lock.is_none() {
            return Err(ConfigError::FencesWithoutLock { path: at() });
        }
        mesh_adopt_runtime::options::check_node_name("`node`", &config.node)
            .map_err(|source| ConfigError::Node { path: at(), source })?;
        if let Some(fault) = engine::absent_fault(&config.inspect_absent) {
            return Err(ConfigError::Absent { path: at(), fault });
        }
        Ok(config)
    }

    /// The templates configured, each once.
    pub(crate) fn templates(&self) -> impl Iterator<Item = &Template> {
        [&self.control, &self.carry, &self.carry_secret, &self.inspect]
            .into_iter()
            .chain([&self.state, &self.images, &self.lock, &self.unlock, &self.lock_holder].into_iter().flatten())
    }

    /// Every text of the configuration a process or a request is given, with its key: each
    /// template's words as one text, `node`, `inspect_absent` and `fetch_rewrite`'s prefixes.
    pub fn texts(&self) -> Vec<(&'static str, String)> {
        let mut texts: Vec<(&'static str, String)> =
            self.templates().map(|t| (t.key().key(), t.written().join(" "))).collect();
        texts.push(("node", self.node.clone()));
        texts.push(("inspect_absent", self.inspect_absent.clone()));
        for (from, to) in &self.fetch_rewrite {
            texts.push(("fetch_rewrite", format!("{from} {to}")));
        }
        texts
    }

    /// The node `inspect`, `state` and `images` answer for when they have no `{node}` word.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The commands that answer for one node only, the configuration's `node`: `inspect`,
    /// `state` and `images` (when there are) that have no `{node}` word.
    pub fn one_node_only(&self) -> Vec<&'static str> {
        [Some(&self.inspect), self.state.as_ref(), self.images.as_ref()]
            .into_iter()
            .flatten()
            .filter(|t| !t.takes(Placeholder::Node))
            .map(|t| t.key().key())
            .collect()
    }
}

/// `value` of `key`, when it is from 1 to `most`.
fn within(path: &Path, key: &'static str, value: u64, most: u64) -> Result<u64, ConfigError> {
    match (1..=most).contains(&value) {
        true => Ok(value),
        false => Err(ConfigError::OutOfRange { path: path.to_path_buf(), key, value, most }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<LiveConfig, String> {
        LiveConfig::from_toml(text, Path::new("dir/mesh-adopt.toml")).map_err(|e| {
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                text.push_str(&format!(": {c}"));
                cause = c.source();
            }
            text
        })
    }

    #[test]
    fn the_defaults_and_the_reference_nodes_configuration_load() {
        let _ = LiveConfig::default();
        LiveConfig::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../node/mesh-adopt.toml"))).unwrap();
        let formatted =
            format!("inspect = [\"podman\", \"inspect\", \"--format\", {INSPECT_FORMAT:?}, \"{{container}}\"]");
        load(&formatted).unwrap();
    }

    #[test]
    fn what_a_run_could_not_use_is_refused_naming_the_file_and_the_key() {
        assert!(load("lock = [\"mesh\", \"lock\"]\nunlock = [\"mesh\", \"unlock\", \"{id}\"]\n").is_ok());
        let fenced = "lock = [\"mesh\", \"lock\"]\nunlock = [\"mesh\", \"unlock\", \"{id}\"]\nlock_fences = true\n";
        assert!(load(fenced).unwrap().lock_fences);
        for (text, why) in [
            ("lock = [\"mesh\", \"lock\"]\n", "`lock` and `unlock` go together"),
            ("unlock = [\"mesh\", \"unlock\", \"{id}\"]\n", "`lock` and `unlock` go together"),
            (
                "lock = [\"l\"]\nunlock = [\"mesh\", \"unlock\"]\n",
                "`unlock` in `dir/mesh-adopt.toml` has no `{id}` word",
            ),
            ("lock = []\nunlock = [\"u\", \"{id}\"]\n", "`lock` in `dir/mesh-adopt.toml` names no command"),
            ("lock_holder = [\"h\"]\n", "there is no `lock`"),
            ("lock_fences = true\n", "says the control plane fences the lock `lock` takes, and there is no `lock`"),
            ("lock_command_timeout_seconds = 0\n", "it must be from 1 to 3600"),
            ("control = []\n", "`control` in `dir/mesh-adopt.toml` names no command"),
            ("state = []\n", "`state` in `dir/mesh-adopt.toml` names no command"),
            ("images = []\n", "`images` in `dir/mesh-adopt.toml` names no command"),
            ("images = [\"i\", \"{container}\"]\n", "which is no placeholder of `images`"),
            ("images_timeout_seconds = 0\n", "it must be from 1 to 3600"),
            ("output_bytes = 0\n", "`output_bytes` in `dir/mesh-adopt.toml` is 0; it must be from 1 to 67108864"),
            ("node = \"Node_1\"\n", "`node` in `dir/mesh-adopt.toml` cannot be used: `node` `Node_1` cannot be used"),
            ("control = [\"mesh\", \"--on\", \"{node}\"]\n", "only `inspect`, `state` and `images` are given it"),
            ("inspect_absent = \"e\"\n", "holds no word of 4 letters or more"),
            ("inspect = [\"e\", \"{contaner}\"]\n", "`inspect` in `dir/mesh-adopt.toml` has `{contaner}` in its word"),
            ("nonsense = 1\n", "is malformed"),
        ] {
            let error = load(text).unwrap_err();
            assert!(error.contains(why) && error.contains("mesh-adopt.toml"), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_template_without_its_node_word_answers_for_the_configured_node_alone() {
        let config = load("state = [\"mesh\", \"state\"]\nimages = [\"mesh\", \"images\"]\n").unwrap();
        assert_eq!(config.one_node_only(), ["inspect", "state", "images"]);
        let told =
            load("inspect = [\"engine\", \"{container}\", \"--host\", \"{node}\"]\nstate = [\"s\", \"{node}\"]\n")
                .unwrap();
        assert!(told.one_node_only().is_empty());
    }
}
