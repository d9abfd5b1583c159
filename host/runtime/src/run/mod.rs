//! Phase three as a run. Preflight first: every module's catalogue entry, manifest, plugin and
//! credentials are read and verified and its `check` runs, changing nothing, and any problem
//! anywhere stops the run before its first effect. Then each module is checked again (the
//! mesh may have moved), adopted in order and held to the plan preflight showed; after each,
//! the mesh is asked what changed and whether every invariant held.

mod adopt;
mod builder;

mod foresight;
mod hold;
mod lock;
pub mod plan_file;
mod preflight;
pub(crate) mod problem;
mod report;
mod reread;
mod rules;
mod scrub;
mod shared;
mod stream;

use std::path::PathBuf;
use std::sync::Arc;

use crate::catalogue::credentials::Credentials;
use crate::catalogue::plan_key::PlanKey;
use crate::catalogue::{Catalogue, Foundation};
use crate::events;
use crate::mesh::Mesh;
pub use crate::model::options::RunOptions;
use crate::plugin::PluginHost;
use crate::record::stream::Sink;
use crate::record::transcript::Transcript;
use crate::run::plan_file::SavedPlan;
pub use builder::RunBuilder;
pub use report::{Held, ModuleOutcome, RulesChecked, RunReport, Unusable};
pub use shared::Shared;

/// The modules phase three adopts, in its order: the store first, since everything keeps its
/// records there; then the bus; then the vault.
pub const PHASE_THREE: [&str; 3] = ["postgres", "nats", "mesh-vault"];

/// Whether a run only checks or goes on to adopt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Preflight only: every module loaded, verified and checked; nothing changes.
    Check,
    /// Preflight, then each module checked again and adopted, held to its plan.
    Adopt,
}

/// One run of a catalogue's modules against a mesh: made with [`Run::builder`], then
/// [`Run::run`] once (a whole preflight and, if asked, adopt), with one record. A second run
/// is another `Run` from another builder.
pub struct Run<'a> {
    host: Shared<'a, PluginHost>,
    catalogue: Shared<'a, Catalogue>,
    foundation: Shared<'a, Foundation>,
    credentials: Arc<Credentials>,
    mesh: Arc<dyn Mesh>,
    transcript: Arc<Transcript>,
    options: RunOptions,
    plugin_overrides: Vec<(String, PathBuf)>,
    saved_plan: Option<SavedPlan>,
    plan_key: PlanKey,
    /// Where the run's events stream as they happen, with the command named in its header.
    events: Option<(Arc<dyn Sink>, events::Command)>,
    /// The modules whose outcome has been streamed, so each is once, when it is final.
    streamed: std::sync::Mutex<Vec<String>>,
    /// Whether the stream has had its last line (`end` or `interrupted`): it gets one.
    ended: std::sync::atomic::AtomicBool,
    /// How the run ended, as its report says: the code and remedy its `end` event carries.
    ending: std::sync::Mutex<Option<(crate::model::ending::Ending, Option<crate::remedy::Remedy>)>>,
    /// Whether [`Run::run`] was called: a run has one record, so it runs once.
    ran: std::sync::atomic::AtomicBool,
    /// The command line a refused run is shown as the lock's holder.
    lock_command: String,
    /// How long a run waits for the mesh's lock another holds before it gives up.
    lock_timeout: std::time::Duration,
    /// Whether the executor has a turn at every host call ([`RunBuilder::turns_at_calls`]).
    turns_at_calls: bool,
}

impl Run<'_> {
    /// [`Run::run`] for a caller that is not async (a synchronous `main`): the run is driven
    /// to its end by a current-thread runtime made for it. Called from inside an async runtime
    /// it does not panic either: it drives the run on a thread of its own and blocks the
    /// calling thread until the run ends (so from async code, prefer `.await` on `run`).
    /// An error only when the system refuses the runtime (an epoll, an eventfd or a thread).
    pub fn run_blocking(&self, modules: &[String], mode: Mode) -> std::io::Result<RunReport> {
        let drive = || -> std::io::Result<RunReport> {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            Ok(runtime.block_on(self.run(modules, mode)))
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return drive();
        }
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("mesh-adopt-run".into())
                .spawn_scoped(scope, drive)?
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Runs `modules`: preflight first (every module loaded, verified and checked, changing
    /// nothing), then, only if every module passed and `mode` adopts, each module checked
    /// again and adopted in order, stopping at the first that does not succeed.
    ///
    /// A run that adopts holds the mesh's lock ([`Mesh::lock`]) from before preflight to its
    /// end: when another holds it, the run waits up to [`RunBuilder::lock_timeout`], then
    /// changes nothing and reports every module not run, held by [`Held::Locked`]. A check
    /// takes no lock and says when one is held.
    ///
    /// Any executor drives it: it needs no timer or IO driver of the caller's (a tokio
    /// current-thread runtime, one built without timers, or another executor will do).
    /// **Cancelling**: drop the future. The plugin in flight is stopped where it stands (its
    /// sandbox dropped, its host call abandoned), the live mesh's control-plane command in
    /// flight is killed with its process group, and nothing more reaches the mesh; what had
    /// been done is in the record ([`Transcript::interrupted`] says it as the record's last
    /// event), and the mesh's lock is released as the future is dropped. The run yields to
    /// its executor at every host call that reaches the mesh, hands over a credential or
    /// sleeps, and between modules, whatever the mesh, so a future dropped while the run had
    /// the executor's turn stops at its next such call.
    ///
    /// A `Run` runs once: called again, it changes nothing, writes nothing to the record and
    /// reports every module not run, held by [`Held::AlreadyRan`].
    pub async fn run(&self, modules: &[String], mode: Mode) -> RunReport {
        if self.ran.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return self.already_ran(modules);
        }
        self.start_stream(modules, mode);
        // Options a run cannot use stop it before anything reaches the mesh, whoever made them.
        if let Some((held, because)) = self.unusable_options() {
            return self.streamed(self.held_back(modules, held, because));
        }
        // Held from before preflight to the end, however the run ends (a dropped run's guard
        // releases it as it goes).
        let lock = match self.take_lock(mode).await {
            Ok(lock) => lock,
            Err((held, because)) => return self.streamed(self.held_back(modules, held, because)),
        };
        let (mut preflight, mut loaded) = self.preflight(modules).await;
        let mut outcomes = std::mem::take(&mut preflight.modules);
        // Only plans every module made can be walked through the push rule.
        let foreseen = match outcomes.iter().all(|(_, o)| o.succeeded()) {
            true => Some(self.foresee(&mut outcomes, &mut loaded).await),
            false => None,
        };
        // A saved plan binds the mesh it was made on and what its pushes were to do there.
        preflight.saved.mesh = self.mesh.summary();
        preflight.saved.effect =
            foreseen.as_ref().map(|f| plan_file::SavedEffect::of(&f.prediction)).unwrap_or_default();
        let hold = self.hold(mode, &outcomes, foreseen.as_ref(), &preflight.saved);
        let mut violations = self.mesh.audit().violations;
        violations.extend(foreseen.iter().flat_map(|f| f.broken.iter().cloned()));
        let adopting = mode == Mode::Adopt && hold.is_none();
        let mut ours = None;
        let held = match hold {
            Some((held, because)) => {
                for (_, outcome) in outcomes.iter_mut().filter(|(_, o)| o.succeeded()) {
                    *outcome = held.not_run(&because);
                }
                Some(held)
            }
            None if adopting => {
                (violations, ours) = self.adopt_all(&mut outcomes, loaded, foreseen.as_ref()).await;
                None
            }
            None => None,
        };
        // What the last push does to the node is part of the run: let it land, then look again.
        self.mesh.quiesce().await;
        // Once the mesh moved under the run, what the mesh reports after its last push is
        // another's: the summary claims only this run's.
        let audit = match ours {
            Some(ours) => ours.cut(self.mesh.audit()),
            None => self.mesh.audit(),
        };
        self.violations_at_end(&mut violations, &audit, foreseen.as_ref());
        let rules = self.rules_checked(modules, foreseen.as_ref(), adopting, audit.observed);
        // Every outcome is told before the lock goes: its release (and any wait for what the
        // control plane still runs) comes after them, as the stream's grammar has it.
        for (module, outcome) in &outcomes {
            self.stream_outcome(module, outcome);
        }
        let lock_left = self.release_lock(lock).await;
        let report = RunReport {
            modules: outcomes,
            changes: audit.changes,
            violations,
            mesh: self.mesh.summary(),
            made_from: preflight.saved,
            rules,
            held,
            contracts: preflight.contracts,
            lock_left,
        };
        self.streamed(report)
    }

    /// `report`, its outcomes not streamed yet and its summary streamed.
    fn streamed(&self, report: RunReport) -> RunReport {
        for (module, outcome) in &report.modules {
            self.stream_outcome(module, outcome);
        }
        self.stream(&events::Event::Summary(events::SummaryEvent::of(&report)));
        *self.ending.lock().unwrap_or_else(|p| p.into_inner()) = report.ending().map(|code| (code, report.remedy()));
        report
    }
}
