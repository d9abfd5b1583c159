//! The record of a run: every host call a plugin made and every line it said, in order, with
//! the mesh's time. The CLI streams it as it grows; tests and invariants read it afterwards.

use std::sync::{Arc, Mutex};

use crate::record::stream::Sink;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::events::{self, CallError, CallValue, ErrorKind, Request};
use crate::model::Export;
use mesh_adopt_manifest::command::Command;

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A plugin's line for the operator.
    Say {
        /// The module whose plugin said it.
        module: String,
        /// The line, as the plugin wrote it (scrubbed of secrets).
        line: String,
        /// When, on the mesh's clock.
        at: Duration,
    },
    /// The host began a read of the mesh of its own.
    Reading {
        /// What it reads.
        what: events::MeshRead,
        /// When it began, on the mesh's clock.
        at: Duration,
    },
    /// A host call is under way: what waits on it can show that it is waiting.
    Started {
        /// The module whose plugin made the call.
        module: String,
        /// The import and its arguments.
        request: Request,
        /// When it started, on the mesh's clock.
        at: Duration,
        /// How long the mesh may take to answer, when the call says.
        timeout: Option<Duration>,
    },
    /// A host call, with what the host answered: `Ok` carries the value it returned, typed
    /// by its import, `Err` the contract error with its kind.
    Call {
        /// The module whose plugin made the call.
        module: String,
        /// In which export.
        phase: Export,
        /// The import and its arguments.
        request: Request,
        /// For a tell, the command it told, where its words are one: what the run asks of
        /// the call, where `request` is the words the record keeps.
        command: Option<Command>,
        /// What the host answered.
        outcome: Result<CallValue, CallError>,
        /// When it ended, on the mesh's clock.
        at: Duration,
        /// How long the host took, in real time.
        took: Duration,
    },
    /// The say budget ran out; later lines were dropped.
    SayCut {
        /// The module whose plugin said too much.
        module: String,
        /// How many lines were kept.
        dropped_after: usize,
    },
    /// A secret's value was caught on its way out (and redacted); `place` says where.
    SecretShown {
        /// The module whose text held it.
        module: String,
        /// The credential's name (never its value).
        secret: String,
        /// Where it was caught: a tell's arguments, a say line, a refusal.
        place: String,
    },
    /// The mesh's lock: taken, held by another, waited for, released or failed.
    Lock(events::LockEvent),
    /// Preflight predicted what every push of the phase will do to the mesh.
    Predicted {
        /// The prediction, push by push.
        prediction: crate::effect::Prediction,
        /// Whether the mesh showed everything it rests on.
        complete: bool,
    },
    /// Just before a push, the mesh was read again and held to the prediction: what moved.
    Reread {
        /// The module about to push.
        module: String,
        /// The push's place in its plan.
        command: usize,
        /// What the re-read found.
        found: crate::effect::Reread,
        /// When, on the mesh's clock.
        at: Duration,
    },
    /// Preflight's `check` of a module made this plan, which its `adopt` is held to.
    Planned {
        /// The module checked.
        module: String,
        /// The plan's lines for the operator.
        summary: Vec<String>,
        /// The commands `adopt` will tell, in order.
        commands: Vec<Vec<String>>,
    },
}

/// Receives each event as it is recorded, e.g. to print it.
pub type Observer = Box<dyn Fn(&Entry) + Send + Sync>;

/// The run's events, shared by every plugin of the run.
#[derive(Default)]
pub struct Transcript {
    events: Mutex<Vec<Entry>>,
    observer: Option<Observer>,
    /// The run's event stream, once a run streams into it.
    sink: Mutex<Option<Arc<dyn Sink>>>,
    /// Bytes of text recorded so far, for the run's cap on what it keeps.
    text_bytes: AtomicUsize,
    /// The carry or tell under way, while one is, in a run someone watches: what an
    /// interrupted run names as in flight.
    in_flight: Mutex<Option<(String, Request)>>,
    /// Whether `in_flight` holds a call, so a run that keeps none never looks.
    flying: std::sync::atomic::AtomicBool,
    /// What the run's lock said of what it had sent, when it was let go as the run stopped.
    landing: Mutex<Option<events::Landing>>,
    /// The run's lock, when it could not be let go as the run stopped.
    left: Mutex<Option<String>>,
}

impl Transcript {
    /// A transcript that hands every event to `observer` as it happens.
    pub fn observed(observer: Observer) -> Transcript {
        Transcript {
            events: Mutex::new(Vec::new()),
            observer: Some(observer),
            sink: Mutex::new(None),
            text_bytes: AtomicUsize::new(0),
            in_flight: Mutex::new(None),
            flying: std::sync::atomic::AtomicBool::new(false),
            landing: Mutex::new(None),
            left: Mutex::new(None),
        }
    }

    /// Streams every event recorded from now on to `sink` as well, in place of any sink
    /// before it (the run's stream: see [`crate::RunBuilder::events`]; a transcript shared by
    /// runs in turn streams to each run's own).
    pub fn stream_to(&self, sink: Arc<dyn Sink>) {
        *self.sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    /// The sink events stream to now, if any.
    fn streaming(&self) -> Option<Arc<dyn Sink>> {
        self.sink.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Records an event.
    pub fn record(&self, event: Entry) {
        // A call's end: none is in flight any more (looked at only where one was kept).
        if matches!(event, Entry::Call { .. })
            && self.flying.load(Ordering::Relaxed)
            && self.flying.swap(false, Ordering::Relaxed)
        {
            *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
        self.text_bytes.fetch_add(event.visible().into_iter().map(str::len).sum(), Ordering::Relaxed);
        if let Some(observer) = &self.observer {
            observer(&event);
        }
        if let Some(sink) = self.streaming() {
            sink.event(&event.to_event());
        }
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(event);
    }

    /// Bytes of text (call details and results, lines said) recorded so far.
    pub fn text_bytes(&self) -> usize {
        self.text_bytes.load(Ordering::Relaxed)
    }

    /// Whether anyone watches the run as it goes; progress events are only made for them.
    pub fn is_observed(&self) -> bool {
        self.observer.is_some() || self.streaming().is_some()
    }

    /// Hands a progress event (a call under way) to the observer without keeping it: it
    /// says nothing the call's own record will not.
    pub fn announce(&self, event: Entry) {
        if let Some(observer) = &self.observer {
            observer(&event);
        }
        if let Some(sink) = self.streaming() {
            sink.event(&event.to_event());
        }
    }

    /// Announces a call under way ([`Entry::Started`]) to whoever watches, and keeps it, when
    /// it is an effect, as the call an interruption names in flight until its
    /// [`Entry::Call`] is recorded.
    pub fn under_way(&self, started: Entry) {
        if let Entry::Started { module, request, .. } = &started
            && request.op.is_effect()
        {
            *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()) = Some((module.clone(), request.clone()));
            self.flying.store(true, Ordering::Relaxed);
        }
        self.announce(started);
    }

    /// Notes that the run's lock `id` could not be let go as the run stopped: it is left, for
    /// `mesh-adopt unlock`.
    pub fn lock_left(&self, id: &str) {
        *self.left.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.to_string());
    }

    /// Notes which of the run's locks are left after a last attempt made for it as the program
    /// ends (`left`, from that attempt): what it released is no longer left.
    pub fn locks_left_at_exit(&self, left: &[String]) {
        *self.left.lock().unwrap_or_else(|p| p.into_inner()) = left.first().cloned();
    }

    /// Notes what the run's lock, let go as the run stopped, said of what the run had sent.
    pub fn let_go(&self, landing: events::Landing) {
        *self.landing.lock().unwrap_or_else(|p| p.into_inner()) = Some(landing);
    }

    /// The carry or tell under way when the run stopped, with what became of it.
    pub fn in_flight(&self) -> Option<events::InFlight> {
        let (module, request) = self.in_flight.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        let landing = self.landing.lock().unwrap_or_else(|p| p.into_inner()).unwrap_or(events::Landing::Unknown);
        Some(events::InFlight { module, request, landing })
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<Entry> {
        self.with_events(<[Entry]>::to_vec)
    }

    /// Reads the events in place, without copying them.
    fn with_events<T>(&self, read: impl FnOnce(&[Entry]) -> T) -> T {
        read(&self.events.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The lines `module` said, in order.
    pub fn said(&self, module: &str) -> Vec<String> {
        self.with_events(|events| {
            events
                .iter()
                .filter_map(|e| match e {
                    Entry::Say { module: m, line, .. } if m == module => Some(line.clone()),
                    _ => None,
                })
                .collect()
        })
    }

    /// Effects (carries and tells) that reached the mesh for `module`, in words.
    pub fn effects(&self, module: &str) -> Vec<String> {
        self.all_effects().into_iter().filter(|(m, _)| m == module).map(|(_, request)| request.words()).collect()
    }

    /// The first trouble `module`'s plugin went on past: a call the host denied (past its
    /// grants or its plan), or a planned command the control plane did not carry out, other
    /// than the account the provider sequence may go without. `None` when there was none.
    pub fn trouble_passed_over(&self, module: &str) -> Option<String> {
        use crate::events::{ErrorKind, Op};
        self.with_events(|events| {
            events.iter().find_map(|e| match e {
                Entry::Call { module: m, request, command, outcome: Err(error), .. } if m == module => {
                    let call = format!("`{} {}`", request.op.as_str(), request.words());
                    match error.kind {
                        ErrorKind::Denied => Some(format!("its plugin was denied {call} ({})", error.message)),
                        _ if request.op == Op::Tell && !matches!(command, Some(Command::ModuleIssue { .. })) => {
                            Some(format!("{call} {} ({})", error.kind.words(), error.message))
                        }
                        _ => None,
                    }
                }
                _ => None,
            })
        })
    }

    /// The first call `module`'s plugin was denied while it was being checked, in words: a
    /// check that goes on past one and plans anyway has not checked what it claims to.
    pub fn denied_while_checking(&self, module: &str) -> Option<String> {
        use crate::events::ErrorKind;
        self.with_events(|events| {
            events.iter().find_map(|e| match e {
                Entry::Call { module: m, phase: crate::model::Export::Check, request, outcome: Err(error), .. }
                    if m == module && error.kind == ErrorKind::Denied =>
                {
                    Some(format!("`{} {}` ({})", request.op.as_str(), request.words(), error.message))
                }
                _ => None,
            })
        })
    }

    /// The secrets `module`'s plugin carried into the control plane that no `secret accept`
    /// from their path took afterwards, as `(name, path)` in the order carried: each stays in
    /// the control plane until accepted or carried over.
    pub fn secrets_unaccepted(&self, module: &str) -> Vec<(String, String)> {
        self.with_events(|events| {
            let mut carried: Vec<(String, String)> = Vec::new();
            for event in events {
                let Entry::Call { module: m, request, command, outcome: Ok(_), .. } = event else { continue };
                if m != module {
                    continue;
                }
                match (request.op, request.args.as_slice(), &request.payload) {
                    (crate::events::Op::Carry, [name, remote], Some(crate::events::Payload::Secret)) => {
                        carried.retain(|(_, at)| at != remote);
                        carried.push((name.clone(), remote.clone()));
                    }
                    (crate::events::Op::Tell, _, _) => {
                        if let Some(Command::SecretAccept { from, .. }) = command {
                            carried.retain(|(_, at)| at != from);
                        }
                    }
                    _ => {}
                }
            }
            carried
        })
    }

    /// Whether `module`'s plugin told a `push` that the control plane took: a push whose
    /// effect the node should now show.
    pub fn pushed(&self, module: &str) -> bool {
        self.with_events(|events| {
            events.iter().any(|e| {
                matches!(e, Entry::Call { module: m, command: Some(Command::Push { .. }), outcome: Ok(_), .. }
                    if m == module)
            })
        })
    }

    /// The record's last event for a run stopped before its end: `why` is `SIGINT` or
    /// `SIGTERM` for the command line, `cancelled` for an embedder that dropped
    /// [`crate::Run::run`]'s future; with the effects that had reached the mesh.
    pub fn interrupted(&self, why: &str) -> events::Event {
        events::Event::Interrupted(events::InterruptedEvent {
            signal: why.to_string(),
            exit: events::EXIT_INTERRUPTED,
            done: self.all_effects().into_iter().map(|(module, request)| events::Effect { module, request }).collect(),
            in_flight: self.in_flight(),
            lock_left: self.left.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        })
    }

    /// Every effect that reached the mesh, as (module, what it asked for), in order. A call
    /// the host denied never reached it.
    pub fn all_effects(&self) -> Vec<(String, Request)> {
        self.with_events(|events| {
            events
                .iter()
                .filter_map(|e| match e {
                    Entry::Call { module, request, outcome, .. }
                        if request.op.is_effect()
                            && !matches!(outcome, Err(CallError { kind: ErrorKind::Denied, .. })) =>
                    {
                        Some((module.clone(), request.clone()))
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
                    Entry::SecretShown { module, secret, place } => {
                        Some((module.clone(), secret.clone(), place.clone()))
                    }
                    _ => None,
                })
                .collect()
        })
    }

    /// Every text the run produced that an operator or a log could see, for secret scans.
    pub fn visible_text(&self) -> Vec<String> {
        self.with_events(|events| events.iter().flat_map(Entry::visible).map(str::to_string).collect())
    }

    /// Whether any text an operator or a log could see contains one of `needles`.
    pub fn shows_any(&self, needles: &[&str]) -> bool {
        if needles.is_empty() {
            return false;
        }
        self.with_events(|events| events.iter().flat_map(Entry::visible).any(|t| needles.iter().any(|n| t.contains(n))))
    }
}

impl Entry {
    /// The texts of this event an operator or a log could see.
    fn visible(&self) -> Vec<&str> {
        match self {
            Entry::Say { line, .. } => vec![line],
            Entry::Call { request, outcome, .. } => {
                let mut texts: Vec<&str> = request.args.iter().map(String::as_str).collect();
                match outcome {
                    Ok(value) => texts.extend(value.texts()),
                    Err(error) => texts.push(&error.message),
                }
                texts
            }
            Entry::Started { .. }
            | Entry::Reading { .. }
            | Entry::SayCut { .. }
            | Entry::SecretShown { .. }
            | Entry::Planned { .. }
            | Entry::Lock(_)
            | Entry::Reread { .. }
            | Entry::Predicted { .. } => Vec::new(),
        }
    }

    /// The event as the `--json` and `--record` streams write it. Values were scrubbed of
    /// secrets before they were recorded.
    pub fn to_event(&self) -> events::Event {
        match self {
            Entry::Say { module: m, line, at } => events::Event::Say(events::SayEvent {
                module: m.clone(),
                line: line.clone(),
                at_ms: events::millis(*at),
            }),
            Entry::Reading { what, at } => {
                events::Event::Reading(events::ReadingEvent { what: *what, at_ms: events::millis(*at) })
            }
            Entry::Started { module: m, request, at, timeout } => events::Event::Started(events::StartedEvent {
                module: m.clone(),
                request: request.clone(),
                at_ms: events::millis(*at),
                timeout_s: timeout.map(|t| t.as_secs()),
            }),
            Entry::Call { module: m, phase, request, outcome, at, took, .. } => {
                events::Event::Call(events::CallEvent {
                    module: m.clone(),
                    phase: *phase,
                    request: request.clone(),
                    result: match outcome {
                        Ok(value) => events::CallResult::Ok(value.clone()),
                        Err(error) => events::CallResult::Error(error.clone()),
                    },
                    at_ms: events::millis(*at),
                    took_ms: events::millis(*took),
                })
            }
            Entry::SayCut { module: m, dropped_after } => events::Event::SayCut(events::SayCutEvent {
                module: m.clone(),
                dropped_after: u64::try_from(*dropped_after).unwrap_or(u64::MAX),
            }),
            Entry::SecretShown { module: m, secret, place } => events::Event::SecretShown(events::SecretShownEvent {
                module: m.clone(),
                secret: secret.clone(),
                place: place.clone(),
            }),
            Entry::Planned { module: m, summary, commands } => events::Event::Plan(events::PlanEvent {
                module: m.clone(),
                summary: summary.clone(),
                commands: commands.clone(),
            }),
            Entry::Reread { module: m, command, found, at } => events::Event::Reread(events::RereadEvent {
                module: m.clone(),
                command: *command as u64,
                unseen: found.unseen.clone(),
                moved: found
                    .moved
                    .iter()
                    .map(|moved| events::MovedRecord {
                        what: moved.what.clone(),
                        field: moved.field.clone(),
                        predicted: moved.predicted.clone(),
                        found: moved.found.clone(),
                    })
                    .collect(),
                at_ms: events::millis(*at),
            }),
            Entry::Lock(lock) => events::Event::Lock(lock.clone()),
            Entry::Predicted { prediction, complete } => {
                events::Event::Effect(crate::effect::record(prediction, *complete))
            }
        }
    }
}
