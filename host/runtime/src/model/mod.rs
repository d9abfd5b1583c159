//! The host's own words for what crosses the contract: the context a plugin is handed, the
//! plan its `check` makes, its report and its refusal. Each contract version's bindings
//! convert to and from these at the boundary, so nothing past it (the run, the record, the
//! saved plan, an embedder) changes when a contract version is added.

pub(crate) mod canonical;
pub mod chain;
pub mod code;
pub mod contract;
pub mod digest;
pub mod ending;
pub mod exit;
pub mod faults;
pub mod lock;
pub mod options;
pub mod rule;
pub mod spec;
pub mod stop;

use std::fmt;

use mesh_adopt_manifest::command::{Command, CommandError};

use crate::model::ending::Ending;
use crate::model::stop::StopKind;
use options::RunOptions;

/// Which export of the plugin is running: what the grants allow, and what the record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Export {
    /// `check`: reading only; every effect is denied.
    Check,
    /// `adopt`: acting on the mesh, held to the plan.
    Adopt,
}

impl std::fmt::Display for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Export::Check => "check",
            Export::Adopt => "adopt",
        })
    }
}

/// Where the catalogue's modules are built from: a repository and, optionally, a ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogSource {
    /// The repository, as the control plane's `build` takes it.
    pub repository: String,
    /// The branch, tag or commit; `None` builds the repository's default.
    pub reference: Option<String>,
}

/// One resource of the foundation bundle genesis raised, as the host reads it and a plugin
/// is shown it.
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

/// What a plugin is handed for its module: its manifest as shipped and as the host read it,
/// the foundation bundle and the operator's options.
#[derive(Debug, Clone)]
pub struct Context {
    /// The module's name.
    pub module: String,
    /// Its `manifest.json`, byte for byte.
    pub manifest: Vec<u8>,
    /// The same manifest as the host read it: what a plugin of contract 0.2.0 is handed
    /// instead of parsing the bytes itself.
    pub declared: std::sync::Arc<mesh_adopt_manifest::ModuleManifest>,
    /// The foundation bundle's resources.
    pub foundation: Vec<FoundationResource>,
    /// The operator's options.
    pub options: RunOptions,
}

/// A control-plane command as a plugin gave it, read once at the contract's boundary: a
/// command of the vocabulary (contract 0.2.0's variant, or 0.1.0's words parsed there), or
/// words that are none, kept with why, for the grants to refuse as they refuse any command
/// beyond a plugin's sequence. From here on it is this value; its words are made only where a
/// process is given them or a line shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginCommand {
    /// A command of the control plane's vocabulary, every name in it a checked word.
    Known(Command),
    /// Words that are no command of the vocabulary, or one with a name that is not a checked
    /// word: only a plugin can give these, and no mesh is ever told them.
    Unknown {
        /// The words, as the plugin gave them.
        words: Vec<String>,
        /// Why they are no command.
        why: CommandError,
    },
}

impl PluginCommand {
    /// Words a plugin of contract 0.1.0 gave, read as a command once.
    pub fn from_words(words: Vec<String>) -> PluginCommand {
        match Command::parse(&words) {
            Ok(command) => PluginCommand::Known(command),
            Err(why) => PluginCommand::Unknown { words, why },
        }
    }

    /// A command that came typed, its names held to the rule parsed words are held to.
    pub fn from_typed(command: Command) -> PluginCommand {
        match command.check() {
            Ok(()) => PluginCommand::Known(command),
            Err(why) => PluginCommand::Unknown { words: command.words(), why },
        }
    }

    /// The command, where the words are one.
    pub fn known(&self) -> Option<&Command> {
        match self {
            PluginCommand::Known(command) => Some(command),
            PluginCommand::Unknown { .. } => None,
        }
    }

    /// Its words, as a record, a saved plan or a message writes them.
    pub fn words(&self) -> Vec<String> {
        match self {
            PluginCommand::Known(command) => command.words(),
            PluginCommand::Unknown { words, .. } => words.clone(),
        }
    }

    /// How many words it is, and how many bytes they hold in all.
    pub fn size(&self) -> (usize, usize) {
        match self {
            PluginCommand::Known(command) => command.size(),
            PluginCommand::Unknown { words, .. } => (words.len(), words.iter().map(String::len).sum()),
        }
    }
}

/// Its words, space-separated, as a person reads them (unbounded: quote a plugin's command
/// in a message through the grants' bounded quote).
impl fmt::Display for PluginCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginCommand::Known(command) => command.fmt(f),
            PluginCommand::Unknown { words, .. } => f.write_str(&words.join(" ")),
        }
    }
}

/// The plan a plugin's `check` made: lines for a person, and the commands `adopt` will tell,
/// in order. Two plans are the same when both say the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The plan's lines for the operator.
    pub summary: Vec<String>,
    /// The commands `adopt` will tell, in order.
    pub commands: Vec<PluginCommand>,
}

impl Plan {
    /// A plan of these lines and of commands given as words: a 0.1.0 plugin's, or a plan
    /// read back from where it was written (a saved plan), each command read once.
    pub fn from_words(summary: Vec<String>, commands: Vec<Vec<String>>) -> Plan {
        Plan { summary, commands: commands.into_iter().map(PluginCommand::from_words).collect() }
    }

    /// The commands' words, as the record and a saved plan hold them.
    pub fn words(&self) -> Vec<Vec<String>> {
        self.commands.iter().map(PluginCommand::words).collect()
    }
}

/// What a plugin's `adopt` says it did, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The line.
    pub summary: String,
}

/// A plugin's refusal to go on, in its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its kind, kebab-case and stable, for an installer or a scenario to act on; a plugin of
    /// contract 0.1.0 gives none.
    pub code: Option<String>,
    /// Why it refused.
    pub message: String,
}

impl Refusal {
    /// The host's code for the refusal of a module whose plan changed between preflight and
    /// its turn.
    pub const PLAN_CHANGED: &'static str = Ending::PlanChanged.as_str();
    /// The host's code for the refusal of a module whose plugin reported success after a call
    /// was denied or failed.
    pub const WENT_ON_PAST_A_FAILURE: &'static str = Ending::WentOnPastAFailure.as_str();
    /// The code a refusal whose code would show a secret's value is reported with.
    pub const REDACTED: &'static str = Ending::Redacted.as_str();
    /// The host's code for a module stopped before its push: the mesh, read again just
    /// before it, was not what the prediction says it is then (another run or operator).
    pub const MESH_MOVED: &'static str = Ending::MeshMoved.as_str();
    /// The host's code for a module stopped before its push: the mesh could not be read
    /// again just before it, and no push goes out on an unknown.
    pub const MESH_UNSEEN: &'static str = Ending::MeshUnseen.as_str();
    /// The host's code for a module stopped where the control plane's own check refused a
    /// command of its: the run's lock on the mesh had been broken under it, and nothing more
    /// was sent.
    pub const LOCK_BROKEN: &'static str = Ending::LockBroken.as_str();

    /// Why `code` cannot be a plugin's refusal code, if it cannot: it must be a code
    /// ([`Refusal::code_fault`]), and not one of the host's own, so an installer can trust
    /// where a host's code came from.
    pub fn plugin_code_fault(code: &str) -> Option<String> {
        if Ending::HOST_REFUSALS.iter().any(|host| host.as_str() == code) {
            return Some("is one of the host's own codes; a plugin's refusal takes a code of its own".into());
        }
        Self::code_fault(code)
    }

    /// Why `code` cannot be a refusal's code, if it cannot: codes are kebab-case words
    /// (`image-differs`), so they read the same in every language and record.
    pub fn code_fault(code: &str) -> Option<String> {
        const MOST: usize = 64;
        let words_ok = !code.is_empty()
            && code
                .split('-')
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
        if code.len() > MOST {
            Some(format!("is {} bytes long; a refusal code is at most {MOST}", code.len()))
        } else if !words_ok {
            Some("is not kebab-case (lowercase letters and digits in words joined by `-`)".into())
        } else {
            None
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Which of a module's inputs cannot be used. Found in preflight, before any effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The module's catalogue entry or its manifest: missing, malformed, misnamed, or
    /// granting more than the host allows.
    Manifest,
    /// Its plugin: missing, not a component, not of this host's world, or not the pinned one.
    Plugin,
    /// A credential its manifest grants: missing, empty, oversized or not a file.
    Credentials,
    /// The plan its `check` made: beyond the limits, or commands its grants could never allow.
    Plan,
    /// Its plugin was stopped by the sandbox while it was only being checked.
    Stopped(StopKind),
}

impl Input {
    /// The input's word as the record and `--json` give it (a stop's kind goes beside it).
    pub fn word(self) -> InputWord {
        match self {
            Input::Manifest => InputWord::Manifest,
            Input::Plugin => InputWord::Plugin,
            Input::Credentials => InputWord::Credentials,
            Input::Plan => InputWord::Plan,
            Input::Stopped(_) => InputWord::Stopped,
        }
    }
}

/// Which input of a module could not be used, as the record names it: [`Input`] without the
/// stop's kind, which the record gives in a field of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputWord {
    /// See [`Input::Manifest`].
    Manifest,
    /// See [`Input::Plugin`].
    Plugin,
    /// See [`Input::Credentials`].
    Credentials,
    /// See [`Input::Plan`].
    Plan,
    /// See [`Input::Stopped`].
    Stopped,
}

impl InputWord {
    /// The word, as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            InputWord::Manifest => "manifest",
            InputWord::Plugin => "plugin",
            InputWord::Credentials => "credentials",
            InputWord::Plan => "plan",
            InputWord::Stopped => "stopped",
        }
    }
}

impl std::fmt::Display for InputWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A plugin the sandbox stopped, with the report a person reads: the reason, its last host
/// call, what it wrote and what it had already done.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// In which export it was stopped.
    pub during: Export,
    /// Why.
    pub kind: StopKind,
    /// The whole stop report.
    pub report: String,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for Stopped {}

#[cfg(test)]
mod tests {
    use super::Refusal;

    #[test]
    fn a_code_is_kebab_case_and_a_plugins_is_not_the_hosts() {
        for good in ["image-differs", "1image", "a", &"a".repeat(64)] {
            assert_eq!(Refusal::code_fault(good), None, "{good}");
            assert_eq!(Refusal::plugin_code_fault(good), None, "{good}");
        }
        for bad in
            ["", "Image-Differs", "image-", "-image", "image--differs", "image differs", "imäge", &"a".repeat(65)]
        {
            assert!(Refusal::code_fault(bad).is_some(), "{bad:?}");
        }
        for host in [
            Refusal::PLAN_CHANGED,
            Refusal::WENT_ON_PAST_A_FAILURE,
            Refusal::REDACTED,
            Refusal::MESH_MOVED,
            Refusal::MESH_UNSEEN,
            Refusal::LOCK_BROKEN,
        ] {
            assert_eq!(Refusal::code_fault(host), None, "a scenario may expect {host}");
            assert!(Refusal::plugin_code_fault(host).unwrap().contains("the host's own"), "{host}");
        }
    }
}
