//! How a run is shown: lines for a person (with a spinner on long waits when stdout is a
//! terminal), JSON lines for a machine, and a recording file kept as the run goes.
//!
//! [`Output`] decides, event by event, what goes where; the modules under it each do one
//! part: [`human`] what an event shows a person, [`effect`] and [`summary`] the predicted
//! effect and the end of a run in words, [`progress`] the spinner, [`record`] the JSON lines
//! and the `--record` file, [`stdout`] the writing itself and [`redact`] the last redaction
//! every line passes. None of them knows which command is running.

mod effect;
mod human;
mod progress;
mod record;
mod redact;
mod stdout;
mod summary;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use mesh_adopt_runtime::events::{self, SCHEMA};
use mesh_adopt_runtime::run::{RunOptions, RunReport};
use mesh_adopt_runtime::screen::visible;
use mesh_adopt_runtime::transcript::{Event, Transcript};

use crate::exit::ExitStatus;
use progress::Progress;
use record::{Recording, line_of};

pub use redact::redact_with;
pub use stdout::{emit, emit_err, finish_stdout, finish_stdout_within};

/// Who reads the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A person: say lines as they come, a summary at the end.
    Human {
        /// With `-v`: every host call and every planned command too.
        verbose: bool,
    },
    /// A program: one JSON object a line, the events of `docs/events.md`.
    Json,
}

/// Shows a run's events as they happen and its report at the end.
pub struct Output {
    /// Who reads stdout.
    style: Style,
    /// Whether to show progress on waits: only where waits are real (a live mesh).
    real_waits: bool,
    /// The spinner on a terminal.
    progress: Progress,
    /// The `--record` file, when one was asked for.
    recording: Option<Recording>,
    /// Whether the interruption was said: the run and the signals' watcher may both get to it.
    interrupted: AtomicBool,
}

impl Output {
    /// An output in `style`; `record` names a file to keep every event in.
    pub fn new(style: Style, real_waits: bool, record: Option<&Path>) -> Result<Output> {
        let recording = record.map(Recording::create).transpose()?;
        Ok(Output { style, real_waits, progress: Progress::new(), recording, interrupted: AtomicBool::new(false) })
    }

    /// Starts both streams with their first line: the schema version, and what a replay
    /// needs to run as this run did (the modules, the operator's options, the mesh, the seed).
    pub fn start(
        &self,
        command: events::Command,
        modules: &[String],
        options: &RunOptions,
        mesh: &dyn mesh_adopt_runtime::mesh::Mesh,
    ) {
        self.record_and_emit(&events::Event::Run(events::RunEvent {
            schema: SCHEMA,
            mesh_adopt: env!("CARGO_PKG_VERSION").to_string(),
            command,
            modules: modules.to_vec(),
            options: options.into(),
            mesh: mesh.summary(),
            seed: mesh.seed(),
        }));
    }

    /// Shows and records one event.
    pub fn observe(&self, event: &Event) {
        match self.style {
            Style::Json => self.record_and_emit(&event.to_event()),
            Style::Human { verbose } => {
                if let Some(recording) = &self.recording {
                    recording.write(&event.to_event());
                }
                self.progress.show(human::shown(event, verbose, self.real_waits));
            }
        }
    }

    /// Prints a line of the host's own, for a person (nothing in `--json`).
    pub fn line(&self, text: &str) {
        if let Style::Human { .. } = self.style {
            self.progress.clear();
            emit(text);
        }
    }

    /// Shows and records where `check --out` saved the plans.
    pub fn plan_saved(&self, path: &Path) {
        self.record_and_emit(&events::Event::PlanSaved(events::PlanSavedEvent { path: path.display().to_string() }));
        self.line(&format!(
            "\nthe plan is saved in `{}`: apply it with `mesh-adopt run --plan {}`",
            path.display(),
            path.display()
        ));
    }

    /// Shows and records the run's end: each module's outcome, the summary, then `after`
    /// (a replay's verdict), and a last event with the exit status, so a finished record can
    /// be told from an interrupted one.
    pub fn finish(&self, report: &RunReport, after: &[events::Event], exit: ExitStatus) {
        self.progress.clear();
        for (module, outcome) in &report.modules {
            self.record_and_emit(&events::Event::Outcome(events::OutcomeEvent::of(module, outcome)));
        }
        self.record_and_emit(&events::Event::Summary(events::SummaryEvent::of(report)));
        for event in after {
            self.record_and_emit(event);
        }
        self.record_and_emit(&events::Event::End(events::EndEvent { exit: exit.code() }));
        if let Style::Human { .. } = self.style {
            summary::print_summary(report);
        }
        self.warn_if_broken();
    }

    /// Shows and records an interrupted run: what had been done, and a last event saying so.
    pub fn interrupted(&self, signal: &str, transcript: &Transcript) {
        if self.interrupted.swap(true, Ordering::SeqCst) {
            return;
        }
        self.progress.clear();
        let done = transcript.all_effects();
        self.record_and_emit(&transcript.interrupted(signal));
        if let Style::Human { .. } = self.style {
            crate::errln!(
                "\ninterrupted by {signal}: the plugin was stopped and the control-plane commands it had started were ended"
            );
            if done.is_empty() {
                crate::errln!("nothing had been done on the mesh");
            } else {
                crate::errln!("what had been done on the mesh:");
                for (module, request) in &done {
                    crate::errln!("  {module:<12} {}", visible(&request.words()));
                }
            }
        }
        self.warn_if_broken();
    }

    /// Writes an event to the recording, and to stdout with `--json`.
    fn record_and_emit(&self, event: &events::Event) {
        let line = line_of(event);
        if let Some(recording) = &self.recording {
            recording.write_line(&line);
        }
        if self.style == Style::Json {
            emit(&line);
        }
    }

    /// Says on stderr that the record is incomplete, if writing it failed: at the end, so
    /// the run went on regardless.
    fn warn_if_broken(&self) {
        if let Some(recording) = &self.recording {
            recording.warn_if_broken();
        }
    }
}
