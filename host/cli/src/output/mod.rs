//! How a run is shown: lines for a person (with a spinner on long waits when stdout is a
//! terminal), JSON lines for a machine, and a recording file kept as the run goes.
//!
//! [`Output`] decides, event by event, what goes where; the modules under it each do one
//! part: [`human`] what an event shows a person, [`effect`] and [`summary`] the predicted
//! effect and the end of a run in words, [`progress`] the spinner, the runtime's
//! [`RecordFile`] the `--record` file, [`stdout`] the writing itself and [`redact`] the last redaction
//! every line passes. None of them knows which command is running.

mod effect;
mod human;
mod progress;
mod redact;
pub mod remedy;
mod stdout;
mod summary;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use mesh_adopt_runtime::events;
use mesh_adopt_runtime::record::screen::visible;
use mesh_adopt_runtime::record::stream::{RecordFile, Sink, line_of};
use mesh_adopt_runtime::record::transcript::{Entry, Transcript};
use mesh_adopt_runtime::{Run, RunReport};

use crate::exit::ExitStatus;
use progress::Progress;

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
    recording: Option<RecordFile>,
    /// Whether the interruption was said: the run and the signals' watcher may both get to it.
    interrupted: AtomicBool,
    /// The modules whose plugins ran on baseline code, for the note after the summary.
    on_baseline: std::sync::Mutex<Vec<String>>,
}

impl Output {
    /// An output in `style`; `record` names a file to keep every event in.
    pub fn new(style: Style, real_waits: bool, record: Option<&Path>) -> Result<Output> {
        let recording = record.map(RecordFile::create).transpose()?;
        Ok(Output {
            style,
            real_waits,
            progress: Progress::new(),
            recording,
            interrupted: AtomicBool::new(false),
            on_baseline: Default::default(),
        })
    }

    /// Shows one event of the run to a person, as it happens (the run streams it to the
    /// record and `--json` itself, through this output as its sink).
    pub fn observe(&self, event: &Entry) {
        if let Style::Human { verbose } = self.style {
            self.progress.show(human::shown(event, verbose, self.real_waits));
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

    /// Shows and records the run's end, after the run streamed its outcomes and summary:
    /// `after` (a replay's verdict), then the run's last event with the exit status, so a
    /// finished record can be told from an interrupted one.
    pub fn finish(&self, run: &Run<'_>, report: &RunReport, after: &[events::Event], exit: ExitStatus) {
        self.finish_as(run, report, after, exit, report.ending().map(|code| (code, report.remedy())));
    }

    /// [`Output::finish`] with the ending the command says (a replay's verdict is its own).
    pub fn finish_as(
        &self,
        run: &Run<'_>,
        report: &RunReport,
        after: &[events::Event],
        exit: ExitStatus,
        ending: Option<(mesh_adopt_runtime::report::Ending, Option<mesh_adopt_runtime::Remedy>)>,
    ) {
        self.progress.clear();
        for event in after {
            self.record_and_emit(event);
        }
        run.end_as(exit.code(), ending);
        if let Style::Human { .. } = self.style {
            summary::print_summary(report);
            let on_baseline = self.on_baseline.lock().unwrap_or_else(|p| p.into_inner());
            if !on_baseline.is_empty() {
                crate::errln!(
                    "\nnote: {} ran on baseline code, which Winch compiles quickly and which runs slower; `mesh-adopt \
                     cache optimise` makes optimised code, which later runs take",
                    on_baseline.join(", ")
                );
            }
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
        let event = transcript.interrupted(signal);
        self.record_and_emit(&event);
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
            if let events::Event::Interrupted(stopped) = &event {
                if let Some(flying) = &stopped.in_flight {
                    crate::errln!("under way when it stopped:");
                    crate::errln!(
                        "  {:<12} {}: {}",
                        flying.module,
                        visible(&flying.request.words()),
                        landing(flying.landing)
                    );
                }
                if let Some(id) = &stopped.lock_left {
                    let remedy = mesh_adopt_runtime::Remedy::Unlock { id: id.clone(), force: false };
                    crate::errln!("the run's lock `{id}` could not be released: {remedy}");
                }
            }
        }
        self.warn_if_broken();
    }

    /// Writes an event to the recording, and to stdout with `--json`.
    fn record_and_emit(&self, event: &events::Event) {
        let line = redact::redacted(&line_of(event));
        if let Some(recording) = &self.recording {
            recording.write_line(&line);
        }
        if self.style == Style::Json {
            emit(&mesh_adopt_runtime::record::line_bound::bounded(&line));
        }
    }

    /// Says on stderr that the record is incomplete, if writing it failed: at the end, so
    /// the run went on regardless.
    fn warn_if_broken(&self) {
        if let Some(recording) = &self.recording
            && let Some(why) = recording.broken()
        {
            crate::errln!("warning: the recording `{}` is incomplete: {why}", recording.path().display());
        }
    }
}

/// The run streams its events (header, calls, plans, outcomes, summary) here: to the
/// record, and to stdout with `--json`.
impl Sink for Output {
    fn event(&self, event: &events::Event) {
        if let events::Event::Loaded(loaded) = event
            && loaded.code == mesh_adopt_runtime::plugin::CodeKind::Baseline
        {
            self.on_baseline.lock().unwrap_or_else(|p| p.into_inner()).push(loaded.module.clone());
        }
        self.record_and_emit(event);
    }
}

/// What became of the call under way when a run stopped, as a person reads it.
fn landing(landing: events::Landing) -> &'static str {
    match landing {
        events::Landing::Ended => "it had ended on the control plane's side when the run's lock was released",
        events::Landing::StillRunning => {
            "the control plane still runs it and finishes it; the run's lock goes once it has, and no other run \
             moves the mesh before"
        }
        events::Landing::Unknown => "whether it landed is not known: look at the mesh before running again",
    }
}
