//! The record of a run: every host call a plugin made and every line it said, in order, with
//! the mesh's time. The CLI streams it as it grows; tests and invariants read it afterwards.

use std::sync::Mutex;
use std::time::Duration;

use crate::grants::Phase;

/// Which import a call went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Carry,
    Tell,
    Credential,
    Inspect,
    Fetch,
}

impl CallKind {
    /// Whether the call changes the mesh; only these are denied during `check`.
    pub fn is_effect(self) -> bool {
        matches!(self, CallKind::Carry | CallKind::Tell)
    }
}

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A plugin's line for the operator.
    Say { module: String, line: String, at: Duration },
    /// A host call, with what the host answered (`Err` carries the contract error's words).
    Call { module: String, phase: Phase, kind: CallKind, detail: String, outcome: Result<(), String>, at: Duration },
    /// The say budget ran out; later lines were dropped.
    SayCut { module: String, dropped_after: usize },
    /// A secret's value was caught on its way out (and redacted); `place` says where.
    SecretShown { module: String, secret: String, place: String },
}

/// Receives each event as it is recorded, e.g. to print it.
pub type Observer = Box<dyn Fn(&Event) + Send + Sync>;

/// The run's events, shared by every plugin of the run.
#[derive(Default)]
pub struct Transcript {
    events: Mutex<Vec<Event>>,
    observer: Option<Observer>,
}

impl Transcript {
    /// A transcript that hands every event to `observer` as it happens.
    pub fn observed(observer: Observer) -> Transcript {
        Transcript { events: Mutex::new(Vec::new()), observer: Some(observer) }
    }

    /// Records an event.
    pub fn record(&self, event: Event) {
        if let Some(observer) = &self.observer {
            observer(&event);
        }
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(event);
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The lines `module` said, in order.
    pub fn said(&self, module: &str) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Say { module: m, line, .. } if m == module => Some(line),
                _ => None,
            })
            .collect()
    }

    /// Effects (carries and tells) that reached the mesh for `module`, as their details.
    pub fn effects(&self, module: &str) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Call { module: m, kind, detail, outcome, .. }
                    if m == module && kind.is_effect() && !matches!(&outcome, Err(e) if e.starts_with("denied")) =>
                {
                    Some(detail)
                }
                _ => None,
            })
            .collect()
    }

    /// Secrets caught on their way out: (module, secret, place).
    pub fn secrets_shown(&self) -> Vec<(String, String, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::SecretShown { module, secret, place } => Some((module, secret, place)),
                _ => None,
            })
            .collect()
    }

    /// Every text the run produced that an operator or a log could see, for secret scans.
    pub fn visible_text(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .flat_map(|e| match e {
                Event::Say { line, .. } => vec![line],
                Event::Call { detail, outcome, .. } => vec![detail, outcome.err().unwrap_or_default()],
                Event::SayCut { .. } | Event::SecretShown { .. } => Vec::new(),
            })
            .collect()
    }
}
