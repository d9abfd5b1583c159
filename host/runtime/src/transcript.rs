//! The record of a run: every host call a plugin made and every line it said, in order, with
//! the mesh's time. The CLI streams it as it grows; tests and invariants read it afterwards.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// The import's name, as records and `--json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Carry => "carry",
            CallKind::Tell => "tell",
            CallKind::Credential => "credential",
            CallKind::Inspect => "inspect",
            CallKind::Fetch => "fetch",
        }
    }

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
    /// A host call is under way: what waits on it can show that it is waiting.
    Started { module: String, kind: CallKind, detail: String, at: Duration, timeout: Option<Duration> },
    /// A host call, with what the host answered: `Ok` carries the value it returned, in
    /// words (a tell's output, an inspect's state as JSON), `Err` the contract error's words.
    Call {
        module: String,
        phase: Phase,
        kind: CallKind,
        detail: String,
        outcome: Result<String, String>,
        at: Duration,
        took: Duration,
    },
    /// The say budget ran out; later lines were dropped.
    SayCut { module: String, dropped_after: usize },
    /// A secret's value was caught on its way out (and redacted); `place` says where.
    SecretShown { module: String, secret: String, place: String },
    /// Preflight's `check` of a module made this plan, which its `adopt` is held to.
    Planned { module: String, summary: Vec<String>, commands: Vec<Vec<String>> },
}

/// Receives each event as it is recorded, e.g. to print it.
pub type Observer = Box<dyn Fn(&Event) + Send + Sync>;

/// The run's events, shared by every plugin of the run.
#[derive(Default)]
pub struct Transcript {
    events: Mutex<Vec<Event>>,
    observer: Option<Observer>,
    /// Bytes of text recorded so far, for the run's cap on what it keeps.
    text_bytes: AtomicUsize,
}

impl Transcript {
    /// A transcript that hands every event to `observer` as it happens.
    pub fn observed(observer: Observer) -> Transcript {
        Transcript { events: Mutex::new(Vec::new()), observer: Some(observer), text_bytes: AtomicUsize::new(0) }
    }

    /// Records an event.
    pub fn record(&self, event: Event) {
        self.text_bytes.fetch_add(event.visible().map(str::len).sum(), Ordering::Relaxed);
        if let Some(observer) = &self.observer {
            observer(&event);
        }
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(event);
    }

    /// Bytes of text (call details and results, lines said) recorded so far.
    pub fn text_bytes(&self) -> usize {
        self.text_bytes.load(Ordering::Relaxed)
    }

    /// Whether anyone watches the run as it goes; progress events are only made for them.
    pub fn is_observed(&self) -> bool {
        self.observer.is_some()
    }

    /// Hands a progress event (a call under way) to the observer without keeping it: it
    /// says nothing the call's own record will not.
    pub fn announce(&self, event: Event) {
        if let Some(observer) = &self.observer {
            observer(&event);
        }
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<Event> {
        self.with_events(<[Event]>::to_vec)
    }

    /// Reads the events in place, without copying them.
    fn with_events<T>(&self, read: impl FnOnce(&[Event]) -> T) -> T {
        read(&self.events.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The lines `module` said, in order.
    pub fn said(&self, module: &str) -> Vec<String> {
        self.with_events(|events| {
            events
                .iter()
                .filter_map(|e| match e {
                    Event::Say { module: m, line, .. } if m == module => Some(line.clone()),
                    _ => None,
                })
                .collect()
        })
    }

    /// Effects (carries and tells) that reached the mesh for `module`, as their details.
    pub fn effects(&self, module: &str) -> Vec<String> {
        self.with_events(|events| {
            events
                .iter()
                .filter_map(|e| match e {
                    Event::Call { module: m, kind, detail, outcome, .. }
                        if m == module && kind.is_effect() && !matches!(outcome, Err(e) if e.starts_with("denied")) =>
                    {
                        Some(detail.clone())
                    }
                    _ => None,
                })
                .collect()
        })
    }

    /// Every effect that reached the mesh, as (module, detail), in order.
    pub fn all_effects(&self) -> Vec<(String, String)> {
        self.with_events(|events| {
            events
                .iter()
                .filter_map(|e| match e {
                    Event::Call { module, kind, detail, outcome, .. }
                        if kind.is_effect() && !matches!(outcome, Err(e) if e.starts_with("denied")) =>
                    {
                        Some((module.clone(), detail.clone()))
                    }
                    _ => None,
                })
                .collect()
        })
    }

    /// Secrets caught on their way out: (module, secret, place).
    pub fn secrets_shown(&self) -> Vec<(String, String, String)> {
        self.with_events(|events| {
            events
                .iter()
                .filter_map(|e| match e {
                    Event::SecretShown { module, secret, place } => {
                        Some((module.clone(), secret.clone(), place.clone()))
                    }
                    _ => None,
                })
                .collect()
        })
    }

    /// Every text the run produced that an operator or a log could see, for secret scans.
    pub fn visible_text(&self) -> Vec<String> {
        self.with_events(|events| events.iter().flat_map(Event::visible).map(str::to_string).collect())
    }

    /// Whether any text an operator or a log could see contains one of `needles`.
    pub fn shows_any(&self, needles: &[&str]) -> bool {
        if needles.is_empty() {
            return false;
        }
        self.with_events(|events| events.iter().flat_map(Event::visible).any(|t| needles.iter().any(|n| t.contains(n))))
    }
}

impl Event {
    /// The texts of this event an operator or a log could see.
    fn visible(&self) -> impl Iterator<Item = &str> {
        let texts: [Option<&str>; 2] = match self {
            Event::Say { line, .. } => [Some(line), None],
            Event::Call { detail, outcome, .. } => [Some(detail), Some(outcome.as_ref().unwrap_or_else(|e| e))],
            Event::Started { .. } | Event::SayCut { .. } | Event::SecretShown { .. } | Event::Planned { .. } => {
                [None, None]
            }
        };
        texts.into_iter().flatten()
    }
}

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

impl Event {
    /// The event as one JSON object, for `--record` files and `--json` output. Values were
    /// scrubbed of secrets before they were recorded.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Event::Say { module, line, at } => {
                json!({"event": "say", "module": module, "line": line, "at_ms": millis(*at)})
            }
            Event::Started { module, kind, detail, at, timeout } => json!({
                "event": "started", "module": module, "op": kind.name(), "args": detail,
                "at_ms": millis(*at), "timeout_s": timeout.map(|t| t.as_secs()),
            }),
            Event::Call { module, phase, kind, detail, outcome, at, took } => json!({
                "event": "call", "module": module, "phase": phase.to_string(), "op": kind.name(), "args": detail,
                "ok": outcome.is_ok(), "result": outcome.as_ref().unwrap_or_else(|e| e),
                "at_ms": millis(*at), "took_ms": millis(*took),
            }),
            Event::SayCut { module, dropped_after } => {
                json!({"event": "say_cut", "module": module, "dropped_after": dropped_after})
            }
            Event::SecretShown { module, secret, place } => {
                json!({"event": "secret_shown", "module": module, "secret": secret, "place": place})
            }
            Event::Planned { module, summary, commands } => {
                json!({"event": "plan", "module": module, "summary": summary, "commands": commands})
            }
        }
    }
}
