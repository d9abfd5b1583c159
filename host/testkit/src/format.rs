//! The scenario file format: the TOML a plugin author writes beside the plugin, as serde reads
//! it. Each field's meaning is here; what the fields must say together (a module to run, a
//! code only with a refusal) is checked where a file is read ([`crate::read`]).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use mesh_adopt_runtime::events::OutcomeWord;

/// One scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What it shows, in a sentence.
    pub name: String,
    /// The modules to run, in order [default: the module whose plugin the file sits beside].
    #[serde(default)]
    pub modules: Vec<String>,
    /// The mesh's starting state and behaviour.
    #[serde(default)]
    pub mesh: MeshSpec,
    /// Changes to the catalogue's manifests and foundation bundle.
    #[serde(default, rename = "edit")]
    pub edits: Vec<Edit>,
    /// What must happen.
    pub expect: Expect,
}

/// The simulated mesh a scenario runs on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeshSpec {
    /// The node modules are assigned to [default: `node-1`].
    pub node: Option<String>,
    /// `--wait`, e.g. `120s`.
    pub wait: Option<String>,
    /// `REPO[@REF]`, or `""` for none [default: a test repository].
    pub catalog_source: Option<String>,
    /// `normally`, `never`, or `losing NAME`.
    pub applies: Option<String>,
    /// How long after a push the node applies it, e.g. `90s` for a node applying late.
    pub apply_delay: Option<String>,
    /// How long a recreated bus takes to answer, or `never`.
    pub bus_recovery: Option<String>,
    /// How long a build takes.
    pub build_time: Option<String>,
    /// Containers already running another image than the bundle's.
    pub running_images: BTreeMap<String, String>,
    /// Credentials to use instead of the catalogue's genesis ones (name → value).
    pub credentials: Option<BTreeMap<String, String>>,
    /// Faults to inject.
    pub faults: Vec<FaultSpec>,
    /// Another run holding the mesh's lock when the scenario starts: every run is kept out.
    pub locked_by: Option<LockedBy>,
    /// The node phase three was adopted on before the scenario's run, cleanly, with every
    /// module of the catalogue's phase three and then the scenario's own (genesis raised the
    /// foundation there): the
    /// scenario's own node for a mesh that starts adopted, another for a run on a second node.
    pub adopted_on: Option<String>,
}

/// Another run holding the mesh's lock, as a refused run names it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedBy {
    /// The host it runs on.
    pub host: String,
    /// Its process id there.
    pub pid: u32,
    /// Its command line.
    pub command: String,
    /// When it took the lock, RFC 3339.
    pub since: String,
    /// The lock's id [default: `10c4ed0000000000`].
    #[serde(default = "scenario_lock_id")]
    pub id: String,
}

fn scenario_lock_id() -> String {
    "10c4ed0000000000".into()
}

/// A fault: the next `times` calls of `op` whose words contain `matching` fail with `fail`
/// (the mesh's answer) or, with `timeout = true`, time out.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// The import: `carry`, `tell`, `inspect` or `fetch`.
    pub op: String,
    /// Words the call's arguments must contain.
    pub matching: String,
    /// How many matching calls it fails [default: 1].
    #[serde(default = "one")]
    pub times: u32,
    /// The mesh's answer to each: what a failing command prints.
    #[serde(default)]
    pub fail: Option<String>,
    /// Whether each times out instead.
    #[serde(default)]
    pub timeout: bool,
}

fn one() -> u32 {
    1
}

/// One change to a document: `file` is `foundation` or `manifest:<module>`; then either
/// `set` a JSON pointer `to` a value, `remove` a JSON pointer, or `remove_resource` by id.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// The document: `foundation` or `manifest:<module>`.
    pub file: String,
    /// A JSON pointer (RFC 6901) to set, or to append to with a last token of `-`.
    pub set: Option<String>,
    /// The value `set` gives.
    pub to: Option<toml::Value>,
    /// A JSON pointer to remove.
    pub remove: Option<String>,
    /// A foundation resource to remove, by its id.
    pub remove_resource: Option<String>,
}

/// What a scenario expects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `adopted` (every module), or `refused`, `unusable`, `incomplete` or `failed` (the last
    /// module run), or `not run`: the runtime's own word for the outcome, so a scenario and a
    /// run's summary cannot name outcomes apart; `ready` is refused, since a scenario adopts.
    #[serde(deserialize_with = "scenario_outcome")]
    pub outcome: OutcomeWord,
    /// The refusal's code, with `outcome = "refused"`: the kind an installer acts on. A plugin
    /// of contract 0.1.0 refuses without a code, so its refusal is not held to one; which
    /// contract the plugin speaks is the run's to say, so any other refusal without one differs.
    #[serde(default)]
    pub code: Option<String>,
    /// Fragments that must appear in the refusal or failure, or in a line said.
    #[serde(default)]
    pub messages: Vec<String>,
    /// Fragments that must appear neither in the refusal or failure nor in a line said.
    #[serde(default)]
    pub absent: Vec<String>,
    /// Every control-plane command, in order; required unless `strict = false`.
    pub commands: Option<Vec<String>>,
    /// Whether `commands` must be given and match exactly [default: true].
    #[serde(default = "yes")]
    pub strict: bool,
    /// Containers left running as they were.
    #[serde(default)]
    pub kept: Vec<String>,
    /// Containers recreated onto another image.
    #[serde(default)]
    pub recreated: Vec<String>,
    /// Containers raised where there were none.
    #[serde(default)]
    pub created: Vec<String>,
    /// Secrets accepted, as `module/secret`.
    #[serde(default)]
    pub accepted: Vec<String>,
    /// The files carried into the control plane, by remote path, each `file` or `secret`;
    /// compared only when given.
    #[serde(default)]
    pub carried: Option<BTreeMap<String, String>>,
    /// Secrets the node sealed with fresh bytes during the scenario's run, as `module/secret`;
    /// compared only when given.
    #[serde(default)]
    pub sealed: Option<Vec<String>>,
    /// Invariants that must break (a scenario of a misbehaving plugin); none by default.
    #[serde(default)]
    pub broken: Vec<String>,
}

fn yes() -> bool {
    true
}

/// The outcomes a scenario can expect: any but `ready`, since a scenario adopts.
fn scenario_outcomes() -> impl Iterator<Item = OutcomeWord> {
    OutcomeWord::ALL.into_iter().filter(|word| *word != OutcomeWord::Ready)
}

/// Reads `expect.outcome` in the words a person reads an outcome in (`not run`, where the
/// event stream writes `not_run`), naming every word a scenario may say when it says another.
fn scenario_outcome<'de, D: Deserializer<'de>>(deserializer: D) -> Result<OutcomeWord, D::Error> {
    let words = String::deserialize(deserializer)?;
    OutcomeWord::from_words(&words).filter(|word| *word != OutcomeWord::Ready).ok_or_else(|| {
        D::Error::custom(format!(
            "the scenario expects the outcome `{}`: say one of {}",
            words.escape_debug(),
            scenario_outcomes().map(OutcomeWord::words).collect::<Vec<_>>().join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(words: &str) -> Result<OutcomeWord, String> {
        let text = format!("name = \"x\"\n[expect]\noutcome = {words:?}\nstrict = false\n");
        toml::from_str::<Scenario>(&text).map(|scenario| scenario.expect.outcome).map_err(|e| e.to_string())
    }

    #[test]
    fn an_outcome_is_read_in_the_words_a_person_reads_it_in() {
        for word in [
            OutcomeWord::Adopted,
            OutcomeWord::Refused,
            OutcomeWord::Incomplete,
            OutcomeWord::Unusable,
            OutcomeWord::Failed,
            OutcomeWord::NotRun,
        ] {
            assert_eq!(outcome(word.words()), Ok(word));
        }
    }

    #[test]
    fn an_outcome_a_scenario_cannot_expect_is_refused_naming_those_it_can() {
        // `ready` is a check's outcome, and `not_run` the stream's spelling, not a person's.
        for words in ["exploded", "ready", "not_run", "Adopted"] {
            let err = outcome(words).unwrap_err();
            assert!(
                err.contains(&format!(
                    "the scenario expects the outcome `{words}`: say one of adopted, refused, incomplete, unusable, \
                     failed, not run"
                )),
                "{words}: {err}"
            );
        }
    }
}
