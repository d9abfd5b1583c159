//! How a run is shown: lines for a person (with a spinner on long waits when stdout is a
//! terminal), JSON lines for a machine, and a recording file kept as the run goes.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use mesh_adopt_runtime::effect::Rule;
use mesh_adopt_runtime::events::{self, Op, SCHEMA};
use mesh_adopt_runtime::mesh::ContainerChange;
use mesh_adopt_runtime::screen::visible;
use mesh_adopt_runtime::transcript::{Event, Transcript};
use mesh_adopt_runtime::{ModuleOutcome, RulesChecked, RunOptions, RunReport};

/// A tell allowed this long is a long wait worth showing (a build, a push).
const LONG_WAIT: Duration = Duration::from_secs(60);

/// Who reads the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A person: say lines as they come, a summary at the end.
    Human { verbose: bool },
    /// A program: one JSON object a line, the events of `docs/events.md`.
    Json,
}

/// Shows a run's events as they happen and its report at the end.
pub struct Output {
    style: Style,
    /// Whether to show progress on waits: only where waits are real (a live mesh).
    real_waits: bool,
    terminal: bool,
    spinner: Mutex<Option<ProgressBar>>,
    recording: Option<Recording>,
    /// Whether the interruption was said: the run and the signals' watcher may both get to it.
    interrupted: std::sync::atomic::AtomicBool,
}

/// The `--record` file: every event as a JSON line (`docs/events.md`), flushed as written so
/// a crash keeps what came before it.
struct Recording {
    path: PathBuf,
    file: Mutex<File>,
    broken: Mutex<Option<String>>,
}

impl Output {
    /// An output in `style`; `record` names a file to keep every event in.
    pub fn new(style: Style, real_waits: bool, record: Option<&Path>) -> Result<Output> {
        let recording = match record {
            None => None,
            Some(path) => {
                let file = mesh_adopt_runtime::files::create_output(path, "a recording")?;
                Some(Recording { path: path.to_path_buf(), file: Mutex::new(file), broken: Mutex::new(None) })
            }
        };
        Ok(Output {
            style,
            real_waits,
            terminal: std::io::stdout().is_terminal(),
            spinner: Mutex::new(None),
            recording,
            interrupted: std::sync::atomic::AtomicBool::new(false),
        })
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
                self.human(event, verbose);
            }
        }
    }

    fn human(&self, event: &Event, verbose: bool) {
        let mut spinner = self.spinner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bar) = spinner.take() {
            bar.finish_and_clear();
        }
        let line = match event {
            Event::Say { module, line, at } => format!("{} {module:>10} │ {}", clock(*at), visible(line)),
            Event::Planned { module, summary, commands } => {
                let mut lines: Vec<String> =
                    summary.iter().map(|l| format!("      {module:>10} │ plan: {}", visible(l))).collect();
                if verbose {
                    lines.extend(
                        commands.iter().map(|c| format!("      {module:>10} │ plan: tell {}", visible(&c.join(" ")))),
                    );
                } else {
                    lines.push(format!("      {module:>10} │ plan: {} commands", commands.len()));
                }
                lines.join("\n")
            }
            Event::Predicted { prediction, complete } => effect_lines(prediction, *complete, verbose),
            Event::SayCut { module, dropped_after } => {
                format!("      {module:>10} │ (said more than {dropped_after} lines: stopped, the rest dropped)")
            }
            Event::SecretShown { module, secret, place } => {
                format!("      {module:>10} │ (the value of secret `{secret}` was caught in {place} and redacted)")
            }
            Event::Started { module, request, at, timeout: Some(timeout) }
                if request.op == Op::Tell && self.real_waits && *timeout >= LONG_WAIT =>
            {
                let what = format!(
                    "{module:>10} │ waiting for `{}` (up to {}s)",
                    visible(&request.words()),
                    timeout.as_secs()
                );
                if self.terminal {
                    let bar = ProgressBar::new_spinner().with_message(what);
                    bar.set_style(
                        ProgressStyle::with_template("{spinner}     {msg} {elapsed}")
                            .unwrap_or(ProgressStyle::default_spinner()),
                    );
                    bar.enable_steady_tick(Duration::from_millis(120));
                    *spinner = Some(bar);
                    return;
                }
                format!("{} {what}", clock(*at))
            }
            Event::Call { module, phase, request, outcome, at, took } if verbose => {
                let result = match outcome.as_ref().map(events::CallValue::words) {
                    Ok(_) if request.op == Op::Inspect && matches!(outcome, Ok(events::CallValue::Nothing)) => {
                        "ok: no such container".to_string()
                    }
                    Ok(value) if value.is_empty() => "ok".to_string(),
                    Ok(value) => format!("ok: {}", visible(&value)),
                    Err(e) => visible(&e.to_string()),
                };
                format!(
                    "{} {module:>10} ┆ {phase} {} {} → {result} ({took:.1?})",
                    clock(*at),
                    request.op.name(),
                    visible(&request.words())
                )
            }
            Event::Call { .. } | Event::Started { .. } => return,
        };
        emit(&line);
    }

    /// Prints a line of the host's own, for a person (nothing in `--json`).
    pub fn line(&self, text: &str) {
        if let Style::Human { .. } = self.style {
            self.clear_spinner();
            emit(text);
        }
    }

    fn clear_spinner(&self) {
        if let Some(bar) = self.spinner.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bar.finish_and_clear();
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
    pub fn finish(&self, report: &RunReport, after: &[events::Event], exit: u8) {
        self.clear_spinner();
        for (module, outcome) in &report.modules {
            self.record_and_emit(&events::Event::Outcome(events::OutcomeEvent::of(module, outcome)));
        }
        self.record_and_emit(&events::Event::Summary(events::SummaryEvent::of(report)));
        for event in after {
            self.record_and_emit(event);
        }
        self.record_and_emit(&events::Event::End(events::EndEvent { exit }));
        if let Style::Human { .. } = self.style {
            print_summary(report);
        }
        self.warn_if_broken();
    }

    /// Shows and records an interrupted run: what had been done, and a last event saying so.
    pub fn interrupted(&self, signal: &str, transcript: &Transcript) {
        if self.interrupted.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        self.clear_spinner();
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

    fn warn_if_broken(&self) {
        if let Some(recording) = &self.recording
            && let Some(why) = recording.broken.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
        {
            crate::errln!("warning: the recording `{}` is incomplete: {why}", recording.path.display());
        }
    }
}

/// An event as one line of JSON.
fn line_of(event: &events::Event) -> String {
    // Events hold only strings, numbers, booleans, and lists and structs of them: nothing
    // that JSON cannot write (no map with keys that are not strings).
    serde_json::to_string(event).expect("an event always serialises as JSON")
}

impl Recording {
    fn write(&self, event: &events::Event) {
        self.write_line(&line_of(event));
    }

    fn write_line(&self, line: &str) {
        let line = redacted(line);
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let written = writeln!(file, "{line}").and_then(|()| file.flush());
        if let Err(e) = written {
            self.broken.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }
    }
}

/// Hands a line to stdout's writer, so a pipe sees progress as it happens. The writing is
/// done by a thread of its own: a reader that is slow or stopped (a pager nobody scrolls)
/// holds up neither the plugin, whose time it would be billed as, nor the answer to an
/// interrupt. A stdout that cannot be written (a closed pipe, a full disk) does not stop
/// the program: a run goes on to its end, so nothing is left half-done, and says once on
/// stderr what happened.
pub fn emit(line: &str) {
    let line = &redacted(line);
    let writer = STDOUT_WRITER.get_or_init(|| {
        let (lines, waiting) = std::sync::mpsc::channel::<String>();
        let thread = std::thread::Builder::new().name("mesh-adopt-stdout".into()).spawn(move || {
            for line in waiting {
                let mut out = std::io::stdout().lock();
                if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
                    note_stdout_failure(&e);
                }
            }
        });
        Mutex::new(thread.ok().map(|thread| (lines, thread)))
    });
    let guard = writer.lock().unwrap_or_else(|p| p.into_inner());
    match guard.as_ref() {
        Some((lines, _)) if lines.send(line.to_string()).is_ok() => {}
        // No writer thread (it could not be started, or stdout was finished): write here.
        _ => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
                note_stdout_failure(&e);
            }
        }
    }
}

/// Waits until every line handed to [`emit`] is written: what the program does before it
/// exits, so the last lines are not lost.
pub fn finish_stdout() {
    let Some(writer) = STDOUT_WRITER.get() else { return };
    let taken = writer.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some((lines, thread)) = taken {
        drop(lines);
        let _ = thread.join();
    }
}

/// [`finish_stdout`], waiting at most `limit`: an interrupted program still writes what it
/// can of its last lines, but a reader that stopped reading does not hold it up.
pub fn finish_stdout_within(limit: Duration) {
    let (done, finished) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new().spawn(move || {
        finish_stdout();
        let _ = done.send(());
    });
    let _ = finished.recv_timeout(limit);
}

type StdoutWriter = Mutex<Option<(std::sync::mpsc::Sender<String>, std::thread::JoinHandle<()>)>>;

static STDOUT_WRITER: std::sync::OnceLock<StdoutWriter> = std::sync::OnceLock::new();

/// Writes a line to stderr; a stderr that cannot be written (full, closed) is no reason to
/// stop the program.
pub fn emit_err(line: &str) {
    let line = redacted(line);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// The genesis credentials whose values no line the program writes may hold, whatever
/// produced the line: a plugin, the host's own words about a manifest, an error quoting an
/// input. The runtime scrubs what passes through a run; this is the last place a value is
/// caught before it leaves the program.
static REDACTOR: std::sync::OnceLock<std::sync::Arc<mesh_adopt_runtime::Credentials>> = std::sync::OnceLock::new();

/// Makes every line written from now on (stdout, stderr, the record) free of `credentials`'
/// values; the first call wins.
pub fn redact_with(credentials: std::sync::Arc<mesh_adopt_runtime::Credentials>) {
    credentials.learn_all();
    let _ = REDACTOR.set(credentials);
}

/// `line` with every credential value replaced by its name.
pub fn redacted(line: &str) -> String {
    match REDACTOR.get() {
        Some(credentials) => credentials.redact(line.to_string()).0,
        None => line.to_string(),
    }
}

/// Prints a formatted line through [`emit_err`]: what the CLI prints instead of
/// `eprintln!`, which would panic on a full stderr.
#[macro_export]
#[doc(hidden)]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::emit_err(&format!($($arg)*)) };
}

/// Whether stdout failed once already; a closed pipe is said nothing of.
static STDOUT_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn note_stdout_failure(error: &std::io::Error) {
    if STDOUT_FAILED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if error.kind() != std::io::ErrorKind::BrokenPipe {
        crate::errln!("warning: stdout cannot be written ({error}); the run goes on, and its record is complete");
    }
}

/// Prints a formatted line through [`emit`]: what the CLI prints instead of `println!`,
/// which would panic on a closed stdout.
#[macro_export]
#[doc(hidden)]
macro_rules! outln {
    () => { $crate::output::emit("") };
    ($($arg:tt)*) => { $crate::output::emit(&format!($($arg)*)) };
}

/// The predicted effect under the plans: one line a container (and a secret), or with `-v`
/// every push with each container it applies and why.
fn effect_lines(prediction: &mesh_adopt_runtime::effect::Prediction, complete: bool, verbose: bool) -> String {
    let mut lines: Vec<String> = prediction
        .first
        .iter()
        .map(|module| {
            format!(
                "      {module:>10} │ effect: goes first: an earlier run left it prepared without its hand-over, \
                 which any other module's push would seal over"
            )
        })
        .collect();
    let secret_line = |s: &mesh_adopt_runtime::effect::SecretEffect| {
        let what = if s.accepted { "accepted before the push" } else { "sealed fresh by the node" };
        format!("      {:>10} │ effect: secret {} {what}", s.module, visible(&s.secret))
    };
    if verbose {
        for (index, push) in prediction.pushes.iter().enumerate() {
            lines.push(format!(
                "      {:>10} │ effect: push {} (plan command {})",
                push.module,
                index + 1,
                push.command + 1
            ));
            for touch in &push.containers {
                lines.push(format!(
                    "      {:>10} │ effect:   {} {} ({})",
                    push.module,
                    visible(&touch.container),
                    visible(&touch.effect.to_string()),
                    why(touch)
                ));
            }
            lines.extend(push.secrets.iter().map(secret_line));
        }
    } else {
        for touch in prediction.changes() {
            lines.push(format!(
                "      {:>10} │ effect: {} {}",
                touch.module,
                visible(&touch.container),
                visible(&touch.effect.to_string())
            ));
        }
        lines.extend(prediction.pushes.iter().flat_map(|p| &p.secrets).map(secret_line));
    }
    if !complete {
        lines.push(
            "            │ effect: (this mesh does not show the control plane's modules: predicted from its containers alone)"
                .to_string(),
        );
    }
    if lines.is_empty() {
        lines.push("            │ effect: no push".to_string());
    }
    lines.join("\n")
}

/// Why the node does what it does to a container: its push rule, in words.
fn why(touch: &mesh_adopt_runtime::effect::Touch) -> String {
    use mesh_adopt_runtime::effect::ContainerEffect;
    let module = &touch.module;
    match &touch.effect {
        ContainerEffect::Kept { .. } => format!("`{module}`'s spec is the one running"),
        ContainerEffect::Recreated { volumes, .. } => {
            format!("`{module}`'s spec differs from the running one; raised on {}", visible(&volumes.join(", ")))
        }
        ContainerEffect::Created { .. } => format!("no container of that name runs; `{module}` raises it"),
        ContainerEffect::Removed => "taken away".to_string(),
    }
}

/// `m:ss` of mesh time, so the operator sees how long each step took on the mesh's clock.
fn clock(at: Duration) -> String {
    let s = at.as_secs();
    format!("{:>2}:{:02}", s / 60, s % 60)
}

/// An outcome's word and its text for a person, plugin text made visible.
fn outcome_words(module: &str, outcome: &ModuleOutcome) -> (&'static str, String) {
    let mut text = outcome.shown();
    if let ModuleOutcome::Unusable(unusable) = outcome
        && let Some(hint) = unusable.cause.as_ref().and_then(|cause| command_hint(cause, module))
    {
        text.push_str(&hint);
    }
    (outcome.word(), text)
}

/// What the command line offers for a problem the runtime typed: the command that mends it.
pub fn command_hint(error: &mesh_adopt_runtime::error::Error, module: &str) -> Option<String> {
    use mesh_adopt_runtime::error::Error;
    match error {
        Error::NoPlugin { .. } => Some(format!(" (build it with `mesh-adopt build {module}`)")),
        Error::PinMismatch(_) => Some(format!(" (`mesh-adopt build {module}` rebuilds and pins it)")),
        _ => None,
    }
}

fn print_summary(report: &RunReport) {
    crate::outln!("\nsummary");
    for (module, outcome) in &report.modules {
        let (word, text) = outcome_words(module, outcome);
        crate::outln!("  {module:<12} {word:<9} {}", text.replace('\n', "\n                         "));
    }
    let mut kept = Vec::new();
    let mut recreated = Vec::new();
    let mut created = Vec::new();
    let mut removed = Vec::new();
    for change in &report.changes {
        match change {
            ContainerChange::Kept { name, image } => kept.push(visible(&format!("{name} ({image})"))),
            ContainerChange::Recreated { name, from, to } => {
                recreated.push(visible(&format!("{name} ({from} → {to})")))
            }
            ContainerChange::Created { name, image } => created.push(visible(&format!("{name} ({image})"))),
            ContainerChange::Removed { name } => removed.push(visible(name)),
        }
    }
    for (word, list) in [("kept", kept), ("recreated", recreated), ("created", created), ("removed", removed)] {
        if !list.is_empty() {
            crate::outln!("  {word:<12} {}", list.join(", "));
        }
    }
    if report.violations.is_empty() {
        let how = match report.rules {
            RulesChecked::Verified => "all held: predicted before any push, then checked on what the node did",
            RulesChecked::Predicted => "predicted to hold; nothing checked what the node did after a push",
            RulesChecked::Inspected | RulesChecked::InspectedImages => {
                let (inspected, predicted): (Vec<Rule>, Vec<Rule>) =
                    Rule::ALL.iter().partition(|rule| report.rules.of_rule(**rule) == RulesChecked::Inspected);
                let names = |rules: Vec<Rule>| rules.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ");
                crate::outln!("  rules        all held");
                crate::outln!("               predicted, then inspected after each push: {}", names(inspected));
                crate::outln!("               predicted only (this mesh cannot show them): {}", names(predicted));
                return;
            }
            RulesChecked::NotPredicted => "not checked: preflight stopped before the effect was predicted",
        };
        crate::outln!("  rules        {how}");
    } else {
        for violation in &report.violations {
            crate::outln!("  BROKEN       {}", visible(&violation.to_string()));
        }
    }
}
