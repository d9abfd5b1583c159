//! The operator's options for a run, and the parsers of what an operator types for them: a
//! duration, a catalogue source, a node or module name. Each refuses a value it cannot use
//! with a message naming the value and what would be accepted.

use std::time::Duration;

use mesh_adopt_manifest::command::{CommandError, check_word};

pub use crate::model::CatalogSource;

/// Which run option an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOptionName {
    /// The node modules are assigned to.
    Node,
    /// Where the modules are built from.
    CatalogSource,
    /// How long to wait for the node after a push.
    Wait,
}

impl RunOptionName {
    /// The option as the command line spells it.
    pub fn flag(self) -> &'static str {
        match self {
            RunOptionName::Node => "--node",
            RunOptionName::CatalogSource => "--catalog-source",
            RunOptionName::Wait => "--wait",
        }
    }

    /// The option in words, as the runtime names it.
    pub fn words(self) -> &'static str {
        match self {
            RunOptionName::Node => "the node",
            RunOptionName::CatalogSource => "the catalogue source",
            RunOptionName::Wait => "the wait",
        }
    }
}

/// The node modules are assigned to when the operator names none.
pub const DEFAULT_NODE: &str = "node-1";
/// How long a plugin waits for the node after a push when the operator does not say.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(120);
/// The longest `--wait` taken: far past any node's settling time, and short enough that a
/// build and the wait fit the longest wall deadline (`--plugin-wall-time` 24h).
pub const MAX_WAIT: Duration = Duration::from_secs(12 * 3600);

/// The operator's options, as the plugins receive them.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The node modules are assigned to.
    pub node: String,
    /// Repository and optional ref the modules are built from.
    pub catalog_source: Option<CatalogSource>,
    /// How long to wait for the node after a push.
    pub wait: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { node: DEFAULT_NODE.to_string(), catalog_source: None, wait: DEFAULT_WAIT }
    }
}

impl RunOptions {
    /// Checks every option as a plugin would send it on: names are checked words, the wait
    /// within range. The error says which option, so a caller can name it as its user gave
    /// it (the command line says `--wait`).
    pub fn validate(&self) -> Result<(), OptionError> {
        match self.problem() {
            Some((option, problem)) => Err(OptionError { option, problem }),
            None => Ok(()),
        }
    }

    /// The first option that cannot be used, and what is wrong with it: what
    /// [`RunOptions::validate`] refuses, and a run refuses before anything reaches the mesh.
    pub(crate) fn problem(&self) -> Option<(RunOptionName, OptionProblem)> {
        let source = self.catalog_source.as_ref().map_or(Ok(()), source_problem);
        [
            (RunOptionName::Node, node_problem(&self.node)),
            (RunOptionName::CatalogSource, source),
            (RunOptionName::Wait, wait_problem(self.wait)),
        ]
        .into_iter()
        .find_map(|(option, problem)| problem.err().map(|why| (option, why)))
    }

    /// The catalogue source as the operator would type it.
    pub fn source_words(&self) -> String {
        match &self.catalog_source {
            Some(CatalogSource { repository, reference: Some(reference) }) => format!("{repository}@{reference}"),
            Some(CatalogSource { repository, reference: None }) => repository.clone(),
            None => "no catalogue source".into(),
        }
    }
}

/// The longest node or module name taken: a host name's 253 bytes. Every name enters the
/// plan's commands, whose size a plugin's limits bound; a longer one could make a plan that
/// preflight accepts but `adopt` cannot tell in full.
pub const NAME_BYTES: usize = 253;

/// The longest repository or ref of `--catalog-source` taken.
pub const SOURCE_BYTES: usize = 2048;

/// The rule a node's name is held to, as a refusal says it.
const NODE_RULE: &str = "a node name is an RFC 1123 subdomain: lowercase letters, digits, `-` and `.`, in labels of \
                         1 to 63 characters that begin and end with a letter or digit, at most 253 characters in all \
                         (such as `node-1`)";

/// What is wrong with a value an option, a name or a duration gives: said after the option's
/// name (`the node `Node_1` cannot be used: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionProblem {
    /// A name longer than a host name may be.
    #[error(
        "is {length} bytes long; a name is at most {NAME_BYTES} bytes, as a host name is{}",
        if *node { format!(": {NODE_RULE}") } else { String::new() }
    )]
    NameTooLong {
        /// Its length.
        length: usize,
        /// Whether it names a node (held to RFC 1123).
        node: bool,
    },
    /// A node's name that is not an RFC 1123 subdomain.
    #[error("`{}` cannot be used: {NODE_RULE}", value.escape_debug())]
    NotANodeName {
        /// The name.
        value: String,
    },
    /// A name a command could misread.
    #[error("`{}` cannot be used: {}; a name is a word such as `node-1`", value.escape_debug(), why.to_string().trim_start_matches("its name "))]
    NotAWord {
        /// The name.
        value: String,
        /// Why it is no word.
        why: CommandError,
    },
    /// A module's name with a character a directory of `modules/` is not named with.
    #[error("`{}` cannot be used: a module name has only letters, digits, `-`, `_` and `.`", value.escape_debug())]
    ModuleCharacters {
        /// The name.
        value: String,
    },
    /// A wait longer than the longest taken.
    #[error("`{}s` is longer than the {}s (12h) allowed", wait.as_secs(), MAX_WAIT.as_secs())]
    WaitTooLong {
        /// The wait.
        wait: Duration,
    },
    /// A wait of a fraction of a second, or none.
    #[error("`{}` is not a whole number of seconds of at least 1s (for example 90s, 5m)", humantime::format_duration(*wait))]
    WaitNotWholeSeconds {
        /// The wait.
        wait: Duration,
    },
    /// A catalogue source with a part longer than a builder takes.
    #[error("has a part {longest} bytes long; a repository or ref is at most {SOURCE_BYTES} bytes")]
    SourceTooLong {
        /// Its longest part's length.
        longest: usize,
    },
    /// A catalogue source's repository or ref that a builder could misread.
    #[error("{}`{}` cannot be used: {why}; give REPO or REPO@REF", if *reference { "ref " } else { "" }, value.escape_debug())]
    SourceNotAWord {
        /// The repository, or the ref.
        value: String,
        /// Whether it is the ref.
        reference: bool,
        /// Why it is no word.
        why: CommandError,
    },
    /// `REPO@REF` with nothing on one side of its `@`.
    #[error("`{}` cannot be used: {} is empty; give REPO or REPO@REF", text.escape_debug(), if *repository { "the repository before `@`" } else { "the ref after `@`" })]
    SourceHalfEmpty {
        /// What was given.
        text: String,
        /// Whether the repository is what is empty (else the ref).
        repository: bool,
    },
    /// A duration too long to be held.
    #[error("`{text}` is too long a duration")]
    DurationTooLong {
        /// What was given.
        text: String,
    },
    /// A duration with a unit that is none.
    #[error("`{text}` has an unknown unit `{unit}`: use s, m, h or d (for example 90s, 5m, 1h 30m)")]
    DurationUnit {
        /// What was given.
        text: String,
        /// The unit.
        unit: String,
    },
    /// Something that is no duration.
    #[error("`{text}` is not a duration like 90s, 5m or 1h 30m: {why}")]
    NotADuration {
        /// What was given.
        text: String,
        /// What the duration's grammar says of it.
        why: String,
    },
    /// On the simulator, a wait shorter than the node takes to apply a push and have what it
    /// recreates answer.
    #[error(
        "is {}s, but on {mesh} a push takes {}s to be applied and what it recreates to answer again: the \
         `{module}` plugin's wait on node `{node}` would run out after its push. Give a --wait of at least {}s",
        wait.as_secs(),
        restart.as_secs_f64(),
        restart.as_secs_f64().ceil()
    )]
    WaitShorterThanRestart {
        /// The wait.
        wait: Duration,
        /// The mesh, as it names itself.
        mesh: String,
        /// How long its node takes.
        restart: Duration,
        /// The module whose plan pushes.
        module: String,
        /// The node.
        node: String,
    },
    /// A node the mesh cannot carry a run on ([`crate::mesh::Mesh::serves`]).
    #[error("{why}")]
    NodeNotServed {
        /// The mesh's own words for why.
        why: String,
    },
}

impl OptionProblem {
    /// What the value must be, in words: what a remedy asks for.
    pub fn must(&self) -> String {
        match self {
            OptionProblem::NameTooLong { node: true, .. } | OptionProblem::NotANodeName { .. } => NODE_RULE.to_string(),
            OptionProblem::NameTooLong { node: false, .. } | OptionProblem::NotAWord { .. } => {
                format!("a word such as `node-1`, at most {NAME_BYTES} bytes")
            }
            OptionProblem::ModuleCharacters { .. } => "a name of letters, digits, `-`, `_` and `.`".into(),
            OptionProblem::WaitTooLong { .. } | OptionProblem::WaitNotWholeSeconds { .. } => {
                format!("a whole number of seconds from 1s to {}s", MAX_WAIT.as_secs())
            }
            OptionProblem::SourceTooLong { .. }
            | OptionProblem::SourceNotAWord { .. }
            | OptionProblem::SourceHalfEmpty { .. } => "REPO or REPO@REF, each a plain word".into(),
            OptionProblem::DurationTooLong { .. }
            | OptionProblem::DurationUnit { .. }
            | OptionProblem::NotADuration { .. } => "a duration such as 90s, 5m or 1h 30m".into(),
            OptionProblem::WaitShorterThanRestart { restart, .. } => {
                format!("a wait of at least {}s", restart.as_secs_f64().ceil())
            }
            OptionProblem::NodeNotServed { .. } => "a node this mesh reads (its configuration's `node`)".into(),
        }
    }
}

/// A run option's value that cannot be used: which option, and what is wrong with it (said
/// after the option's name, so a caller can put the name its user gave it in front).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} {problem}", option.words())]
pub struct OptionError {
    /// The option.
    pub option: RunOptionName,
    /// What is wrong with its value.
    pub problem: OptionProblem,
}

impl OptionError {
    /// What mends it: the option given another value, as the command line names it.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::SetOption { option: self.option.flag().to_string(), must: self.problem.must() }
    }
}

/// A name (a module's, a node's in a file) that cannot be used: `what` names it as its user
/// gave it (`the module`, `` `mesh.node` ``, `--node`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {problem}")]
pub struct NameError {
    /// The name's place, as its user gave it.
    pub what: String,
    /// What is wrong with it.
    pub problem: OptionProblem,
}

impl NameError {
    /// What mends it: the name given another value where its user gave it.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        crate::remedy::Remedy::SetOption { option: self.what.clone(), must: self.problem.must() }
    }
}

/// Refuses a name an option gives (`--node`, a module) that a command could misread.
pub fn check_name(option: &str, value: &str) -> Result<(), NameError> {
    name_problem(value).map_err(|problem| NameError { what: option.to_string(), problem })
}

/// What is wrong with a name a command would carry, said after the name's option.
fn name_problem(value: &str) -> Result<(), OptionProblem> {
    if value.len() > NAME_BYTES {
        return Err(OptionProblem::NameTooLong { length: value.len(), node: false });
    }
    check_word("name", value).map_err(|why| OptionProblem::NotAWord { value: value.to_string(), why })
}

/// Refuses a node name (`--node`, a saved plan's, a scenario's) that is not an RFC 1123
/// subdomain, as a node is named on the mesh: `option` is how the caller's user gave it.
pub fn check_node_name(option: &str, value: &str) -> Result<(), NameError> {
    node_problem(value).map_err(|problem| NameError { what: option.to_string(), problem })
}

/// What is wrong with a node name, said after the name's option: a node is named as a host is
/// (RFC 1123), so no command, path or shell that carries the name can read it as anything else.
pub(crate) fn node_problem(value: &str) -> Result<(), OptionProblem> {
    if value.len() > NAME_BYTES {
        return Err(OptionProblem::NameTooLong { length: value.len(), node: true });
    }
    let label_fits = |label: &str| {
        let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        (1..=63).contains(&label.len())
            && label.chars().all(|c| alphanumeric(c) || c == '-')
            && label.starts_with(alphanumeric)
            && label.ends_with(alphanumeric)
    };
    if value.split('.').all(label_fits) {
        return Ok(());
    }
    Err(OptionProblem::NotANodeName { value: value.to_string() })
}

/// What is wrong with a wait, said after its option.
fn wait_problem(wait: Duration) -> Result<(), OptionProblem> {
    if wait > MAX_WAIT {
        return Err(OptionProblem::WaitTooLong { wait });
    }
    // The control plane waits in whole seconds: a fraction would be cut without a word,
    // and no wait at all would refuse every node that applies a push a moment later.
    if wait.subsec_nanos() != 0 || wait.is_zero() {
        return Err(OptionProblem::WaitNotWholeSeconds { wait });
    }
    Ok(())
}

/// Refuses a module name that is not a plain directory name under `modules/`.
pub fn check_module_name(value: &str) -> Result<(), NameError> {
    check_name("the module", value)?;
    if !value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        let problem = OptionProblem::ModuleCharacters { value: value.to_string() };
        return Err(NameError { what: "the module".into(), problem });
    }
    Ok(())
}

/// What is wrong with a catalogue source, said after its option.
fn source_problem(source: &CatalogSource) -> Result<(), OptionProblem> {
    let longest = source.repository.len().max(source.reference.as_ref().map_or(0, String::len));
    if longest > SOURCE_BYTES {
        return Err(OptionProblem::SourceTooLong { longest });
    }
    check_word("repository", &source.repository).map_err(|why| OptionProblem::SourceNotAWord {
        value: source.repository.clone(),
        reference: false,
        why,
    })?;
    if let Some(reference) = &source.reference {
        check_word("ref", reference).map_err(|why| OptionProblem::SourceNotAWord {
            value: reference.clone(),
            reference: true,
            why,
        })?;
    }
    Ok(())
}

/// Splits `REPO[@REF]`; an `@` followed by a host or path (as in `git@host:org/repo`) is part
/// of the repository. An empty repository or ref, or one a builder could read as an option,
/// is refused.
pub fn parse_catalog_source(text: &str) -> Result<CatalogSource, OptionError> {
    let refused = |problem| OptionError { option: RunOptionName::CatalogSource, problem };
    let source = match text.rsplit_once('@') {
        Some((repository, reference)) if !reference.contains([':', '/']) => {
            if repository.is_empty() || reference.is_empty() {
                let text = text.to_string();
                return Err(refused(OptionProblem::SourceHalfEmpty { text, repository: repository.is_empty() }));
            }
            CatalogSource { repository: repository.to_string(), reference: Some(reference.to_string()) }
        }
        _ => CatalogSource { repository: text.to_string(), reference: None },
    };
    source_problem(&source).map_err(refused)?;
    Ok(source)
}

/// Parses a duration as an operator writes it: `90` (seconds), `90s`, `5m`, `1h 30m`,
/// `2days`; humantime's grammar, whose arithmetic is checked, so an overflowing duration is
/// refused rather than wrapped.
pub fn parse_duration(text: &str) -> Result<Duration, OptionProblem> {
    let text = text.trim();
    let too_long = || OptionProblem::DurationTooLong { text: text.to_string() };
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<u64>().map(Duration::from_secs).map_err(|_| too_long());
    }
    humantime::parse_duration(text).map_err(|e| match e {
        humantime::DurationError::NumberOverflow => too_long(),
        humantime::DurationError::UnknownUnit { unit, .. } => {
            OptionProblem::DurationUnit { text: text.to_string(), unit }
        }
        other => OptionProblem::NotADuration { text: text.to_string(), why: other.to_string() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("5x").unwrap_err().to_string().contains("unknown unit"));
        assert!(parse_duration("").unwrap_err().to_string().contains("not a duration"));
        assert!(parse_duration("99999999999999999999").unwrap_err().to_string().contains("too long"));
        assert!(parse_duration("9999999999999999999h").unwrap_err().to_string().contains("too long"));
    }

    #[test]
    fn splits_catalog_source_refs() {
        let source = parse_catalog_source("https://h/cat.git@v2").unwrap();
        assert_eq!((source.repository.as_str(), source.reference.as_deref()), ("https://h/cat.git", Some("v2")));
        assert_eq!(parse_catalog_source("git@h:org/cat.git").unwrap().reference, None);
    }

    #[test]
    fn refuses_sources_a_builder_could_not_use() {
        for bad in ["", "@v1", "repo@", "--upload-pack=x", "repo@--upload-pack=x", "a b", "https://h/../x"] {
            let err = parse_catalog_source(bad).unwrap_err().to_string();
            assert!(err.starts_with("the catalogue source"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_node_name_is_an_rfc_1123_subdomain() {
        let longest = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".");
        assert_eq!(longest.len(), NAME_BYTES);
        for good in ["node-1", "n", "0", "node-1.mesh.local", "a-b-c", longest.as_str()] {
            assert!(node_problem(good).is_ok(), "{good:?}");
        }
        let over = format!("{longest}e");
        let label = "a".repeat(64);
        for bad in [
            "",
            "node-1;rm",
            "~",
            "$HOME",
            ".",
            "nöde",
            "Node-1",
            "-node",
            "node-",
            "node..1",
            ".node",
            "node.",
            "a b",
            "node_1",
            label.as_str(),
            over.as_str(),
        ] {
            let why = node_problem(bad).unwrap_err().to_string();
            assert!(why.contains("RFC 1123 subdomain"), "{bad:?}: {why}");
        }
        let refused = RunOptions { node: "node-1;rm".into(), ..RunOptions::default() }.validate().unwrap_err();
        let refused = refused.to_string();
        assert!(refused.starts_with("the node `node-1;rm` cannot be used: a node name is an RFC 1123"), "{refused}");
        assert!(check_node_name("`mesh.node`", "$HOME").unwrap_err().to_string().starts_with("`mesh.node` `$HOME`"));
    }

    #[test]
    fn refuses_names_a_command_could_misread() {
        for bad in ["", "--all", "a b", "../../elsewhere/x", "x\u{1b}[2J"] {
            assert!(check_module_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name("--node", "--all").unwrap_err().to_string().contains("--node `--all`"));
        let long = "n".repeat(NAME_BYTES + 1);
        assert!(check_name("--node", &long).unwrap_err().to_string().contains("at most 253 bytes"));
        assert!(check_name("--node", &"n".repeat(NAME_BYTES)).is_ok());
        assert!(check_module_name("mesh-vault").is_ok());
    }
}
