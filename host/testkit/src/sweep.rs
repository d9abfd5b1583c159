//! The sweep: each scenario run again with every call that reached the mesh failed in turn,
//! then timed out in turn, then the host killed after it in turn, and each of those runs
//! judged against the clean run: the invariants held, a refusal named the failed step, and
//! running the scenario again, without faults, on the mesh the fault left converged to where
//! the clean run, run again the same way, ends. A killed host leaves the mesh's lock it held,
//! which is broken before the run again, as an operator would break it.

use std::path::Path;

use anyhow::{Context as _, Result};

use mesh_adopt_runtime::PluginHost;
use mesh_adopt_runtime::RunReport;
use mesh_adopt_runtime::events::OutcomeWord;
use mesh_adopt_runtime::mesh::simulated::FaultEffect;

use crate::documents::{Documents, Prepared, prepare};
use crate::files::ScenarioFile;
use crate::running::{diff, named, outcome_of};

/// What the sweep found for one scenario.
#[derive(Debug, Clone, Default)]
pub struct SweepResult {
    /// Faulted runs made: one per call failed, one per call timed out.
    pub steps: usize,
    /// Runs that kept every invariant, named the failed step if they refused, and converged.
    pub survived: usize,
    /// Runs that did not converge when run again.
    pub not_converged: usize,
    /// One line for each faulted run that did not survive, naming the step.
    pub problems: Vec<String>,
}

/// Sweeps `file`'s scenario against the catalogue at `catalogue`: see [`sweep_prepared`].
/// Any error names the scenario file.
pub fn sweep(host: &PluginHost, catalogue: &Path, file: &ScenarioFile) -> Result<SweepResult> {
    let prepared = Documents::read(catalogue)
        .and_then(|documents| prepare(&documents, file))
        .with_context(|| format!("failed to sweep the scenario `{}`", file.path.display()))?;
    Ok(sweep_prepared(host, &prepared))
}

/// Fails each call of the scenario's clean run in turn, then times each out in turn, and
/// judges every faulted run (see the module's documentation).
///
/// The steps are independent runs, so they are shared among a thread per core, each with a
/// runtime of its own; the result is the same, in the same order, as one thread would give.
/// It blocks the calling thread until every step is judged.
pub fn sweep_prepared(host: &PluginHost, prepared: &Prepared) -> SweepResult {
    let reference = std::thread::scope(|scope| {
        scope.spawn(|| on_own_runtime(Reference::of(host, prepared))).join().expect("the clean run does not panic")
    });
    let steps = steps(&reference.calls);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, steps.len().max(1));
    let mut verdicts: Vec<(usize, Verdict)> = std::thread::scope(|scope| {
        let (reference, steps) = (&reference, &steps);
        let shares: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    on_own_runtime(async {
                        let mut verdicts = Vec::new();
                        for index in (worker..steps.len()).step_by(workers) {
                            let ran = StepRun::of(host, prepared, &steps[index]).await;
                            verdicts.push((index, judge(reference, &steps[index], &ran)));
                        }
                        verdicts
                    })
                })
            })
            .collect();
        shares.into_iter().flat_map(|share| share.join().expect("a sweep step does not panic")).collect()
    });
    verdicts.sort_by_key(|(index, _)| *index);
    let mut result = SweepResult::default();
    for (index, verdict) in verdicts {
        result.add(&steps[index], verdict);
    }
    result
}

/// Runs `work` to its end on a runtime of the calling thread's own: what lets a sweep's
/// threads each drive their runs, whatever runtime (if any) the caller is on.
fn on_own_runtime<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a thread's own async runtime starts")
        .block_on(work)
}

/// What every faulted run is judged against: the clean run's calls and outcome, and where the
/// clean run ends when run again too, as every faulted run is (each rerun runs without faults,
/// the scenario's own included, so both sides end the same way).
struct Reference {
    calls: Vec<String>,
    refused: bool,
    /// The invariants the clean run broke: a scenario of a misbehaving plugin expects them,
    /// so under a fault they are not the fault's doing.
    broken: Vec<&'static str>,
    /// Where the clean run leaves the mesh.
    adopted: String,
    /// Where it ends once run again.
    end: String,
    /// How that second run ends, and why.
    again: (Option<OutcomeWord>, String),
    /// The outcome the scenario expects.
    expected: OutcomeWord,
}

impl Reference {
    async fn of(host: &PluginHost, prepared: &Prepared) -> Reference {
        let clean = prepared.run(host, None).await;
        let calls = clean.mesh.calls();
        let adopted = clean.mesh.end_state();
        let again = prepared.run_again(host, &clean).await;
        let broken = clean.report.violations.iter().map(|v| v.rule.as_str()).collect();
        Reference {
            calls,
            refused: !clean.report.succeeded(),
            broken,
            adopted,
            end: clean.mesh.end_state(),
            again: outcome_of(&again.report),
            expected: prepared.expected,
        }
    }
}

/// One faulted run: the call (counted among every call that reached the mesh) and what it gets.
struct Step {
    index: usize,
    call: String,
    effect: FaultEffect,
}

impl Step {
    /// How a problem line names the step: `step 8 (`tell …`) failed`.
    fn name(&self) -> String {
        let kind = match self.effect {
            FaultEffect::TimeOut => "timed out",
            FaultEffect::HostKilledAfter => "went through, then the host was killed",
            FaultEffect::Fail(_) => "failed",
        };
        format!("step {} (`{}`) {kind}", self.index + 1, self.call)
    }

    /// The call's words without its kind (`tell`, `carry`…): what a refusal should mention.
    fn words(&self) -> &str {
        self.call.split_once(' ').map(|(_, words)| words).unwrap_or(&self.call)
    }
}

/// Every step of a sweep: each call failed in turn, then each timed out in turn, then the
/// host killed after each in turn.
fn steps(calls: &[String]) -> Vec<Step> {
    let effects = [
        FaultEffect::Fail("injected fault: the mesh said no".into()),
        FaultEffect::TimeOut,
        FaultEffect::HostKilledAfter,
    ];
    effects
        .iter()
        .flat_map(|effect| {
            calls.iter().enumerate().map(|(index, call)| Step { index, call: call.clone(), effect: effect.clone() })
        })
        .collect()
}

/// A faulted run, the same scenario run again without faults on what it left, and where that
/// ended.
struct StepRun {
    faulted: RunReport,
    /// Where the faulted run left the mesh.
    left: String,
    again: RunReport,
    end: String,
}

impl StepRun {
    async fn of(host: &PluginHost, prepared: &Prepared, step: &Step) -> StepRun {
        let faulted = prepared.run(host, Some((step.index, step.effect.clone()))).await;
        let left = faulted.mesh.end_state();
        let again = match step.effect {
            // The killed host could not release the mesh's lock; the operator breaks it, as
            // `mesh-adopt unlock` would, before running again.
            FaultEffect::HostKilledAfter => prepared.run_again_unlocked(host, &faulted).await,
            _ => prepared.run_again(host, &faulted).await,
        };
        StepRun { left, end: faulted.mesh.end_state(), faulted: faulted.report, again: again.report }
    }
}

/// A mesh's state without whether each module was issued a bus account: the one step the
/// provider sequence goes on without (a module with nothing to say on the bus is refused
/// one), so the one difference a run that reports success may leave.
fn without_accounts(state: &str) -> String {
    state
        .lines()
        .map(|line| line.split(' ').filter(|w| !w.starts_with("issued=")).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What was wrong with one step, and whether it converged.
struct Verdict {
    problems: Vec<String>,
    converged: bool,
}

/// Judges one step: the faulted run kept every invariant and, unless the clean run refused
/// too, any refusal names the failed call; running again broke nothing (said only when
/// nothing else was wrong: it follows from what was), ended as the clean run run again ends
/// (and adopted, for a scenario that expects it), and converged to the clean end. A run whose
/// host was killed is judged by its rerun alone: nothing the dead host said counts.
fn judge(reference: &Reference, step: &Step, ran: &StepRun) -> Verdict {
    let mut problems = Vec::new();
    if step.effect != FaultEffect::HostKilledAfter {
        judge_faulted(reference, step, ran, &mut problems);
    }
    if let Some(broken) = violations(reference, &ran.again)
        && problems.is_empty()
    {
        problems.push(format!("running again: {broken}"));
    }
    let (again, why) = outcome_of(&ran.again);
    if again != reference.again.0 {
        problems.push(format!(
            "running again ended {} where the clean run, run again, ended {}: {why}",
            named(again),
            named(reference.again.0)
        ));
    } else if reference.expected == OutcomeWord::Adopted && again != Some(OutcomeWord::Adopted) {
        problems.push(format!("running again ended {}, and the scenario expects adopted: {why}", named(again)));
    }
    let converged = ran.end == reference.end;
    if !converged {
        let lines = |text: &str| text.lines().map(String::from).collect::<Vec<_>>();
        problems.push(format!(
            "running again did not converge to the clean end state:\n{}",
            diff(&lines(&reference.end), &lines(&ran.end))
        ));
    }
    Verdict { problems, converged }
}

/// What a faulted run itself must show: no new broken invariant, a refusal naming the failed
/// call, and no success claimed over a failure it did not act on.
fn judge_faulted(reference: &Reference, step: &Step, ran: &StepRun, problems: &mut Vec<String>) {
    if let Some(broken) = violations(reference, &ran.faulted) {
        problems.push(broken);
    }
    let refusal = ran.faulted.modules.iter().find_map(|(_, o)| o.problem());
    if let Some(message) = refusal
        && !reference.refused
        && !message.contains(step.words())
    {
        problems.push(format!("the refusal does not name the step: {message}"));
    }
    // A run that says it adopted, with a call failed under it, must have left the mesh as
    // the clean run does: otherwise the failure was swallowed and the report is false.
    if ran.faulted.succeeded()
        && !reference.refused
        && without_accounts(&ran.left) != without_accounts(&reference.adopted)
    {
        let lines = |text: &str| without_accounts(text).lines().map(String::from).collect::<Vec<_>>();
        problems.push(format!(
            "it reported success, but left the mesh other than the clean run does (the failure was not acted \
             on):\n{}",
            diff(&lines(&reference.adopted), &lines(&ran.left))
        ));
    }
}

/// The invariants a run broke that the clean run did not, in one line, if it broke any.
fn violations(reference: &Reference, report: &RunReport) -> Option<String> {
    let new: Vec<String> = report
        .violations
        .iter()
        .filter(|v| !reference.broken.contains(&v.rule.as_str()))
        .map(ToString::to_string)
        .collect();
    (!new.is_empty()).then(|| new.join("; "))
}

impl SweepResult {
    /// Counts one step's verdict.
    fn add(&mut self, step: &Step, verdict: Verdict) {
        self.steps += 1;
        if !verdict.converged {
            self.not_converged += 1;
        }
        if verdict.problems.is_empty() {
            self.survived += 1;
        } else {
            self.problems.push(format!("{}: {}", step.name(), verdict.problems.join("; ")));
        }
    }
}
