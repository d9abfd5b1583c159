//! The rules a run holds itself to after each module and at its end: the mesh's (as its audit
//! and the node's effects show them) and the host's own two, no secret shown and no refusal in
//! `check` after an effect.

use crate::effect::{Rule, Violation};
use crate::model::Export;
use crate::run::foresight::Foreseen;
use crate::run::{ModuleOutcome, Run};

impl Run<'_> {
    /// One violation for each secret value caught on its way out during the run, and each kind
    /// of place it was caught in.
    pub(super) fn secrets_shown(&self) -> Vec<Violation> {
        let mut shown: Vec<Violation> = Vec::new();
        for (shown_by, secret, place) in self.transcript.secrets_shown() {
            let violation = Rule::SecretNeverShown
                .broken(format!("the `{shown_by}` plugin put the value of secret `{secret}` in {place} (redacted)"))
                .of(shown_by.as_str());
            // The same value in the same kind of place is one breach, however often it shows.
            if !shown.contains(&violation) {
                shown.push(violation);
            }
        }
        shown
    }

    /// The mesh's invariants plus the host's own two: a refusal in `check` comes before any
    /// effect, and no secret value shows anywhere an operator or a log could read it.
    pub(super) fn violations(
        &self,
        module: &str,
        outcome: &ModuleOutcome,
        foreseen: Option<&Foreseen>,
        audit: &crate::mesh::Audit,
    ) -> Vec<Violation> {
        let mut violations = audit.violations.clone();
        for violation in foreseen.map(|f| self.observed_violations(f, audit)).unwrap_or_default() {
            if !violations.contains(&violation) {
                violations.push(violation);
            }
        }
        if matches!(outcome, ModuleOutcome::Refused { during: Export::Check, .. }) {
            let effects = self.transcript.effects(module);
            if !effects.is_empty() {
                violations.push(
                    Rule::RefusalBeforeEffect
                        .broken(format!("`{module}` refused in check after {}", effects.join("; ")))
                        .of(module),
                );
            }
        }
        violations.extend(self.secrets_shown());
        let secrets: Vec<String> = audit
            .secret_values
            .iter()
            .filter(|v| v.len() >= 6)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let in_message = outcome.problem().is_some_and(|message| secrets.iter().any(|s| message.contains(s)));
        let shown = in_message || self.transcript.shows_any(&secrets);
        if shown {
            violations.push(
                Rule::SecretNeverShown
                    .broken(format!(
                        "a secret value appeared in what `{module}` said, told or reported (redacted here)"
                    ))
                    .of(module),
            );
        }
        violations
    }

    /// Adds to `violations` what the run's end finds: the mesh's own, the rules broken by
    /// what the node did, and any secret caught anywhere (in preflight as much as in adopt),
    /// each once.
    pub(super) fn violations_at_end(
        &self,
        violations: &mut Vec<Violation>,
        audit: &crate::mesh::Audit,
        foreseen: Option<&Foreseen>,
    ) {
        let observed = foreseen.map(|f| self.observed_violations(f, audit)).unwrap_or_default();
        for violation in audit.violations.iter().cloned().chain(observed).chain(self.secrets_shown()) {
            if !violations.contains(&violation) {
                violations.push(violation);
            }
        }
    }
}
