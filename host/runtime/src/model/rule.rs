//! The rules a run holds, by name: the vocabulary violations, records, scenarios and the
//! documentation share. What each rule checks lives with the effect it is checked on
//! ([`crate::effect`]) and the run ([`crate::run`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A rule a run holds, by its stable name: the mesh's own ([`Rule::MESH`], predicted before
/// any push and checked on what the node did) and the host's ([`Rule::HOST`], kept whatever a
/// plugin does). Records, violations and scenarios spell it as [`Rule::as_str`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A container genesis raised (the control plane's included) is touched only by the module
    /// that declares it adopts it, and only as declared: kept stays kept, recreated happens once.
    GenesisTouchedAsDeclared,
    /// A container a module adopts keeps the volumes genesis gave it.
    AdoptedKeepsVolumes,
    /// One module owns a container: no two declare it, by adoption or by raising it.
    OneOwner,
    /// No credential a running container holds is sealed over with fresh bytes.
    CredentialNeverReplaced,
    /// No container a push raises mounts what a container genesis raised holds.
    GenesisVolumesHeldOnce,
    /// A module's plan pushes once; one that declares it adopts a container pushes it itself.
    OnePush,
    /// The node did what the prediction said, container by container.
    EffectAsPredicted,
    /// No secret value appears in anything a plugin says, tells, reports or writes.
    SecretNeverShown,
    /// A module that refuses in `check` has had no effect on the mesh.
    RefusalBeforeEffect,
}

impl Rule {
    /// The rules of the mesh, in the order the documentation lists them: what the pushes are
    /// predicted against and a summary says how far it checked.
    pub const MESH: [Rule; 7] = [
        Rule::GenesisTouchedAsDeclared,
        Rule::AdoptedKeepsVolumes,
        Rule::OneOwner,
        Rule::CredentialNeverReplaced,
        Rule::GenesisVolumesHeldOnce,
        Rule::OnePush,
        Rule::EffectAsPredicted,
    ];

    /// The host's own rules, kept of every plugin on every mesh.
    pub const HOST: [Rule; 2] = [Rule::SecretNeverShown, Rule::RefusalBeforeEffect];

    /// Every rule: the mesh's, then the host's.
    pub const ALL: [Rule; 9] = {
        let mut all = [Rule::OnePush; 9];
        let mut at = 0;
        while at < all.len() {
            all[at] = if at < Rule::MESH.len() { Rule::MESH[at] } else { Rule::HOST[at - Rule::MESH.len()] };
            at += 1;
        }
        all
    };

    /// The rule's stable name, as violations, records and scenarios give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::GenesisTouchedAsDeclared => "genesis-touched-as-declared",
            Rule::AdoptedKeepsVolumes => "adopted-keeps-volumes",
            Rule::OneOwner => "one-owner",
            Rule::CredentialNeverReplaced => "credential-never-replaced",
            Rule::GenesisVolumesHeldOnce => "genesis-volumes-held-once",
            Rule::OnePush => "one-push",
            Rule::EffectAsPredicted => "effect-as-predicted",
            Rule::SecretNeverShown => "secret-never-shown",
            Rule::RefusalBeforeEffect => "refusal-before-effect",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position of each rule in [`Rule::ALL`], by a match the compiler holds to every
    /// variant: a rule added to the enum and not to the list fails here.
    fn listed_at(rule: Rule) -> usize {
        match rule {
            Rule::GenesisTouchedAsDeclared => 0,
            Rule::AdoptedKeepsVolumes => 1,
            Rule::OneOwner => 2,
            Rule::CredentialNeverReplaced => 3,
            Rule::GenesisVolumesHeldOnce => 4,
            Rule::OnePush => 5,
            Rule::EffectAsPredicted => 6,
            Rule::SecretNeverShown => 7,
            Rule::RefusalBeforeEffect => 8,
        }
    }

    #[test]
    fn every_rule_is_listed_once_and_spelled_one_way() {
        for (at, rule) in Rule::ALL.into_iter().enumerate() {
            assert_eq!(listed_at(rule), at, "{rule} is listed out of place");
            assert_eq!(serde_json::to_value(rule).unwrap(), serde_json::json!(rule.as_str()));
            assert_eq!(serde_json::from_value::<Rule>(serde_json::json!(rule.to_string())).unwrap(), rule);
        }
        // The schema is derived from the enum itself, so a variant left out of the lists shows.
        let schema = serde_json::to_value(schemars::schema_for!(Rule)).unwrap();
        let variants: Vec<&str> =
            schema["oneOf"].as_array().unwrap().iter().map(|v| v["const"].as_str().unwrap()).collect();
        assert_eq!(variants, Rule::ALL.map(Rule::as_str), "every variant of Rule, in Rule::ALL's order");
    }
}
