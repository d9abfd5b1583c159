//! Every way a run ends, is held, has a module refused for it by the host or left alone, as one
//! stable code: what an installer branches on instead of reading words. The record's `end`,
//! `not_run` and `refused` events, a violation and docs/events.md's table all take their codes
//! from here, so there is one list.

use crate::model::exit::ExitStatus;

/// Why a run, or one of its modules, did not end well: a kebab-case code that stays the same
/// across releases (a new one may be added; none changes its meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A plugin refused, with a code of its own (or none, for contract 0.1.0).
    Refused,
    /// A plan changed between preflight and the module's turn: the host refused it.
    PlanChanged,
    /// A plugin reported success after a call of its was denied or failed: the host refused it.
    WentOnPastAFailure,
    /// A plugin's refusal code would have shown a secret's value.
    Redacted,
    /// The mesh, read again just before a push, was not as predicted: the push was not told.
    MeshMoved,
    /// The mesh could not be read, before the run or again just before a push.
    MeshUnseen,
    /// The control plane refused a command because the run's lock was broken under it.
    LockBroken,
    /// Another run holds the mesh's lock (a `--lock-timeout` included that ran out): nothing was
    /// done; try again later.
    LockHeld,
    /// Another run's lock is held by a process known gone (it ran on this machine): waiting
    /// would not free it, so it is left until `mesh-adopt unlock ID` breaks it.
    LockAbandoned,
    /// The mesh's lock could not be taken: the mesh erred when asked.
    LockFailed,
    /// This machine's lock file is damaged: no run takes the lock until it is cleared.
    LockDamaged,
    /// The run's lock could not be let go at its end: the next run is kept out until it goes.
    LockLeft,
    /// A container on the node holds a secret the control plane does not say it holds.
    SecretsDisagree,
    /// The node lacks an image a module of the run runs.
    ImagesMissing,
    /// The saved plan was made from something that has changed.
    StalePlan,
    /// The phase's pushes were predicted to break a rule of the mesh.
    RuleWouldBreak,
    /// A rule of the mesh was found broken after a push.
    RuleBroken,
    /// A plugin showed a secret's value while it was checked.
    SecretShown,
    /// An embedded run was run a second time.
    AlreadyRan,
    /// An option of the run cannot be used.
    BadOption,
    /// An input cannot be used: catalogue, manifest, plugin, credential.
    Unusable,
    /// `adopt` returned success before it told its whole plan.
    Incomplete,
    /// The sandbox stopped a plugin during `adopt`.
    Stopped,
    /// Another module of the run did not succeed first, so this one was left alone.
    EarlierModuleFailed,
    /// A replay's plugins did not make the calls its recording holds.
    ReplayDiverged,
}

impl Ending {
    /// Every code, in the order docs/events.md's table lists them.
    pub const ALL: [Ending; 25] = [
        Ending::Refused,
        Ending::PlanChanged,
        Ending::WentOnPastAFailure,
        Ending::Redacted,
        Ending::MeshMoved,
        Ending::MeshUnseen,
        Ending::LockBroken,
        Ending::LockHeld,
        Ending::LockAbandoned,
        Ending::LockFailed,
        Ending::LockDamaged,
        Ending::LockLeft,
        Ending::SecretsDisagree,
        Ending::ImagesMissing,
        Ending::StalePlan,
        Ending::RuleWouldBreak,
        Ending::RuleBroken,
        Ending::SecretShown,
        Ending::AlreadyRan,
        Ending::BadOption,
        Ending::Unusable,
        Ending::Incomplete,
        Ending::Stopped,
        Ending::EarlierModuleFailed,
        Ending::ReplayDiverged,
    ];

    /// The host's codes for a module's refusal: a plugin that refuses with one is stopped, so an
    /// installer can trust where such a code came from.
    pub const HOST_REFUSALS: [Ending; 6] = [
        Ending::PlanChanged,
        Ending::WentOnPastAFailure,
        Ending::Redacted,
        Ending::MeshMoved,
        Ending::MeshUnseen,
        Ending::LockBroken,
    ];

    /// The code as the record spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Ending::Refused => "refused",
            Ending::PlanChanged => "plan-changed",
            Ending::WentOnPastAFailure => "went-on-past-a-failure",
            Ending::Redacted => "redacted",
            Ending::MeshMoved => "mesh-moved",
            Ending::MeshUnseen => "mesh-unseen",
            Ending::LockBroken => "lock-broken",
            Ending::LockHeld => "lock-held",
            Ending::LockAbandoned => "lock-abandoned",
            Ending::LockFailed => "lock-failed",
            Ending::LockDamaged => "lock-damaged",
            Ending::LockLeft => "lock-left",
            Ending::SecretsDisagree => "secrets-disagree",
            Ending::ImagesMissing => "images-missing",
            Ending::StalePlan => "stale-plan",
            Ending::RuleWouldBreak => "rule-would-break",
            Ending::RuleBroken => "rule-broken",
            Ending::SecretShown => "secret-shown",
            Ending::AlreadyRan => "already-ran",
            Ending::BadOption => "bad-option",
            Ending::Unusable => "unusable",
            Ending::Incomplete => "incomplete",
            Ending::Stopped => "stopped",
            Ending::EarlierModuleFailed => "earlier-module-failed",
            Ending::ReplayDiverged => "replay-diverged",
        }
    }

    /// The code of `text`, if it is one.
    pub fn from_code(text: &str) -> Option<Ending> {
        Ending::ALL.into_iter().find(|e| e.as_str() == text)
    }

    /// The process's exit status a run ending so exits with: 75 for a lock another run holds
    /// (try again later), 2 for an input or option that cannot be used, 1 otherwise.
    pub fn exit(self) -> ExitStatus {
        match self {
            Ending::LockHeld => ExitStatus::Locked,
            Ending::BadOption | Ending::Unusable => ExitStatus::Unusable,
            _ => ExitStatus::Failed,
        }
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spelling the record gives each code is the serde one, and every code is listed once.
    #[test]
    fn each_code_is_spelt_as_serialised_and_listed_once() {
        for ending in Ending::ALL {
            assert_eq!(serde_json::to_value(ending).unwrap(), ending.as_str());
            assert_eq!(Ending::from_code(ending.as_str()), Some(ending));
            assert_eq!(Ending::ALL.iter().filter(|e| **e == ending).count(), 1, "{ending}");
        }
        assert_eq!(Ending::from_code("image-differs"), None);
    }

    /// docs/events.md's table of codes is this list, in this order: a row added or dropped on
    /// either side fails here.
    #[test]
    fn the_documented_codes_are_these() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/events.md")).unwrap();
        let table = doc.split("\n### Codes\n").nth(1).expect("docs/events.md has a `### Codes` section");
        let documented: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with('|'))
            .filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(code, _)| code))
            .collect();
        assert_eq!(documented, Ending::ALL.map(Ending::as_str), "docs/events.md's table of codes");
    }
}
