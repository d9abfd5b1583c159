//! Phase three as a run. Preflight first: every module's catalogue entry, manifest, plugin and
//! credentials are read and verified and its `check` runs, changing nothing, and any problem
//! anywhere stops the run before its first effect. Then each module is checked again (the
//! mesh may have moved), adopted in order and held to the plan preflight showed; after each,
//! the mesh is asked what changed and whether every invariant held.

pub mod fleet;
pub mod plan_file;

use std::path::PathBuf;
use std::sync::Arc;

use std::time::Duration;

use anyhow::Result;
use mesh_adopt_manifest::command::BUILD_TIMEOUT_SECONDS;

use crate::catalogue::credentials::Credentials;
use crate::catalogue::plan_key::PlanKey;
use crate::catalogue::sha256_hex;
use crate::catalogue::{Catalogue, Foundation, FoundationResource};
use crate::effect::Violation;
use crate::effect::{ContainerSpec, Declarations, MeshView, Prediction, PushEffect, SecretEffect, predict, rules};
use crate::effect::{Planned, Seen};
use crate::error::LimitName;
use crate::events::{self, OutcomeWord};
use crate::mesh::{ContainerChange, Mesh};
use crate::model::Phase;
use crate::model::contract::Contract;
pub use crate::model::options::RunOptions;
use crate::model::{Context, Plan};
use crate::model::{Input, Stopped, Unusable};
use crate::plugin::{Plugin, PluginHost, RunEnv};
use crate::record::screen::{visible, visible_lines};
use crate::record::stream::Sink;
use crate::record::transcript::{Event, Transcript};
use crate::run::plan_file::{SavedPlan, plan_difference};
use crate::sandbox::grants::{Call, Permissions};

/// A typed error with what its reader can do about it, said after it.
#[derive(Debug)]
struct Remedied {
    error: crate::error::Error,
    remedy: String,
}

impl std::fmt::Display for Remedied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.remedy)
    }
}

impl std::error::Error for Remedied {}

/// The modules phase three adopts, in its order: the store first, since everything keeps its
/// records there; then the bus; then the vault.
pub const PHASE_THREE: [&str; 3] = ["postgres", "nats", "mesh-vault"];

/// How often the node is asked whether a push has landed as predicted.
const LANDED_POLL: Duration = Duration::from_secs(2);

/// The longest refusal, report or plan line kept from a plugin; a longer one is cut.
const REFUSAL_BYTES: usize = 16 << 10;

/// How a module's turn ended.
#[derive(Debug, Clone)]
pub enum ModuleOutcome {
    /// `check` passed; this is its plan (a check-only run stops here).
    Checked(Plan),
    /// `adopt` told its whole plan and succeeded, with the plugin's one-line summary.
    Adopted(String),
    /// The plugin refused, in `check` or in `adopt`.
    Refused {
        /// In which export it refused.
        during: Phase,
        /// The refusal's kind, kebab-case: the plugin's own code (none from a plugin of
        /// contract 0.1.0), or the host's where the host refuses for it.
        code: Option<String>,
        /// Its refusal, scrubbed of secrets.
        message: String,
    },
    /// `adopt` returned success before it told every command of its plan.
    Incomplete {
        /// The one-line summary it returned.
        summary: String,
        /// The commands of its plan it never told.
        left: Vec<Vec<String>>,
    },
    /// An input of the run cannot be used: the module's catalogue entry, manifest, plugin or
    /// credentials, or a plugin the sandbox stopped while it was only being checked.
    Unusable(Unusable),
    /// The sandbox stopped the plugin during `adopt` (or during the check just before it).
    Failed(Stopped),
    /// Another module did not succeed, so this one was left alone.
    NotRun {
        /// Which module, or what, stopped the run first.
        because: String,
    },
}

impl ModuleOutcome {
    /// Whether the module did what the run asked of it.
    pub fn succeeded(&self) -> bool {
        matches!(self, ModuleOutcome::Checked(_) | ModuleOutcome::Adopted(_))
    }

    /// The text a person reads for an outcome that did not succeed.
    pub fn problem(&self) -> Option<&str> {
        match self {
            ModuleOutcome::Refused { message, .. } => Some(message),
            ModuleOutcome::Unusable(unusable) => Some(&unusable.message),
            ModuleOutcome::Failed(stopped) => Some(&stopped.report),
            _ => None,
        }
    }
}

impl ModuleOutcome {
    /// The outcome's name, as the summary, the record and a scenario name it.
    pub fn word(&self) -> OutcomeWord {
        match self {
            ModuleOutcome::Checked(_) => OutcomeWord::Ready,
            ModuleOutcome::Adopted(_) => OutcomeWord::Adopted,
            ModuleOutcome::Refused { .. } => OutcomeWord::Refused,
            ModuleOutcome::Incomplete { .. } => OutcomeWord::Incomplete,
            ModuleOutcome::Unusable(_) => OutcomeWord::Unusable,
            ModuleOutcome::Failed(_) => OutcomeWord::Failed,
            ModuleOutcome::NotRun { .. } => OutcomeWord::NotRun,
        }
    }

    /// The outcome's text for a person, with every piece of plugin text made visible (see
    /// [`crate::record::screen`]) so none of it can pass for a line of the host's own.
    pub fn shown(&self) -> String {
        let tell = |c: &[String]| format!("  tell {}", visible(&c.join(" ")));
        match self {
            ModuleOutcome::Checked(plan) => {
                let mut lines: Vec<String> = plan.summary.iter().map(|l| visible(l)).collect();
                lines.extend(plan.commands.iter().map(|c| tell(c)));
                lines.join("\n")
            }
            ModuleOutcome::Adopted(summary) => visible(summary),
            ModuleOutcome::Refused { during, code, message } => match code {
                Some(code) => format!("(in {during}, {code}) {}", visible(message)),
                None => format!("(in {during}) {}", visible(message)),
            },
            ModuleOutcome::Incomplete { summary, left } => {
                let mut lines = vec![format!(
                    "its adopt returned success ({}) before telling its whole plan; {} commands were never told:",
                    visible(summary),
                    left.len()
                )];
                lines.extend(left.iter().map(|c| tell(c)));
                lines.join("\n")
            }
            ModuleOutcome::Unusable(unusable) => visible_lines(&unusable.message),
            ModuleOutcome::Failed(stopped) => visible_lines(&stopped.report),
            ModuleOutcome::NotRun { because } => because.clone(),
        }
    }
}

/// `word: text`, as a person reads it.
impl std::fmt::Display for ModuleOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.word(), self.shown())
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Each module asked for, in order, with its outcome.
    pub modules: Vec<(String, ModuleOutcome)>,
    /// Container changes the mesh reports.
    pub changes: Vec<ContainerChange>,
    /// Invariants found broken; any fails the run.
    pub violations: Vec<Violation>,
    /// Which backend the run acted on.
    pub mesh: String,
    /// The plans preflight made and what they were made from: what `check --out` saves.
    pub made_from: SavedPlan,
    /// How far the rules of the mesh were checked.
    pub rules: RulesChecked,
    /// Why preflight held back every effect, when it did: what an installer acts on
    /// without reading the modules' `not run` texts.
    pub held: Option<Held>,
}

/// Why preflight held back every effect of a run asked to adopt (a module that refuses in
/// its own turn, after preflight, is its outcome's to say).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Held {
    /// Preflight could not look at the mesh (its container engine erred or did not answer).
    MeshUnseen {
        /// What went wrong, in words.
        why: String,
    },
    /// A module could not be used or refused (its outcome says which and why).
    Problems {
        /// The modules that did not succeed.
        modules: Vec<String>,
    },
    /// The saved plan the run was to apply was made from something that has changed.
    StalePlan {
        /// The first thing that differs.
        difference: String,
    },
    /// The phase's pushes were predicted to break a rule of the mesh.
    RuleWouldBreak {
        /// The rules, by their stable names.
        invariants: Vec<String>,
    },
    /// A plugin showed a secret's value while it was being checked.
    SecretShown,
}

/// How far a run checked the rules of the mesh, so a summary never says "held" of what
/// nothing checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesChecked {
    /// Preflight stopped before the effect was predicted.
    NotPredicted,
    /// Predicted from the mesh's state; nothing after a push was checked (a check, a run that
    /// adopted nothing, or a mesh that does not report what its node did).
    Predicted,
    /// Predicted, then after each push the containers inspected until they matched; what the
    /// node sealed cannot be seen on such a mesh (a live one).
    Inspected,
    /// As [`RulesChecked::Inspected`], but the mesh showed images only (an older inspect
    /// template): the rules on volumes were predicted, not inspected.
    InspectedImages,
    /// Predicted, then checked after each push on all the node did.
    Verified,
}

impl RulesChecked {
    /// How far this run checked `rule`: a live mesh's inspection sees containers, not what
    /// its node sealed, and rules of the plans alone (`one-owner`, `one-push`) are only ever
    /// predicted there.
    pub fn of_rule(self, rule: crate::effect::Rule) -> RulesChecked {
        use crate::effect::Rule;
        match (self, rule) {
            (
                RulesChecked::Inspected | RulesChecked::InspectedImages,
                Rule::CredentialNeverReplaced | Rule::OneOwner | Rule::OnePush,
            ) => RulesChecked::Predicted,
            (RulesChecked::InspectedImages, Rule::AdoptedKeepsVolumes | Rule::GenesisVolumesHeldOnce) => {
                RulesChecked::Predicted
            }
            (RulesChecked::InspectedImages, _) => RulesChecked::Inspected,
            (how, _) => how,
        }
    }

    /// The word the record uses.
    pub fn word(self) -> &'static str {
        match self {
            RulesChecked::NotPredicted => "not_predicted",
            RulesChecked::Predicted => "predicted",
            RulesChecked::Inspected | RulesChecked::InspectedImages => "inspected",
            RulesChecked::Verified => "verified",
        }
    }
}

impl RunReport {
    /// Every module succeeded and every invariant held.
    pub fn succeeded(&self) -> bool {
        self.violations.is_empty() && self.modules.iter().all(|(_, o)| o.succeeded())
    }

    /// The outcome for `module`.
    pub fn outcome(&self, module: &str) -> Option<&ModuleOutcome> {
        self.modules.iter().find(|(m, _)| m == module).map(|(_, o)| o)
    }

    /// The process's exit status for this run: 0 when everything succeeded, 2 when an input
    /// could not be used, 1 for a refusal, an incomplete or stopped adopt or a broken invariant.
    pub fn exit_code(&self) -> u8 {
        if self.succeeded() {
            0
        } else if self.modules.iter().any(|(_, o)| matches!(o, ModuleOutcome::Unusable(_))) {
            2
        } else {
            1
        }
    }
}

/// Whether a run only checks or goes on to adopt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Preflight only: every module loaded, verified and checked; nothing changes.
    Check,
    /// Preflight, then each module checked again and adopted, held to its plan.
    Adopt,
}

/// One run of a catalogue's modules against a mesh: made with [`Run::builder`], then
/// [`Run::run`] as often as needed (each call is a whole preflight and, if asked, adopt).
pub struct Run<'a> {
    host: &'a PluginHost,
    catalogue: &'a Catalogue,
    foundation: &'a Foundation,
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
}

/// What a run is made from beyond its plugin host, catalogue, foundation and mesh; each part
/// has a default an installer can keep: no credentials, a record kept in memory only, the
/// default options.
pub struct RunBuilder<'a> {
    run: Run<'a>,
}

impl<'a> RunBuilder<'a> {
    /// The genesis credentials the catalogue's grants name. Without them a plugin that asks
    /// for one is told it does not exist, and preflight refuses a manifest that grants one.
    pub fn credentials(mut self, credentials: Arc<Credentials>) -> Self {
        self.run.credentials = credentials;
        self
    }

    /// Where every call, plan and outcome is recorded (and observed as it happens).
    pub fn record(mut self, transcript: Arc<Transcript>) -> Self {
        self.run.transcript = transcript;
        self
    }

    /// Streams the run's events to `sink` as they happen (see [`crate::stream`]): the
    /// `run` header when [`Run::run`] starts, every call, line and plan, each module's outcome
    /// once it is final (in a run that adopts, before the next module moves anything), and
    /// the summary. The caller ends the stream with [`Run::end`] (after any events of its
    /// own) or [`Run::interrupted`]. A [`crate::stream::RecordFile`] as the sink is a
    /// record `mesh-adopt replay` reads.
    pub fn events(mut self, sink: Arc<dyn Sink>) -> Self {
        let command = match self.run.events.take() {
            Some((_, command)) => command,
            None => events::Command::Run,
        };
        self.run.events = Some((sink, command));
        self
    }

    /// The command the stream's header names: `run` unless said (a check is `check` by its
    /// mode; a replay says `replay`).
    pub fn command(mut self, command: events::Command) -> Self {
        if let Some((_, named)) = &mut self.run.events {
            *named = command;
        }
        self
    }

    /// The run's options: the node, the catalogue's source, the wait after a push.
    pub fn options(mut self, options: RunOptions) -> Self {
        self.run.options = options;
        self
    }

    /// A plan saved by an earlier check: the run adopts only if everything it was made from
    /// (options, limits, foundation, manifests, plugins, credentials) is still the same.
    pub fn saved_plan(mut self, saved: SavedPlan) -> Self {
        self.run.saved_plan = Some(saved);
        self
    }

    /// The key the credentials' digests in saved plans are made with: the one kept where
    /// plans are made and applied ([`PlanKey::open`]). Without it a key of this process only
    /// is used, and a plan saved by another process says it cannot check the credentials.
    pub fn plan_key(mut self, key: PlanKey) -> Self {
        self.run.plan_key = key;
        self
    }

    /// Runs `module` with the plugin at `path` instead of the catalogue's, still held to the
    /// manifest's pin: how a plugin author tests a build before placing it.
    pub fn plugin_override(mut self, module: &str, path: PathBuf) -> Self {
        self.run.plugin_overrides.push((module.to_string(), path));
        self
    }

    /// The run, ready to [`Run::run`].
    pub fn build(mut self) -> Run<'a> {
        // Whatever the run streams passes its credentials first: wrapped once, here, where
        // the credentials are final.
        if let Some((sink, command)) = self.run.events.take() {
            let redacted = crate::record::stream::Redacted { sink, credentials: self.run.credentials.clone() };
            self.run.events = Some((Arc::new(redacted), command));
        }
        self.run
    }
}

/// A module ready to run: its catalogue entry read, its plugin loaded and verified.
struct Loaded {
    plugin: Plugin,
    /// Its manifest as parsed: what its push is predicted from.
    manifest: Arc<crate::catalogue::ModuleManifest>,
    env: RunEnv,
    ctx: Context,
    manifest_digest: String,
    /// The digest of the credentials its manifest grants, for saved plans.
    credentials_digest: String,
}

/// What preflight worked out the phase's pushes will do, and what it held them to.
struct Foreseen {
    /// The mesh as it was when preflight looked.
    view: MeshView,
    /// What the run's modules (and those an earlier run left prepared) declare.
    declarations: Declarations,
    /// Every push's effect.
    prediction: Prediction,
    /// The rules the prediction breaks.
    broken: Vec<Violation>,
    /// How many container effects and seals the mesh had reported before the run: what the
    /// node does after is this run's.
    baseline: (usize, usize),
}

/// What preflight found for every module, before any effect.
pub struct Preflight {
    /// Each module with its outcome: `Checked` with its plan, or the problem found.
    pub modules: Vec<(String, ModuleOutcome)>,
    /// What the plans were made from, with the plans: what `check --out` saves.
    pub saved: SavedPlan,
}

impl<'a> Run<'a> {
    /// Starts a run of `catalogue`'s modules, loaded by `host`, deciding from `foundation`
    /// (what genesis raised) and acting on `mesh`.
    pub fn builder(
        host: &'a PluginHost,
        catalogue: &'a Catalogue,
        foundation: &'a Foundation,
        mesh: Arc<dyn Mesh>,
    ) -> RunBuilder<'a> {
        RunBuilder {
            run: Run {
                host,
                catalogue,
                foundation,
                credentials: Arc::new(Credentials::none()),
                mesh,
                transcript: Arc::new(Transcript::default()),
                options: RunOptions::default(),
                plugin_overrides: Vec::new(),
                saved_plan: None,
                plan_key: PlanKey::ephemeral(),
                events: None,
                streamed: std::sync::Mutex::new(Vec::new()),
                ended: std::sync::atomic::AtomicBool::new(false),
            },
        }
    }
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
    /// Any executor drives it: it needs no timer or IO driver of the caller's (a tokio
    /// current-thread runtime, one built without timers, or another executor will do).
    /// **Cancelling**: drop the future. The plugin in flight is stopped where it stands (its
    /// sandbox dropped, its host call abandoned), the live mesh's control-plane command in
    /// flight is killed with its process group, and nothing more reaches the mesh; what had
    /// been done is in the record ([`Transcript::interrupted`] says it as the record's last
    /// event).
    pub async fn run(&self, modules: &[String], mode: Mode) -> RunReport {
        self.start_stream(modules, mode);
        let (mut preflight, mut loaded) = self.preflight(modules).await;
        let mut outcomes = std::mem::take(&mut preflight.modules);
        let problems: Vec<String> =
            outcomes.iter().filter(|(_, o)| !o.succeeded()).map(|(m, _)| format!("`{m}`")).collect();
        // Only plans every module made can be walked through the push rule.
        let foreseen = if problems.is_empty() { Some(self.foresee(&mut outcomes, &mut loaded).await) } else { None };
        // A saved plan binds the mesh it was made on and what its pushes were to do there.
        preflight.saved.mesh = self.mesh.summary();
        preflight.saved.effect = foreseen.as_ref().map(|f| f.prediction.lines()).unwrap_or_default();
        let predicted_broken = foreseen.as_ref().map(|f| f.broken.clone()).unwrap_or_default();
        let unseen = foreseen.as_ref().and_then(|f| f.view.unseen.clone());
        let stale = match (&self.saved_plan, problems.is_empty()) {
            (Some(saved), true) => saved.first_difference(&preflight.saved),
            _ => None,
        };
        // A secret value a plugin showed while checking is a problem found before any effect,
        // like a refusal: nothing moves. (Looked for only when nothing else stops the run.)
        let clear = mode == Mode::Adopt
            && problems.is_empty()
            && stale.is_none()
            && predicted_broken.is_empty()
            && unseen.is_none();
        let shown = if clear { self.secrets_shown() } else { Vec::new() };
        let mut violations = self.mesh.audit().violations;
        violations.extend(predicted_broken.iter().cloned());
        let adopting = clear && shown.is_empty();
        let mut held = None;
        if let Some(why) = &unseen {
            // Checking or adopting, nothing is ready on a mesh preflight could not look at.
            held = Some(Held::MeshUnseen { why: why.clone() });
            let because = format!("preflight could not look at the mesh: {why}; nothing was adopted");
            for (_, outcome) in outcomes.iter_mut().filter(|(_, o)| o.succeeded()) {
                *outcome = ModuleOutcome::NotRun { because: because.clone() };
            }
        } else if adopting {
            violations = self.adopt_all(&mut outcomes, loaded, foreseen.as_ref()).await;
        } else if mode == Mode::Adopt {
            let because = match (stale, predicted_broken.first(), shown.first()) {
                (Some(difference), _, _) => {
                    let because = format!("the saved plan does not apply: {difference}; nothing was adopted");
                    held = Some(Held::StalePlan { difference });
                    because
                }
                (None, Some(rule), _) => {
                    let mut names: Vec<&str> = predicted_broken.iter().map(|v| v.invariant).collect();
                    names.dedup();
                    held = Some(Held::RuleWouldBreak { invariants: names.iter().map(|n| n.to_string()).collect() });
                    let also = match &names[1..] {
                        [] => String::new(),
                        more => {
                            format!(", and {}", more.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
                        }
                    };
                    format!(
                        "preflight predicted that the phase's pushes would break rule `{}` ({}){also}; nothing was \
                         adopted",
                        rule.invariant, rule.detail
                    )
                }
                (None, None, Some(secret)) => {
                    held = Some(Held::SecretShown);
                    format!("preflight caught a secret shown: {}; nothing was adopted", secret.detail)
                }
                (None, None, None) => {
                    held = Some(Held::Problems {
                        modules: outcomes.iter().filter(|(_, o)| !o.succeeded()).map(|(m, _)| m.clone()).collect(),
                    });
                    format!("preflight found problems in {}; nothing was adopted", problems.join(", "))
                }
            };
            for (_, outcome) in outcomes.iter_mut().filter(|(_, o)| o.succeeded()) {
                *outcome = ModuleOutcome::NotRun { because: because.clone() };
            }
        }
        // What the last push does to the node is part of the run: let it land, then look again.
        self.mesh.quiesce().await;
        let audit = self.mesh.audit();
        let observed = foreseen.as_ref().map(|f| self.observed_violations(f, &audit)).unwrap_or_default();
        // A secret caught anywhere fails the run, in preflight as much as in adopt.
        for violation in audit.violations.into_iter().chain(observed).chain(self.secrets_shown()) {
            if !violations.contains(&violation) {
                violations.push(violation);
            }
        }
        let rules = match &foreseen {
            None => RulesChecked::NotPredicted,
            // A prediction from a mesh that could not be seen is no prediction.
            Some(_) if unseen.is_some() => RulesChecked::NotPredicted,
            // Checked after each push, when none landed, is checked after none.
            Some(_) if !modules.iter().any(|m| self.transcript.pushed(m)) => RulesChecked::Predicted,
            Some(_) if adopting && audit.observed => RulesChecked::Verified,
            Some(f) if adopting && f.view.looked && f.view.containers.values().all(|c| c.volumes.is_some()) => {
                RulesChecked::Inspected
            }
            Some(f) if adopting && f.view.looked => RulesChecked::InspectedImages,
            Some(_) => RulesChecked::Predicted,
        };
        let report = RunReport {
            modules: outcomes,
            changes: audit.changes,
            violations,
            mesh: self.mesh.summary(),
            made_from: preflight.saved,
            rules,
            held,
        };
        for (module, outcome) in &report.modules {
            self.stream_outcome(module, outcome);
        }
        self.stream(&events::Event::Summary(events::SummaryEvent::of(&report)));
        report
    }

    /// The stream's first line, and every event of the transcript from now on.
    fn start_stream(&self, modules: &[String], mode: Mode) {
        // Every credential's value is known before anything is streamed or any plugin runs,
        // so a value is scrubbed and caught wherever it shows, not only once some module has
        // asked for it.
        self.credentials.learn_all();
        let Some((sink, command)) = &self.events else { return };
        self.streamed.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.ended.store(false, std::sync::atomic::Ordering::SeqCst);
        // The mode decides whether the header says `check`: a run that adopts never does.
        let command = match (mode, *command) {
            (Mode::Check, _) => events::Command::Check,
            (Mode::Adopt, events::Command::Check) => events::Command::Run,
            (Mode::Adopt, command) => command,
        };
        sink.event(&events::Event::Run(events::RunEvent {
            schema: events::SCHEMA,
            mesh_adopt: env!("CARGO_PKG_VERSION").to_string(),
            command,
            modules: modules.to_vec(),
            options: (&self.options).into(),
            mesh: self.mesh.summary(),
            seed: self.mesh.seed(),
        }));
        self.transcript.stream_to(sink.clone());
    }

    /// One event to the stream, if the run streams.
    fn stream(&self, event: &events::Event) {
        if let Some((sink, _)) = &self.events {
            sink.event(event);
        }
    }

    /// A module's outcome to the stream, once: when it is final.
    fn stream_outcome(&self, module: &str, outcome: &ModuleOutcome) {
        let mut streamed = self.streamed.lock().unwrap_or_else(|p| p.into_inner());
        if self.events.is_some() && !streamed.iter().any(|m| m == module) {
            streamed.push(module.to_string());
            self.stream(&events::Event::Outcome(events::OutcomeEvent::of(module, outcome)));
        }
    }

    /// Ends the stream with the process's (or the installer's) exit status: the line that
    /// tells a finished record from an interrupted one.
    /// A stream has one last line: a second `end` or `interrupted` is not written.
    pub fn end(&self, exit: u8) {
        if !self.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.stream(&events::Event::End(events::EndEvent { exit }));
        }
    }

    /// Ends the stream of a run stopped before its end (`why`: `SIGINT`, `SIGTERM`, or
    /// `cancelled` for a dropped [`Run::run`]), with the effects that had reached the mesh;
    /// returns the event.
    pub fn interrupted(&self, why: &str) -> events::Event {
        let event = self.transcript.interrupted(why);
        if !self.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.stream(&event);
        }
        event
    }

    /// Works out what every push of the phase will do, from the mesh's state, the manifests,
    /// their declarations and the plans, and which rules of the mesh that would break.
    ///
    /// A module an earlier run left prepared without the hand-over its declarations need goes
    /// first, so that its own `secret accept` comes before any push: the node applies every
    /// prepared module at each push, and another module's push would seal over the credential
    /// its container runs with.
    async fn foresee(&self, outcomes: &mut Vec<(String, ModuleOutcome)>, loaded: &mut Vec<Option<Loaded>>) -> Foreseen {
        let mut names: Vec<String> = self
            .foundation
            .resources
            .iter()
            .filter_map(|r| match r {
                FoundationResource::Container { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        for ready in loaded.iter().flatten() {
            names.extend(ready.manifest.resolved_containers().into_iter().map(|c| c.name));
        }
        names.sort();
        names.dedup();
        let mut view = self.mesh.view(&names).await;
        if !view.looked {
            for resource in &self.foundation.resources {
                if let FoundationResource::Container { name, image, volumes, .. } = resource {
                    let spec = ContainerSpec { image: image.clone(), volumes: Some(volumes.clone()) };
                    view.containers.insert(name.clone(), spec);
                }
            }
        }
        let first = handing_over_first(&view, outcomes, loaded);
        let planned: Vec<Planned<'_>> = outcomes
            .iter()
            .zip(loaded.iter())
            .filter_map(|((module, outcome), ready)| match (outcome, ready) {
                (ModuleOutcome::Checked(plan), Some(ready)) => {
                    Some(Planned { module, manifest: &ready.manifest, commands: &plan.commands })
                }
                _ => None,
            })
            .collect();
        // Modules an earlier run left prepared are applied again by this run's pushes.
        let others = view.modules.iter().filter(|k| k.prepared).map(|k| (k.name.as_str(), &*k.manifest));
        let mut declarations =
            Declarations::of(self.foundation, planned.iter().map(|p| (p.module, &**p.manifest)).chain(others));
        declarations.learn_earlier(&view.modules);
        let mut prediction = predict(&view, &planned);
        prediction.first = first;
        let broken = rules(&declarations, &view, &prediction, Seen::Predicted);
        self.transcript.record(Event::Predicted { prediction: prediction.clone(), complete: view.complete });
        let audit = self.mesh.audit();
        Foreseen { baseline: (audit.touches.len(), audit.sealed.len()), view, declarations, prediction, broken }
    }

    /// Checks the node against what `module`'s push was predicted to leave, asking the mesh
    /// until it matches or `--wait` has passed (a live node applies in its own time): one
    /// `effect-as-predicted` violation a container that still differs.
    async fn verify_landed(&self, module: &str, foreseen: &Foreseen) -> Vec<Violation> {
        let Some(push) = foreseen.prediction.pushes.iter().rev().find(|p| p.module == module) else {
            return Vec::new();
        };
        let names: Vec<String> = push.after.keys().cloned().collect();
        let started = self.mesh.now();
        loop {
            let view = self.mesh.view(&names).await;
            if !view.looked {
                return Vec::new();
            }
            // A node that could not be seen is no node found wrong: said as what it is.
            let differences = match &view.unseen {
                Some(why) => vec![format!("the node could not be looked at: {why}")],
                None => crate::effect::landed_differences(&push.after, &view),
            };
            let waited = self.mesh.now().saturating_sub(started);
            if differences.is_empty() {
                return Vec::new();
            }
            if waited >= self.options.wait {
                return differences
                    .into_iter()
                    .map(|difference| Violation {
                        invariant: crate::effect::Rule::EffectAsPredicted.name(),
                        detail: format!(
                            "after `{module}`'s push, waited {}s: {difference}",
                            self.options.wait.as_secs()
                        ),
                    })
                    .collect();
            }
            self.mesh.sleep(LANDED_POLL.min(self.options.wait - waited)).await;
        }
    }

    /// The rules broken by what the node did since preflight looked, where the mesh reports
    /// what its node did (the simulator does); nothing elsewhere.
    fn observed_violations(&self, foreseen: &Foreseen, audit: &crate::mesh::Audit) -> Vec<Violation> {
        if !audit.observed {
            return Vec::new();
        }
        let touches = audit.touches.get(foreseen.baseline.0..).unwrap_or_default().to_vec();
        let sealed = audit.sealed.get(foreseen.baseline.1..).unwrap_or_default();
        let mut found = Vec::new();
        let secrets = sealed
            .iter()
            .map(|(module, secret)| SecretEffect { module: module.clone(), secret: secret.clone(), accepted: false })
            .collect();
        let happened = Prediction {
            pushes: vec![PushEffect {
                module: String::new(),
                command: 0,
                containers: touches,
                secrets,
                after: Default::default(),
            }],
            ..Prediction::default()
        };
        found.extend(rules(&foreseen.declarations, &foreseen.view, &happened, Seen::Observed));
        found
    }

    /// Loads, verifies and checks every module, changing nothing; every problem is kept, not
    /// only the first.
    async fn preflight(&self, modules: &[String]) -> (Preflight, Vec<Option<Loaded>>) {
        let mut outcomes = Vec::with_capacity(modules.len());
        let mut loaded = Vec::with_capacity(modules.len());
        let mut saved = SavedPlan::new(&self.options, self.foundation, self.host.limits(), &self.plan_key);
        // A credential that cannot be read could not be kept from being shown; a module asked
        // for twice would be adopted twice. Either is a bad input of the whole run.
        let unreadable = self.credentials.unreadable();
        for (index, module) in modules.iter().enumerate() {
            let whole_run = if let Some((name, why)) = unreadable.first() {
                Some((
                    Input::Credentials,
                    format!(
                        "the credentials directory holds `{name}`, which cannot be read ({why}): its value could not be kept from being shown"
                    ),
                ))
            } else if modules[..index].contains(module) {
                Some((Input::Manifest, format!("the module `{module}` is asked for twice")))
            } else {
                None
            };
            if let Some((input, message)) = whole_run {
                outcomes.push((module.clone(), ModuleOutcome::Unusable(Unusable { input, message, cause: None })));
                loaded.push(None);
                continue;
            }
            let ready = match self.load(module) {
                Ok(ready) => ready,
                Err((input, e)) => {
                    let message = self.scrub_in(module, format!("{e:#}"), "an error about it");
                    // Typed only when the error is all the message says (no credential in it).
                    let cause = e
                        .downcast_ref::<crate::error::Error>()
                        .or_else(|| e.downcast_ref::<Remedied>().map(|r| &r.error))
                        .filter(|c| message.contains(&c.to_string()))
                        .cloned();
                    outcomes.push((module.clone(), ModuleOutcome::Unusable(Unusable { input, message, cause })));
                    loaded.push(None);
                    continue;
                }
            };
            let plugin = &ready.plugin;
            let event = events::LoadedEvent::of(module, &plugin.digest, plugin.code, plugin.contract());
            self.stream(&events::Event::Loaded(event));
            let outcome = match self.host.check_in(&ready.plugin, &ready.env, &ready.ctx).await {
                Err(error) => {
                    let stopped = self.stopped(module, Phase::Check, error);
                    ModuleOutcome::Unusable(Unusable {
                        input: Input::Stopped(stopped.kind),
                        message: stopped.report,
                        cause: None,
                    })
                }
                Ok(Err(refusal)) => self.refused(module, Phase::Check, refusal),
                // A check that was denied a call and planned anyway went past what it was
                // told: its plan is not used, before anything moves.
                Ok(Ok(_)) if let Some(denied) = self.transcript.denied_while_checking(module) => {
                    let message = self.scrub_in(
                        module,
                        format!(
                            "its `check` was denied {denied} and planned anyway: a check that goes on past a denied \
                             call has not checked what its plan claims, so the plan is not used. Nothing of `{module}` \
                             has been done"
                        ),
                        "its plan",
                    );
                    ModuleOutcome::Unusable(Unusable { input: Input::Plan, message, cause: None })
                }
                Ok(Ok(plan)) => match self.bounded_plan(module, plan, &ready.env) {
                    // What the manifest declares it adopts is held to the foundation once its
                    // own plugin has nothing to refuse, so a plugin's refusal, in the module's
                    // words, comes first.
                    Ok(_) if let Err(e) = crate::effect::check_declared(&ready.manifest, self.foundation) => {
                        let message = format!(
                            "the `{module}` module's manifest `{}` declares what it adopts wrongly: {e}",
                            ready.env.permissions.manifest
                        );
                        ModuleOutcome::Unusable(Unusable { input: Input::Manifest, message, cause: None })
                    }
                    Ok(plan) => {
                        let digests = [ready.manifest_digest.as_str(), &ready.plugin.digest, &ready.credentials_digest];
                        saved.add(module, digests, &plan);
                        self.transcript.record(Event::Planned {
                            module: module.clone(),
                            summary: plan.summary.clone(),
                            commands: plan.words(),
                        });
                        ModuleOutcome::Checked(plan)
                    }
                    Err((message, cause)) => ModuleOutcome::Unusable(Unusable { input: Input::Plan, message, cause }),
                },
            };
            outcomes.push((module.clone(), outcome));
            loaded.push(Some(ready));
        }
        (Preflight { modules: outcomes, saved }, loaded)
    }

    /// Adopts each module that preflight checked, in order, each checked again first (the mesh
    /// may have moved) and held to the plan preflight showed. Returns the invariants broken.
    async fn adopt_all(
        &self,
        outcomes: &mut [(String, ModuleOutcome)],
        loaded: Vec<Option<Loaded>>,
        foreseen: Option<&Foreseen>,
    ) -> Vec<Violation> {
        let mut stopped: Option<String> = None;
        let mut violations = Vec::new();
        for ((module, outcome), ready) in outcomes.iter_mut().zip(loaded) {
            if let Some(because) = &stopped {
                *outcome = ModuleOutcome::NotRun { because: because.clone() };
                self.stream_outcome(module, outcome);
                continue;
            }
            let (ModuleOutcome::Checked(reviewed), Some(ready)) = (&*outcome, ready) else { continue };
            *outcome = self.adopt(module, reviewed.clone(), &ready).await;
            // What the module pushed is checked once it has landed, before the next module
            // moves anything: the phase stops at the first difference.
            let mut landed = Vec::new();
            if let Some(foreseen) = foreseen
                && self.transcript.pushed(module)
            {
                self.mesh.land_pushes(self.options.wait).await;
                landed = self.verify_landed(module, foreseen).await;
            }
            violations = self.violations(module, outcome, foreseen);
            for violation in landed {
                if !violations.contains(&violation) {
                    violations.push(violation);
                }
            }
            self.stream_outcome(module, outcome);
            if !violations.is_empty() {
                stopped = Some("an invariant broke".into());
            } else if !outcome.succeeded() {
                stopped = Some(format!("`{module}` did not succeed"));
            }
        }
        violations
    }

    /// One module's adopt: checked again on the instance that adopts, refused if its plan is
    /// no longer the one reviewed, then held to it.
    async fn adopt(&self, module: &str, reviewed: Plan, ready: &Loaded) -> ModuleOutcome {
        let mut rechecked = None;
        let turn = self
            .host
            .check_then_adopt(&ready.plugin, &ready.env, &ready.ctx, |plan| {
                let same =
                    self.bounded_plan(module, plan.clone(), &ready.env).ok().is_some_and(|plan| plan == reviewed);
                if !same {
                    rechecked = Some(plan.clone());
                }
                same
            })
            .await;
        match turn {
            Err(error) => ModuleOutcome::Failed(self.stopped(module, Phase::Adopt, error)),
            Ok((Err(refusal), _)) => self.refused(module, Phase::Check, refusal),
            Ok((Ok(_), None)) => ModuleOutcome::Refused {
                during: Phase::Check,
                code: Some(crate::model::Refusal::PLAN_CHANGED.into()),
                message: format!(
                    "its plan changed since preflight ({}), so it was not adopted: the mesh moved between the \
                     check an operator reviewed and this one. Nothing of `{module}` has been done",
                    plan_difference(&reviewed, rechecked.as_ref().unwrap_or(&reviewed))
                ),
            },
            Ok((Ok(_), Some(adopted))) => match adopted.result {
                Err(refusal) => self.refused(module, Phase::Adopt, refusal),
                // A denial or a failed command the plugin went on past is never silent:
                // whatever it reports, the module is not adopted.
                Ok(report) => match self.transcript.trouble_passed_over(module) {
                    Some(trouble) => ModuleOutcome::Refused {
                        during: Phase::Adopt,
                        code: Some(crate::model::Refusal::WENT_ON_PAST_A_FAILURE.into()),
                        message: self.scrub_in(
                            module,
                            format!(
                                "not adopted: {trouble}, and it went on as if it had not been, reporting success ({}); \
                                 a module whose plugin went past a denial or a failed command is not adopted",
                                report.summary
                            ),
                            "its report",
                        ),
                    },
                    None if adopted.left.is_empty() => {
                        ModuleOutcome::Adopted(self.scrub_in(module, report.summary, "its report"))
                    }
                    None => ModuleOutcome::Incomplete {
                        summary: self.scrub_in(module, report.summary, "its report"),
                        left: adopted.left,
                    },
                },
            },
        }
    }

    /// A plugin's refusal as the run reports it, scrubbed of secrets.
    fn refused(&self, module: &str, during: Phase, refusal: crate::model::Refusal) -> ModuleOutcome {
        // A code is a word of the plugin's, and could be a secret's value: shown redacted, it
        // would be no code, so it reads `redacted` (the secret shown is a violation as anywhere).
        let code = refusal.code.map(|code| {
            let scrubbed = self.scrub(module, code.clone());
            if scrubbed == code { code } else { crate::model::Refusal::REDACTED.to_string() }
        });
        ModuleOutcome::Refused { during, code, message: self.scrub(module, refusal.message) }
    }

    /// A plan within the limits and the plugin's grants, its words scrubbed; a plan beyond
    /// them means the plugin cannot be used as it is.
    fn bounded_plan(
        &self,
        module: &str,
        plan: Plan,
        env: &RunEnv,
    ) -> Result<Plan, (String, Option<crate::error::Error>)> {
        let limits = self.host.limits();
        if plan.commands.len() > limits.plan_commands {
            return Err((
                format!(
                    "the `{module}` plugin's plan has {} commands; a plan may have at most {} (limits.plan_commands)",
                    plan.commands.len(),
                    limits.plan_commands
                ),
                None,
            ));
        }
        if plan.summary.len() > limits.plan_summary_lines {
            return Err((
                format!(
                    "the `{module}` plugin's plan summary has {} lines; a plan may have at most {} (limits.plan_summary_lines)",
                    plan.summary.len(),
                    limits.plan_summary_lines
                ),
                None,
            ));
        }
        // A plan that builds waits for the build and then for the node: the wall deadline must
        // leave room for both, or the run would stop half-way through an adopt.
        let builds = plan.commands.iter().any(|c| c.first().is_some_and(|verb| verb == "build"));
        let longest = self.options.wait + Duration::from_secs(BUILD_TIMEOUT_SECONDS.into());
        if builds && limits.wall_time <= longest {
            let cause = crate::error::Error::LimitTooLow { limit: LimitName::WallTime, needed: longest };
            return Err((
                format!(
                    "the `{module}` plugin's plan builds the module, which may take {BUILD_TIMEOUT_SECONDS}s, and then \
                 waits up to {}s for the node; its wall time of {:?} (limits.wall_time) would stop it half-way: give \
                 more than {longest:?}",
                    self.options.wait.as_secs(),
                    limits.wall_time
                ),
                Some(cause),
            ));
        }
        for (index, command) in plan.commands.iter().enumerate() {
            // A value found in a command would reach the control plane's argv and its logs:
            // named by its credential, never shown, before anything moves.
            if let (_, Some(credential)) = self.credentials.redact(command.join(" ")) {
                return Err((
                    format!(
                        "the `{module}` plugin's plan, command {}, holds the value of credential `{credential}`: a \
                     command would carry it into the control plane's arguments and logs. A credential reaches \
                     the control plane only as a carried secret; if its value is an ordinary word, it cannot be \
                     kept secret: change it",
                        index + 1
                    ),
                    None,
                ));
            }
            env.permissions
                .allow(Phase::Adopt, Call::Tell { args: command })
                .map_err(|why| (format!("the `{module}` plugin plans a command it could never tell: {why}"), None))?;
        }
        let summary = plan.summary.into_iter().map(|line| self.scrub_in(module, line, "its plan")).collect();
        Ok(Plan { summary, commands: plan.commands })
    }

    /// Reads and verifies what one module needs: its catalogue entry and manifest, its plugin
    /// (pin, world), its grants and the credentials they name.
    fn load(&self, module: &str) -> Result<Loaded, (Input, anyhow::Error)> {
        let found = self.catalogue.module(module).map_err(|e| {
            let input = if matches!(e, crate::error::Error::NoPlugin { .. }) { Input::Plugin } else { Input::Manifest };
            (input, anyhow::Error::new(e))
        })?;
        let overridden = self.plugin_overrides.iter().find(|(m, _)| m == module).map(|(_, path)| path);
        // A world this host speaks is enough: the plugin's own imports say which version it
        // is built for, and the host speaks each, so a manifest naming another of them costs
        // nothing.
        if let Some(world) = found.adopt.world.as_deref()
            && Contract::of_world(world).is_none()
        {
            let worlds: Vec<&str> = Contract::ALL.iter().map(|c| c.world()).collect();
            return Err((
                Input::Plugin,
                anyhow::anyhow!(
                    "the `{module}` module's manifest `{}` says its plugin targets `{world}`; this host implements \
                     `{}`",
                    found.manifest_path.display(),
                    worlds.join("` and `")
                ),
            ));
        }
        let credentials_digest =
            self.credentials.verify_all(&found.adopt.grants.credentials, &self.plan_key).map_err(|(name, why)| {
                let e = anyhow::anyhow!(
                    "the `{module}` module's manifest `{}` grants credential `{name}`, which cannot be used: {why}",
                    found.manifest_path.display()
                );
                (Input::Credentials, e)
            })?;
        let pin = found.adopt.sha256.as_deref();
        let plugin = match overridden {
            // A plugin put in the catalogue's place on purpose (a candidate build replayed
            // against a recording, a scenario's own) is the one asked for, pinned or not.
            Some(path) => self.host.load_pinned(path, None),
            None => self.host.load_pinned_as(&found.plugin_path, Some(&found.plugin_file), pin),
        }
        .map_err(|e| match e {
            // A stale pin is the author's to mend, and there are two ways: say both.
            crate::error::Error::PinMismatch(stale) => {
                let remedy = format!(
                    "rebuild and pin it from its source, or, if this plugin is the one to ship, set `adopt.sha256` \
                     to \"{}\" in `{}`",
                    stale.digest,
                    found.manifest_path.display()
                );
                (Input::Plugin, anyhow::Error::new(Remedied { error: crate::error::Error::PinMismatch(stale), remedy }))
            }
            e => (Input::Plugin, anyhow::Error::new(e)),
        })?;
        let manifest_digest = sha256_hex(&found.manifest);
        let env = RunEnv {
            module: module.to_string(),
            mesh: self.mesh.clone(),
            credentials: self.credentials.clone(),
            transcript: self.transcript.clone(),
            permissions: Permissions {
                module: module.to_string(),
                node: self.options.node.clone(),
                catalog_source: self.options.catalog_source.clone(),
                secrets: found.secrets.clone(),
                manifest_bytes: Arc::from(found.manifest.as_slice()),
                granted: found.adopt.grants.clone(),
                manifest: found.manifest_path.display().to_string(),
            },
        };
        let declared = Arc::new(found.parsed);
        let ctx = self.context(module, found.manifest, declared.clone());
        Ok(Loaded { plugin, manifest: declared, env, ctx, manifest_digest, credentials_digest })
    }

    /// The stop report of `module`'s plugin, scrubbed of secrets, with its kind.
    fn stopped(&self, module: &str, during: Phase, error: anyhow::Error) -> Stopped {
        let kind = error.downcast_ref::<Stopped>().map_or_else(|| crate::error::StopKind::of(&error), |s| s.kind);
        let report = self.scrub_in(module, format!("{error:#}"), "its stop report");
        Stopped { during, kind, report }
    }

    /// A plugin's refusal with secret values replaced by their names; one found fails the run.
    fn scrub(&self, module: &str, message: String) -> String {
        self.scrub_in(module, message, "its refusal")
    }

    /// [`Run::scrub`] for text found at `place` (a plan, a report).
    fn scrub_in(&self, module: &str, message: String, place: &str) -> String {
        let (mut scrubbed, found) = self.credentials.redact(message);
        if crate::sandbox::limits::cut_to(&mut scrubbed, REFUSAL_BYTES) {
            scrubbed.push_str(" … (cut)");
        }
        if let Some(secret) = found {
            self.transcript.record(crate::record::transcript::Event::SecretShown {
                module: module.to_string(),
                secret,
                place: place.into(),
            });
        }
        scrubbed
    }

    /// The context a plugin decides from.
    pub fn context(
        &self,
        module: &str,
        manifest: Vec<u8>,
        declared: Arc<mesh_adopt_manifest::ModuleManifest>,
    ) -> Context {
        let o = &self.options;
        Context {
            module: module.to_string(),
            manifest,
            declared,
            foundation: self.foundation.resources.clone(),
            options: o.clone(),
        }
    }

    /// One violation for each secret value caught on its way out during the run, and each kind
    /// of place it was caught in.
    fn secrets_shown(&self) -> Vec<Violation> {
        let mut shown: Vec<Violation> = Vec::new();
        for (shown_by, secret, place) in self.transcript.secrets_shown() {
            let violation = Violation {
                invariant: "secret-never-shown",
                detail: format!("the `{shown_by}` plugin put the value of secret `{secret}` in {place} (redacted)"),
            };
            // The same value in the same kind of place is one breach, however often it shows.
            if !shown.contains(&violation) {
                shown.push(violation);
            }
        }
        shown
    }

    /// The mesh's invariants plus the host's own two: a refusal in `check` comes before any
    /// effect, and no secret value shows anywhere an operator or a log could read it.
    fn violations(&self, module: &str, outcome: &ModuleOutcome, foreseen: Option<&Foreseen>) -> Vec<Violation> {
        let audit = self.mesh.audit();
        let mut violations = audit.violations.clone();
        for violation in foreseen.map(|f| self.observed_violations(f, &audit)).unwrap_or_default() {
            if !violations.contains(&violation) {
                violations.push(violation);
            }
        }
        if matches!(outcome, ModuleOutcome::Refused { during: Phase::Check, .. }) {
            let effects = self.transcript.effects(module);
            if !effects.is_empty() {
                violations.push(Violation {
                    invariant: "refusal-before-effect",
                    detail: format!("`{module}` refused in check after {}", effects.join("; ")),
                });
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
            violations.push(Violation {
                invariant: "secret-never-shown",
                detail: format!("a secret value appeared in what `{module}` said, told or reported (redacted here)"),
            });
        }
        violations
    }
}

/// Moves ahead, in `outcomes` and `loaded` alike, every module of the run that an earlier run
/// left prepared with a declared hand-over its node has not settled; returns their names.
fn handing_over_first(
    view: &MeshView,
    outcomes: &mut Vec<(String, ModuleOutcome)>,
    loaded: &mut Vec<Option<Loaded>>,
) -> Vec<String> {
    let pending: Vec<&str> = view
        .modules
        .iter()
        .filter(|known| {
            known.prepared
                && known.manifest.adopts.iter().any(|a| a.secret.as_ref().is_some_and(|s| !known.settled.contains(s)))
        })
        .map(|known| known.name.as_str())
        .collect();
    let is_pending = |module: &str| pending.contains(&module);
    let already_first = outcomes.iter().take_while(|(m, _)| is_pending(m)).count();
    if outcomes.iter().skip(already_first).all(|(m, _)| !is_pending(m)) {
        return Vec::new();
    }
    let mut both: Vec<((String, ModuleOutcome), Option<Loaded>)> =
        std::mem::take(outcomes).into_iter().zip(std::mem::take(loaded)).collect();
    // A stable sort: the modules moved keep their order among themselves, and so do the rest.
    both.sort_by_key(|((module, _), _)| !is_pending(module));
    let first = both.iter().filter(|((m, _), _)| is_pending(m)).map(|((m, _), _)| m.clone()).collect();
    (*outcomes, *loaded) = both.into_iter().unzip();
    first
}

/// How the event stream says a run's outcomes: the runtime's types turned into the schema's.
mod stream {
    use super::{ModuleOutcome, RunReport};
    use crate::events::{Change, ModuleSummary, Outcome, OutcomeEvent, PlanRecord, SummaryEvent, ViolationRecord};
    use crate::model::Input;

    impl From<&ModuleOutcome> for Outcome {
        fn from(outcome: &ModuleOutcome) -> Outcome {
            match outcome {
                ModuleOutcome::Checked(plan) => {
                    Outcome::Ready { plan: PlanRecord { summary: plan.summary.clone(), commands: plan.words() } }
                }
                ModuleOutcome::Adopted(report) => Outcome::Adopted { report: report.clone() },
                ModuleOutcome::Refused { during, code, message } => {
                    Outcome::Refused { during: *during, code: code.clone(), message: message.clone() }
                }
                ModuleOutcome::Incomplete { summary, left } => {
                    Outcome::Incomplete { report: summary.clone(), left: left.clone() }
                }
                ModuleOutcome::Unusable(unusable) => Outcome::Unusable {
                    input: unusable.input.name().to_string(),
                    stop: match unusable.input {
                        Input::Stopped(kind) => Some(kind.name().to_string()),
                        _ => None,
                    },
                    message: unusable.message.clone(),
                },
                ModuleOutcome::Failed(stopped) => {
                    Outcome::Failed { stop: stopped.kind.name().to_string(), message: stopped.report.clone() }
                }
                ModuleOutcome::NotRun { because } => Outcome::NotRun { because: because.clone() },
            }
        }
    }

    impl OutcomeEvent {
        /// One module's outcome event.
        pub fn of(module: &str, outcome: &ModuleOutcome) -> OutcomeEvent {
            OutcomeEvent { module: module.to_string(), succeeded: outcome.succeeded(), outcome: outcome.into() }
        }
    }

    impl SummaryEvent {
        /// The summary of a finished run.
        pub fn of(report: &RunReport) -> SummaryEvent {
            SummaryEvent {
                succeeded: report.succeeded(),
                exit: report.exit_code(),
                mesh: report.mesh.clone(),
                modules: report
                    .modules
                    .iter()
                    .map(|(module, outcome)| ModuleSummary {
                        module: module.clone(),
                        outcome: outcome.word(),
                        succeeded: outcome.succeeded(),
                    })
                    .collect(),
                changes: report.changes.iter().map(Change::from).collect(),
                violations: report
                    .violations
                    .iter()
                    .map(|v| ViolationRecord { invariant: v.invariant.to_string(), detail: v.detail.clone() })
                    .collect(),
                rules: report.rules.word().to_string(),
                rule_checks: crate::effect::Rule::ALL
                    .iter()
                    .map(|rule| crate::events::RuleCheck {
                        rule: rule.name().to_string(),
                        checked: report.rules.of_rule(*rule).word().to_string(),
                    })
                    .collect(),
            }
        }
    }
}
