//! What a run is made from beyond its plugin host, catalogue, foundation and mesh, each part
//! with a default an installer can keep.

use std::path::PathBuf;
use std::sync::Arc;

use crate::catalogue::credentials::Credentials;
use crate::catalogue::plan_key::PlanKey;
use crate::catalogue::{Catalogue, Foundation};
use crate::events;
use crate::mesh::Mesh;
use crate::model::options::RunOptions;
use crate::plugin::PluginHost;
use crate::record::stream::Sink;
use crate::record::transcript::Transcript;
use crate::run::plan_file::SavedPlan;
use crate::run::{Run, Shared};

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

    /// Streams the run's events to `sink` as they happen (see [`crate::record::stream`]): the
    /// `run` header when [`Run::run`] starts, every call, line and plan, each module's outcome
    /// once it is final (in a run that adopts, before the next module moves anything), and
    /// the summary. The caller ends the stream with [`Run::end`] (after any events of its
    /// own) or [`Run::interrupted`]. A [`crate::record::stream::RecordFile`] as the sink is a
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

    /// How a run that adopts is shown to another as the holder of the mesh's lock: its
    /// command line [default: this process's].
    pub fn lock_holder(mut self, command: impl Into<String>) -> Self {
        self.run.lock_command = command.into();
        self
    }

    /// How long a run that adopts waits, on the mesh's clock, for the mesh's lock another run
    /// holds, before it gives up changing nothing [default: not at all: refused at once].
    pub fn lock_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.run.lock_timeout = timeout;
        self
    }

    /// Whether the run gives its executor a turn at every host call [default: yes], so that a
    /// cancel signalled while a module runs (its future dropped) stops it at its next call.
    /// Each turn suspends the plugin where it calls, a few microseconds a call; a caller that
    /// never cancels a run while a module runs (a sweep, whose thousands of runs are stopped
    /// only inside the simulated mesh) turns it off. The turn between modules stays.
    pub fn turns_at_calls(mut self, turns: bool) -> Self {
        self.run.turns_at_calls = turns;
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

impl<'a> Run<'a> {
    /// Starts a run of `catalogue`'s modules, loaded by `host`, deciding from `foundation`
    /// (what genesis raised) and acting on `mesh`.
    pub fn builder(
        host: impl Into<Shared<'a, PluginHost>>,
        catalogue: impl Into<Shared<'a, Catalogue>>,
        foundation: impl Into<Shared<'a, Foundation>>,
        mesh: Arc<dyn Mesh>,
    ) -> RunBuilder<'a> {
        RunBuilder {
            run: Run {
                host: host.into(),
                catalogue: catalogue.into(),
                foundation: foundation.into(),
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
                ending: std::sync::Mutex::new(None),
                ran: std::sync::atomic::AtomicBool::new(false),
                lock_command: crate::run::lock::this_command(),
                lock_timeout: std::time::Duration::ZERO,
                turns_at_calls: true,
            },
        }
    }
}
