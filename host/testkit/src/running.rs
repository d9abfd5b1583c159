//! Running a scenario and comparing the run with what the scenario expects: a [`Prepared`]
//! scenario run on a simulated mesh as `mesh-adopt run` would run it, the [`ScenarioRun`] it
//! makes, and each way that run differs from the file, a line each.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result};

use mesh_adopt_runtime::Credentials;
use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::events::OutcomeWord;
use mesh_adopt_runtime::mesh::simulated::{FaultEffect, SimulatedMesh};
use mesh_adopt_runtime::mesh::{Command, ContainerChange, Mesh as _};
use mesh_adopt_runtime::plugin::Contract;
use mesh_adopt_runtime::record::transcript::Transcript;
use mesh_adopt_runtime::{Mode, ModuleOutcome, Run, RunOptions, RunReport};

use crate::documents::{Documents, Prepared, prepare};
use crate::files::ScenarioFile;
use crate::format::Scenario;

/// What one run of a scenario did.
pub struct ScenarioRun {
    /// The run's outcomes, changes and invariants.
    pub report: RunReport,
    /// The mesh as the run left it, to run again on.
    pub mesh: Arc<SimulatedMesh>,
    /// Every call and line of the run.
    pub transcript: Arc<Transcript>,
    /// The secrets sealed before the run, as `(module, secret)`: what the mesh started from.
    pub sealed_before: Vec<(String, String)>,
    /// Where the scenario starts from an adopted mesh (`mesh.adopted_on`), why adopting it
    /// did not go cleanly: the scenario then fails for that, whatever its own run did.
    pub setup_failed: Option<String>,
}

impl Prepared {
    /// Runs the scenario on a fresh mesh; `fail_call` fails one call by its number.
    pub async fn run(&self, host: &PluginHost, fail_call: Option<(usize, FaultEffect)>) -> ScenarioRun {
        let mut setup = self.setup.clone();
        let Some(adopted_on) = &self.adopted_on else {
            setup.fail_call = fail_call;
            return self.run_on(host, Arc::new(SimulatedMesh::new(setup))).await;
        };
        // Phase three adopted first, as the mesh the scenario starts from: no fault, no lock.
        let (faults, locked_by) = (std::mem::take(&mut setup.faults), setup.locked_by.take());
        let mesh = Arc::new(SimulatedMesh::new(setup));
        // Phase three's modules the catalogue holds, then the scenario's own not among them: a
        // catalogue whose modules are named otherwise is adopted by the scenario's.
        let mut phase: Vec<String> = mesh_adopt_runtime::PHASE_THREE
            .iter()
            .filter(|m| self.catalogue.module(m).is_ok())
            .map(|m| m.to_string())
            .collect();
        for module in &self.modules {
            if !phase.contains(module) {
                phase.push(module.clone());
            }
        }
        let options = RunOptions { node: adopted_on.clone(), ..self.options.clone() };
        let adopted = Run::builder(host, &self.catalogue, &self.foundation, mesh.clone())
            .credentials(Arc::new(Credentials::in_memory(self.credentials.clone())))
            .options(options)
            .turns_at_calls(false)
            .build()
            .run(&phase, Mode::Adopt)
            .await;
        mesh.move_to(&self.options.node);
        mesh.arm(faults, fail_call, locked_by);
        let mut ran = self.run_on(host, mesh).await;
        ran.setup_failed = setup_failure(&adopted, &phase, adopted_on);
        ran
    }

    /// Runs the scenario again, without faults (its own included), on the mesh `ran` left.
    pub async fn run_again(&self, host: &PluginHost, ran: &ScenarioRun) -> ScenarioRun {
        ran.mesh.clear_faults();
        self.run_on(host, ran.mesh.clone()).await
    }

    /// Runs the scenario again on the mesh a killed run left, as [`Prepared::run_again`], once
    /// the mesh's lock that run could not release is broken, as an operator breaks it: only
    /// a lock the killed run took, never one the scenario starts held.
    pub async fn run_again_unlocked(&self, host: &PluginHost, ran: &ScenarioRun) -> ScenarioRun {
        ran.mesh.clear_faults();
        let scenario_holder = self.setup.locked_by.as_ref().map(|held| held.id.as_str());
        if let Ok(Some((left, _))) = ran.mesh.lock_holder().await
            && Some(left.id.as_str()) != scenario_holder
        {
            let _ = ran.mesh.unlock(&left.id).await;
        }
        self.run_on(host, ran.mesh.clone()).await
    }

    /// Runs the scenario's modules on `mesh` as `mesh-adopt run` would: the same preflight and
    /// checks, against the catalogue in memory, with credentials nothing has handed out yet.
    async fn run_on(&self, host: &PluginHost, mesh: Arc<SimulatedMesh>) -> ScenarioRun {
        let transcript = Arc::new(Transcript::default());
        let run = Run::builder(host, &self.catalogue, &self.foundation, mesh.clone())
            .credentials(Arc::new(Credentials::in_memory(self.credentials.clone())))
            .record(transcript.clone())
            .options(self.options.clone())
            // Nothing cancels a scenario's run while a module runs (a sweep stops its runs
            // inside the simulated mesh): no turn at each call, which costs the sweep a third.
            .turns_at_calls(false)
            .build();
        let sealed_before = mesh.sealed();
        let report = run.run(&self.modules, Mode::Adopt).await;
        ScenarioRun { report, mesh, transcript, sealed_before, setup_failed: None }
    }
}

/// Why adopting `phase` on `node` as a scenario's starting mesh did not go cleanly, if it did
/// not: a module not adopted, or a rule of the mesh broken.
fn setup_failure(adopted: &RunReport, phase: &[String], node: &str) -> Option<String> {
    let whose = || format!("`mesh.adopted_on` could not adopt {} on `{node}` cleanly", phase.join(", "));
    if let Some(broken) = adopted.violations.first() {
        return Some(format!("{}: {} broken: {}", whose(), broken.rule.as_str(), broken.detail));
    }
    let (module, outcome) =
        adopted.modules.iter().find(|(_, outcome)| !matches!(outcome, ModuleOutcome::Adopted(_)))?;
    Some(format!("{}: `{module}`: {outcome}", whose()))
}

/// Runs `file`'s scenario against the catalogue at `catalogue` on a fresh mesh; `fail_call`
/// fails one call by its number. Any error names the scenario file.
pub async fn run(
    host: &PluginHost,
    catalogue: &Path,
    file: &ScenarioFile,
    fail_call: Option<(usize, FaultEffect)>,
) -> Result<ScenarioRun> {
    let prepared = Documents::read(catalogue)
        .and_then(|documents| prepare(&documents, file))
        .with_context(|| format!("failed to run the scenario `{}`", file.path.display()))?;
    Ok(prepared.run(host, fail_call).await)
}

/// The last module the run got to, and its outcome: what a scenario's outcome is of.
fn last_run(report: &RunReport) -> Option<(&str, &ModuleOutcome)> {
    report.modules.iter().rev().map(|(m, o)| (m.as_str(), o)).find(|(_, o)| !matches!(o, ModuleOutcome::NotRun { .. }))
}

/// How a run ended, as a scenario names it, with the message that goes with it: `adopted`
/// when every module was, else what became of the last module run, or `not run` when
/// preflight stopped the run before any; none when the run was asked to run no module. The
/// runtime's own word, so what a scenario expects and what a run reports are one type.
pub fn outcome_of(report: &RunReport) -> (Option<OutcomeWord>, String) {
    match last_run(report).map(|(_, outcome)| outcome) {
        Some(ModuleOutcome::Adopted(s)) if report.modules.iter().all(|(_, o)| o.succeeded()) => {
            (Some(OutcomeWord::Adopted), s.clone())
        }
        Some(ModuleOutcome::Refused { message, .. }) => (Some(OutcomeWord::Refused), message.clone()),
        Some(ModuleOutcome::Failed(stopped)) => (Some(OutcomeWord::Failed), stopped.report.clone()),
        Some(ModuleOutcome::Unusable(unusable)) => (Some(OutcomeWord::Unusable), unusable.message.clone()),
        Some(ModuleOutcome::Incomplete { summary, .. }) => (Some(OutcomeWord::Incomplete), summary.clone()),
        Some(other) => (Some(other.word()), other.shown()),
        // Preflight stopped the run before any module adopted: why, as every module says it.
        None => match report.modules.first() {
            Some((_, ModuleOutcome::NotRun { because, .. })) => (Some(OutcomeWord::NotRun), because.clone()),
            _ => (None, String::new()),
        },
    }
}

/// An outcome as a scenario's lines name it: its words, or `nothing run` for a run asked to
/// run no module.
pub(crate) fn named(outcome: Option<OutcomeWord>) -> &'static str {
    outcome.map_or("nothing run", OutcomeWord::words)
}

/// The code of the refusal that ended a run, if one did and it has a code.
pub fn refusal_code(report: &RunReport) -> Option<&str> {
    refusal(report).and_then(|(_, code)| code)
}

/// The refusal that ended a run, if one did: the module that refused, and the code, if the
/// refusal has one.
fn refusal(report: &RunReport) -> Option<(&str, Option<&str>)> {
    match last_run(report) {
        Some((module, ModuleOutcome::Refused { code, .. })) => Some((module, code.as_deref())),
        _ => None,
    }
}

/// How the refusal that ended a run differs from the code a scenario expects, if it does.
/// A refusal without a code passes only when the plugin that refused speaks contract 0.1.0,
/// whose refusals carry none by contract: the plugin's contract decides, not the missing code,
/// so a plugin of a later contract (or one the run did not say) that refuses without a code
/// is a difference, and a host's code is compared whatever the contract.
fn code_difference(
    expected: &str,
    refusal: Option<(&str, Option<&str>)>,
    contracts: &BTreeMap<String, Contract>,
    message: &str,
) -> Option<String> {
    let (module, code) = refusal?;
    let contract = contracts.get(module).copied();
    match code {
        Some(code) if code == expected => None,
        Some(code) => Some(format!("code: expected {expected}, got {code}: {message}")),
        None if contract == Some(Contract::V0_1) => None,
        None => {
            let speaks =
                contract.map_or("a contract the run did not say".to_string(), |c| format!("contract {}", c.version()));
            Some(format!("code: expected {expected}, got none from a plugin of {speaks}: {message}"))
        }
    }
}

/// Compares a run with what the scenario expects; each difference is one line (several
/// for a command list, shown as a diff).
pub fn differences(scenario: &Scenario, ran: &ScenarioRun) -> Vec<String> {
    let expect = &scenario.expect;
    let mut found = Vec::new();
    if let Some(why) = &ran.setup_failed {
        found.push(format!("setup: {why}"));
    }
    let (word, message) = outcome_of(&ran.report);
    let outcome = named(word);
    if word != Some(expect.outcome) {
        found.push(format!("outcome: expected {}, got {outcome}: {message}", expect.outcome));
    }
    if let Some(expected) = &expect.code
        && word == Some(expect.outcome)
        && let Some(difference) = code_difference(expected, refusal(&ran.report), &ran.report.contracts, &message)
    {
        found.push(difference);
    }
    let said: Vec<String> = scenario.modules.iter().flat_map(|m| ran.transcript.said(m)).collect();
    let missing: Vec<&String> = expect
        .messages
        .iter()
        .filter(|fragment| !message.contains(fragment.as_str()) && !said.iter().any(|l| l.contains(fragment.as_str())))
        .collect();
    if !missing.is_empty() {
        // What was said instead is what the author needs to mend either the plugin or the
        // expectation.
        let fragments: Vec<String> = missing.iter().map(|f| format!("{f:?}")).collect();
        let mut text = format!("message: no {} in the {outcome} message or the lines said", fragments.join(", no "));
        // A wrong outcome has already shown its message.
        let shown = if word != Some(expect.outcome) {
            "(above)"
        } else if message.is_empty() {
            "(no message)"
        } else {
            &message
        };
        text.push_str(&format!("\n  {outcome}: {shown}"));
        match said.as_slice() {
            [] => text.push_str("\n  said: (nothing)"),
            lines => text.push_str(&format!("\n  said: {}", lines.join("\n        "))),
        }
        found.push(text);
    }
    let shown: Vec<String> = expect
        .absent
        .iter()
        .filter(|fragment| message.contains(fragment.as_str()) || said.iter().any(|l| l.contains(fragment.as_str())))
        .map(|fragment| format!("{fragment:?}"))
        .collect();
    if !shown.is_empty() {
        let said = if said.is_empty() { "(nothing)".to_string() } else { said.join("\n        ") };
        found.push(format!(
            "message: {} in the {outcome} message or the lines said, where the scenario expects none\n  {outcome}: \
             {message}\n  said: {said}",
            shown.join(", ")
        ));
    }
    // A fault no call matched did nothing: most often a typo in `matching`.
    let left = ran.mesh.faults_left();
    for (index, fault) in scenario.mesh.faults.iter().enumerate() {
        if left.iter().any(|f| f.op.as_str() == fault.op && f.matching == fault.matching && f.times == fault.times) {
            found.push(format!(
                "fault {} (`{}` matching {:?}) was never applied: no call matched it",
                index + 1,
                fault.op,
                fault.matching
            ));
        }
    }
    let commands: Vec<String> = ran.mesh.commands().iter().map(ToString::to_string).collect();
    if let Some(expected) = &expect.commands
        && expected != &commands
    {
        found.push(format!("commands (- expected, + actual):\n{}", diff(expected, &commands)));
    }
    let changed = |want: &dyn Fn(&ContainerChange) -> Option<String>| -> Vec<String> {
        ran.report.changes.iter().filter_map(want).collect()
    };
    let kept = changed(&|c| matches!(c, ContainerChange::Kept { .. }).then(|| c.name().to_string()));
    let recreated = changed(&|c| matches!(c, ContainerChange::Recreated { .. }).then(|| c.name().to_string()));
    let created = changed(&|c| matches!(c, ContainerChange::Created { .. }).then(|| c.name().to_string()));
    for (what, want, got) in [
        ("kept", &expect.kept, kept),
        ("recreated", &expect.recreated, recreated),
        ("created", &expect.created, created),
    ] {
        if want != &got {
            found.push(format!("{what}: expected {want:?}, got {got:?}"));
        }
    }
    // Accepted by this run: a mesh that starts adopted holds what its setup accepted too.
    let commands_here = ran.mesh.commands();
    let told_here: Vec<(&str, &str)> = commands_here
        .iter()
        .filter_map(|c| match c {
            Command::SecretAccept { module, secret, .. } => Some((module.as_str(), secret.as_str())),
            _ => None,
        })
        .collect();
    let accepted: Vec<String> = ran
        .mesh
        .accepted()
        .iter()
        .filter(|(m, s)| told_here.contains(&(m.as_str(), s.as_str())))
        .map(|(m, s)| format!("{m}/{s}"))
        .collect();
    if expect.accepted != accepted {
        found.push(format!("accepted: expected {:?}, got {accepted:?}", expect.accepted));
    }
    if let Some(expected) = &expect.sealed {
        let sealed: Vec<String> = ran
            .mesh
            .sealed()
            .into_iter()
            .filter(|s| !ran.sealed_before.contains(s))
            .map(|(m, s)| format!("{m}/{s}"))
            .collect();
        if expected != &sealed {
            found.push(format!("sealed: expected {expected:?}, got {sealed:?}"));
        }
    }
    if let Some(expected) = &expect.carried {
        let carried: BTreeMap<String, String> = ran
            .mesh
            .carried()
            .into_iter()
            .map(|(remote, secret)| (remote, if secret { "secret" } else { "file" }.to_string()))
            .collect();
        if expected != &carried {
            found.push(format!("carried: expected {expected:?}, got {carried:?}"));
        }
    }
    // Which invariants broke, each once: a plugin that breaks one twice (in preflight and
    // again in adopt) broke it.
    let mut broken: Vec<&str> = Vec::new();
    for violation in &ran.report.violations {
        if !broken.contains(&violation.rule.as_str()) {
            broken.push(violation.rule.as_str());
        }
    }
    if expect.broken != broken {
        let how: Vec<String> = ran.report.violations.iter().map(|v| format!("\n  {v}")).collect();
        found.push(format!("invariants broken: expected {:?}, got {broken:?}{}", expect.broken, how.concat()));
    }
    found
}

/// A line diff of two command lists: unchanged lines indented, others marked - or +.
pub(crate) fn diff(expected: &[String], actual: &[String]) -> String {
    let (n, m) = (expected.len(), actual.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut lines) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            lines.push(format!("      {}", expected[i]));
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            lines.push(format!("    + {}", actual[j]));
            j += 1;
        } else {
            lines.push(format!("    - {}", expected[i]));
            i += 1;
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The contracts of a run in which `postgres`'s plugin speaks `contract`.
    fn postgres_speaks(contract: Contract) -> BTreeMap<String, Contract> {
        BTreeMap::from([("postgres".to_string(), contract)])
    }

    #[test]
    fn a_refusal_without_a_code_from_a_plugin_of_0_2_0_is_a_difference() {
        let refused = Some(("postgres", None));
        let found = code_difference("image-differs", refused, &postgres_speaks(Contract::V0_2), "the image differs");
        assert_eq!(
            found.as_deref(),
            Some("code: expected image-differs, got none from a plugin of contract 0.2.0: the image differs")
        );
        // A plugin whose contract the run did not say is not taken for a 0.1.0 one.
        let found = code_difference("image-differs", refused, &BTreeMap::new(), "the image differs");
        assert_eq!(
            found.as_deref(),
            Some(
                "code: expected image-differs, got none from a plugin of a contract the run did not say: the image \
                 differs"
            )
        );
    }

    #[test]
    fn a_refusal_of_0_1_0_passes_without_a_code_and_a_code_given_is_compared_whatever_the_contract() {
        let found = code_difference("image-differs", Some(("postgres", None)), &postgres_speaks(Contract::V0_1), "m");
        assert_eq!(found, None);
        for contract in Contract::ALL {
            let contracts = postgres_speaks(contract);
            assert_eq!(
                code_difference("image-differs", Some(("postgres", Some("image-differs"))), &contracts, "m"),
                None
            );
            let found = code_difference("image-differs", Some(("postgres", Some("plan-changed"))), &contracts, "m");
            assert_eq!(found.as_deref(), Some("code: expected image-differs, got plan-changed: m"), "{contract:?}");
        }
        // Another module's contract is not the refusing one's.
        let found = code_difference("image-differs", Some(("nats", None)), &postgres_speaks(Contract::V0_1), "m");
        assert!(found.is_some());
    }
}
