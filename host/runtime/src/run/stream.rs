//! How a run speaks as it goes: its header, every event of its transcript, each module's
//! outcome once it is final, the summary and the last line; the runtime's types turned into
//! the event schema's.

use crate::events::{self, Change, ModuleSummary, Outcome, OutcomeEvent, PlanRecord, SummaryEvent, ViolationRecord};
use crate::model::{Input, PluginCommand};
use crate::run::{Mode, ModuleOutcome, Run, RunReport};

impl Run<'_> {
    /// Whether [`Run::run`] has begun, so the stream has its header.
    fn began(&self) -> bool {
        self.ran.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The stream's first line, and every event of the transcript from now on.
    pub(super) fn start_stream(&self, modules: &[String], mode: Mode) {
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
            catalogue: self.catalogue_record(),
        }));
        self.transcript.stream_to(sink.clone());
    }

    /// Where the run reads its modules, foundation and credentials, as absolute paths (links
    /// resolved where the path is there): what a replay reads again, from any directory.
    /// `None` for a catalogue held in memory, which no directory holds as the run had it.
    fn catalogue_record(&self) -> Option<events::CatalogueRecord> {
        if !self.catalogue.on_disk() {
            return None;
        }
        let absolute = |path: &std::path::Path| {
            let path = path.canonicalize().or_else(|_| std::path::absolute(path)).ok()?;
            path.to_str().map(String::from)
        };
        Some(events::CatalogueRecord {
            dir: absolute(self.catalogue.root())?,
            foundation: self.foundation.path.as_deref().and_then(absolute),
            credentials: self.credentials.directory().and_then(absolute),
        })
    }

    /// One event to the stream, if the run streams.
    pub(super) fn stream(&self, event: &events::Event) {
        if let Some((sink, _)) = &self.events {
            sink.event(event);
        }
    }

    /// A read of the mesh of the host's own, as it begins: what the run now waits on.
    pub(super) fn reading(&self, what: events::MeshRead) {
        self.transcript.record(crate::record::transcript::Entry::Reading { what, at: self.mesh.now() });
    }

    /// A module's outcome to the stream, once: when it is final.
    pub(super) fn stream_outcome(&self, module: &str, outcome: &ModuleOutcome) {
        let mut streamed = self.streamed.lock().unwrap_or_else(|p| p.into_inner());
        if self.events.is_some() && !streamed.iter().any(|m| m == module) {
            streamed.push(module.to_string());
            let mut event = events::OutcomeEvent::of(module, outcome);
            if !outcome.succeeded() {
                event.secrets_left = self.secrets_left(module);
            }
            self.stream(&events::Event::Outcome(event));
        }
    }

    /// Ends the stream with the process's (or the installer's) exit status: the line that
    /// tells a finished record from an interrupted one. It carries the run's ending as a code
    /// and its remedy, as its report says them, when the run did not succeed.
    /// A stream has one last line, after its header: a second `end` or `interrupted`, or one
    /// before [`Run::run`] began, is not written.
    pub fn end(&self, exit: u8) {
        let ending = self.ending.lock().unwrap_or_else(|p| p.into_inner()).clone();
        self.end_as(exit, ending);
    }

    /// [`Run::end`], the run's ending said by its caller: a command whose verdict is its own
    /// (a replay that diverged) ends with its own code. An exit of 0 carries none.
    pub fn end_as(&self, exit: u8, ending: Option<(crate::model::ending::Ending, Option<crate::remedy::Remedy>)>) {
        if self.began() && !self.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let (code, remedy) = match ending {
                Some((code, remedy)) if exit != 0 => (Some(code), remedy),
                _ => (None, None),
            };
            self.stream(&events::Event::End(events::EndEvent { exit, code, remedy }));
        }
    }

    /// Ends the stream of a run stopped before its end (`why`: `SIGINT`, `SIGTERM`, or
    /// `cancelled` for a dropped [`Run::run`]), with the effects that had reached the mesh;
    /// returns the event. Before [`Run::run`] began, nothing is written: there is no record to
    /// end.
    pub fn interrupted(&self, why: &str) -> events::Event {
        let event = self.transcript.interrupted(why);
        if self.began() && !self.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.stream(&event);
        }
        event
    }
}

impl From<&ModuleOutcome> for Outcome {
    fn from(outcome: &ModuleOutcome) -> Outcome {
        match outcome {
            ModuleOutcome::Checked(plan) => {
                Outcome::Ready { plan: PlanRecord { summary: plan.summary.clone(), commands: plan.words() } }
            }
            ModuleOutcome::Adopted(report) => Outcome::Adopted { report: report.clone() },
            ModuleOutcome::Refused { during, code, message } => Outcome::Refused {
                during: *during,
                code: code.clone(),
                message: message.clone(),
                remedy: outcome.remedy(),
            },
            ModuleOutcome::Incomplete { summary, left } => {
                Outcome::Incomplete { report: summary.clone(), left: left.iter().map(PluginCommand::words).collect() }
            }
            ModuleOutcome::Unusable(unusable) => Outcome::Unusable {
                input: unusable.input.word(),
                stop: match unusable.input {
                    Input::Stopped(kind) => Some(kind),
                    _ => None,
                },
                message: unusable.message.clone(),
            },
            ModuleOutcome::Failed(stopped) => Outcome::Failed { stop: stopped.kind, message: stopped.report.clone() },
            ModuleOutcome::NotRun { because, code, remedy } => {
                Outcome::NotRun { because: because.clone(), code: *code, remedy: remedy.clone() }
            }
        }
    }
}

impl OutcomeEvent {
    /// One module's outcome event.
    pub fn of(module: &str, outcome: &ModuleOutcome) -> OutcomeEvent {
        OutcomeEvent {
            module: module.to_string(),
            succeeded: outcome.succeeded(),
            outcome: outcome.into(),
            secrets_left: Vec::new(),
        }
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
                .map(|v| ViolationRecord {
                    invariant: v.rule,
                    detail: v.detail.clone(),
                    module: v.module.clone(),
                    container: v.container.clone(),
                    remedy: v.remedy(),
                })
                .collect(),
            rules: report.rules.word(),
            rule_checks: crate::effect::Rule::MESH
                .iter()
                .map(|rule| crate::events::RuleCheck { rule: *rule, checked: report.rules.of_rule(*rule).word() })
                .collect(),
        }
    }
}
