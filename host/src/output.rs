//! How a run is shown: lines for a person (with a spinner on long waits when stdout is a
//! terminal), JSON lines for a machine, and a recording file kept as the run goes.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context as _, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::mesh::ContainerChange;
use crate::run::{ModuleOutcome, RunOptions, RunReport};
use crate::transcript::{CallKind, Event};

/// A tell allowed this long is a long wait worth showing (a build, a push).
const LONG_WAIT: Duration = Duration::from_secs(60);

/// Who reads the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A person: say lines as they come, a summary at the end.
    Human { verbose: bool },
    /// A program: one JSON object a line.
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
}

/// The `--record` file: every event as a JSON line, flushed as written so a crash keeps
/// what came before it.
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
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(path)
                    .with_context(|| format!("failed to create the recording `{}`", path.display()))?;
                Some(Recording { path: path.to_path_buf(), file: Mutex::new(file), broken: Mutex::new(None) })
            }
        };
        Ok(Output {
            style,
            real_waits,
            terminal: std::io::stdout().is_terminal(),
            spinner: Mutex::new(None),
            recording,
        })
    }

    /// Starts the recording with what a replay needs to run as this run did: the modules,
    /// the operator's options and the mesh.
    pub fn record_run(&self, modules: &[String], options: &RunOptions, mesh: &str) {
        if let Some(recording) = &self.recording {
            let header = json!({
                "event": "run", "modules": modules, "options": options.to_json(), "mesh": mesh,
            });
            recording.write_line(&header.to_string());
        }
    }

    /// Shows and records one event.
    pub fn observe(&self, event: &Event) {
        if let Some(recording) = &self.recording {
            recording.write(event);
        }
        match self.style {
            Style::Json => emit(&event.to_json().to_string()),
            Style::Human { verbose } => self.human(event, verbose),
        }
    }

    fn human(&self, event: &Event, verbose: bool) {
        let mut spinner = self.spinner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bar) = spinner.take() {
            bar.finish_and_clear();
        }
        let line = match event {
            Event::Say { module, line, at } => format!("{} {module:>10} │ {line}", clock(*at)),
            Event::SayCut { module, dropped_after } => {
                format!("      {module:>10} │ (said more than {dropped_after} lines: stopped, the rest dropped)")
            }
            Event::SecretShown { module, secret, place } => {
                format!("      {module:>10} │ (the value of secret `{secret}` was caught in {place} and redacted)")
            }
            Event::Started { module, kind: CallKind::Tell, detail, at, timeout: Some(timeout) }
                if self.real_waits && *timeout >= LONG_WAIT =>
            {
                let what = format!("{module:>10} │ waiting for `{detail}` (up to {}s)", timeout.as_secs());
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
            Event::Call { module, phase, kind, detail, outcome, at, took } if verbose => {
                let result = match outcome {
                    Ok(value) if value.is_empty() => "ok".to_string(),
                    Ok(value) => format!("ok: {value}"),
                    Err(e) => e.clone(),
                };
                format!("{} {module:>10} ┆ {phase} {} {detail} → {result} ({took:.1?})", clock(*at), kind.name())
            }
            Event::Call { .. } | Event::Started { .. } => return,
        };
        emit(&line);
    }

    /// Shows the run's report, and says if the recording could not be kept whole.
    pub fn finish(&self, report: &RunReport) {
        if let Some(bar) = self.spinner.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bar.finish_and_clear();
        }
        if let Some(recording) = &self.recording
            && let Some(why) = recording.broken.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
        {
            eprintln!("warning: the recording `{}` is incomplete: {why}", recording.path.display());
        }
        match self.style {
            Style::Json => emit(&summary_json(report).to_string()),
            Style::Human { .. } => print_summary(report),
        }
    }
}

impl Recording {
    fn write(&self, event: &Event) {
        self.write_line(&event.to_json().to_string());
    }

    fn write_line(&self, line: &str) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let written = writeln!(file, "{line}").and_then(|()| file.flush());
        if let Err(e) = written {
            self.broken.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }
    }
}

/// Writes a line to stdout at once, so a pipe sees progress as it happens.
fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// `m:ss` of mesh time, so the operator sees how long each step took on the mesh's clock.
fn clock(at: Duration) -> String {
    let s = at.as_secs();
    format!("{:>2}:{:02}", s / 60, s % 60)
}

fn outcome_words(outcome: &ModuleOutcome) -> (&'static str, String) {
    match outcome {
        ModuleOutcome::Checked(plan) => {
            let mut text = plan.summary.join("\n");
            for command in &plan.commands {
                text.push_str(&format!("\n  tell {}", command.join(" ")));
            }
            ("ready", text)
        }
        ModuleOutcome::Adopted(summary) => ("adopted", summary.clone()),
        ModuleOutcome::Refused { during, message } => ("refused", format!("(in {during}) {message}")),
        ModuleOutcome::Failed(error) => ("failed", error.clone()),
        ModuleOutcome::NotRun { because } => ("not run", because.clone()),
    }
}

fn change_json(change: &ContainerChange) -> serde_json::Value {
    match change {
        ContainerChange::Kept { name, image } => json!({"container": name, "change": "kept", "image": image}),
        ContainerChange::Recreated { name, from, to } => {
            json!({"container": name, "change": "recreated", "from": from, "to": to})
        }
        ContainerChange::Created { name, image } => json!({"container": name, "change": "created", "image": image}),
        ContainerChange::Removed { name } => json!({"container": name, "change": "removed"}),
    }
}

fn summary_json(report: &RunReport) -> serde_json::Value {
    json!({
        "event": "summary",
        "succeeded": report.succeeded(),
        "mesh": report.mesh,
        "modules": report.modules.iter().map(|(module, outcome)| {
            let (word, text) = outcome_words(outcome);
            json!({"module": module, "outcome": word, "message": text})
        }).collect::<Vec<_>>(),
        "changes": report.changes.iter().map(change_json).collect::<Vec<_>>(),
        "violations": report.violations.iter().map(|v| json!({"invariant": v.invariant, "detail": v.detail})).collect::<Vec<_>>(),
    })
}

fn print_summary(report: &RunReport) {
    println!("\nsummary");
    for (module, outcome) in &report.modules {
        let (word, text) = outcome_words(outcome);
        println!("  {module:<12} {word:<9} {}", text.replace('\n', "\n                         "));
    }
    let mut kept = Vec::new();
    let mut recreated = Vec::new();
    let mut created = Vec::new();
    let mut removed = Vec::new();
    for change in &report.changes {
        match change {
            ContainerChange::Kept { name, image } => kept.push(format!("{name} ({image})")),
            ContainerChange::Recreated { name, from, to } => recreated.push(format!("{name} ({from} → {to})")),
            ContainerChange::Created { name, image } => created.push(format!("{name} ({image})")),
            ContainerChange::Removed { name } => removed.push(name.clone()),
        }
    }
    for (word, list) in [("kept", kept), ("recreated", recreated), ("created", created), ("removed", removed)] {
        if !list.is_empty() {
            println!("  {word:<12} {}", list.join(", "));
        }
    }
    if report.violations.is_empty() {
        println!("  invariants   all held");
    } else {
        for violation in &report.violations {
            println!("  BROKEN       {violation}");
        }
    }
}
