//! Reading a recording: a `--record` file (or a saved `--json` stdout, the same stream) read
//! through the stream's types, every line held to its event's shape, and what a replay needs of
//! it kept: the run's options, seed and catalogue, the calls that reached the mesh, the re-reads
//! before its pushes, and where it was interrupted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Command;
use crate::events::{
    self, CallEvent, CallResult, CallValue, CatalogueRecord, ErrorKind, Event, Header, Op, Request, SCHEMA,
};
use crate::model::options::RunOptions;

/// What a `--record` file (or a saved `--json` stdout, which is the same stream) holds that
/// a replay needs.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The operator's options the run was made with.
    pub options: RunOptions,
    /// The calls that reached the mesh, in order.
    pub calls: Vec<CallEvent>,
    /// The seed the recorded run's WASI random numbers were drawn from, where it says.
    pub seed: Option<u64>,
    /// The catalogue, foundation and credentials the recorded run read, where it says.
    pub catalogue: Option<CatalogueRecord>,
    /// Where the recorded run was interrupted, when the recording ends with its `interrupted`
    /// event.
    pub interrupted: Option<Interruption>,
    /// What the recorded run found each time it read the mesh again before a push, in order:
    /// a replay's re-reads are answered with them.
    pub rereads: Vec<events::RereadEvent>,
}

/// Where a recorded run was interrupted: what stopped it, and the call it was making then.
#[derive(Debug, Clone, PartialEq)]
pub struct Interruption {
    /// `SIGINT`, `SIGTERM` or `cancelled`, as the recording's `interrupted` event says.
    pub signal: String,
    /// The call that went out and never returned (a `started` event with no `call` after
    /// it), by its module; `None` when the run stopped between calls.
    pub during: Option<(String, Request)>,
}

/// The largest recording read: a run records at most `Limits::record_bytes` (16 MiB) of text
/// a module, and phase three has three.
pub const RECORDING_BYTES: u64 = 64 << 20;

/// Why a recording cannot be replayed, naming the file and, where one is to blame, the line.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// The file could not be read.
    #[error("failed to read the recording `{}`", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::files::FileError,
    },
    /// The file is not UTF-8.
    #[error("failed to read the recording `{}`: it is not UTF-8", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// The file holds no line.
    #[error("the recording `{}` is empty: a recording starts with a `run` event", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A line that cannot be read as the recording's.
    #[error("line {line} of the recording `{}` {fault}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1.
        line: usize,
        /// What is wrong with it.
        fault: LineFault,
    },
    /// No `run` event.
    #[error("the recording `{}` has no `run` event", path.display())]
    NoRun {
        /// The file.
        path: PathBuf,
    },
    /// No call reached a mesh, so there is nothing to replay.
    #[error("the recording `{}` holds no calls that reached a mesh", path.display())]
    NoCalls {
        /// The file.
        path: PathBuf,
    },
}

impl RecordingError {
    /// What mends it: a recording made again, since what it holds is what its run did.
    pub fn remedy(&self) -> crate::remedy::Remedy {
        let path = match self {
            RecordingError::Unreadable { path, .. }
            | RecordingError::NotText { path }
            | RecordingError::Empty { path }
            | RecordingError::Line { path, .. }
            | RecordingError::NoRun { path }
            | RecordingError::NoCalls { path } => path.clone(),
        };
        let at = match self {
            RecordingError::Line { line, .. } => Some(format!("line {line}")),
            _ => None,
        };
        crate::remedy::Remedy::EditFile { path, at }
    }
}

/// What is wrong with one line of a recording, said after the line's place.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LineFault {
    /// The first line is not a JSON object.
    #[error("is not a JSON object: {0}")]
    NotAnObject(Arc<serde_json::Error>),
    /// The first line is another event than `run`.
    #[error("is a `{0}` event: a recording starts with its `run` event")]
    NotRunFirst(String),
    /// The first line names no event.
    #[error("has no `event` field: a recording starts with its `run` event")]
    NoEvent,
    /// The first line carries no schema version.
    #[error(
        "has no `schema` version: the recording was made before recordings carried one, and this mesh-adopt \
         reads only schema {SCHEMA} (docs/events.md); record the run again"
    )]
    NoSchema,
    /// Another schema version.
    #[error(
        "is in schema {0}: this mesh-adopt reads only schema {SCHEMA} (docs/events.md); replay it with the \
         mesh-adopt that made it"
    )]
    OtherSchema(String),
    /// Not an event of this schema.
    #[error("is not an event of schema {SCHEMA} (docs/events.md): {0}")]
    NotAnEvent(Arc<serde_json::Error>),
    /// Run options a run would refuse.
    #[error("has run options that cannot be used: {0}")]
    Options(crate::model::options::OptionError),
    /// A second `run` event.
    #[error("is a second `run` event: a recording holds one run")]
    SecondRun,
    /// A call that does not fit its import.
    #[error("{0}")]
    Call(CallFault),
    /// A `--json` line cut to fit its bound: what it left out cannot be replayed.
    #[error(
        "was cut to fit a `--json` line ({0} bytes left out): a replay reads a `--record` file, which keeps \
         every byte; record the run with `--record FILE` and replay that"
    )]
    Cut(u64),
}

/// A recorded call that does not fit its import.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallFault {
    /// Another number of arguments than the import takes.
    #[error("has {} `{}` call with {given} args; `{}` takes {takes}", article(*op), op.as_str(), op.as_str())]
    Arity {
        /// The import.
        op: Op,
        /// The arguments recorded.
        given: usize,
        /// The arguments it takes.
        takes: usize,
    },
    /// A tell that reached the mesh whose words are no command of the control plane.
    #[error("has a `tell` call `{words}` that reached the mesh and is no command of it: {why}")]
    NotACommand {
        /// Its words.
        words: String,
        /// Why they are no command.
        why: mesh_adopt_manifest::command::CommandError,
    },
    /// An answer the import never gives.
    #[error("has {} `{}` call answered with {shape}, which `{}` never returns", article(*op), op.as_str(), op.as_str())]
    Answer {
        /// The import.
        op: Op,
        /// What the answer is.
        shape: &'static str,
    },
}

/// Reads a `--record` file through the stream's types (`docs/events.md`): its first line
/// must be a `run` event of this program's schema version, every line an event of it.
/// Keeps the run's options, seed and catalogue, the calls that reached the mesh (credentials,
/// answered by the host, and calls the host denied, never sent, are left out) and, when the
/// run was interrupted, where. Every problem names the file and the line.
pub fn read_recording(path: &Path) -> Result<Recording, RecordingError> {
    let file = || path.to_path_buf();
    let bytes = crate::files::read_bounded(path, RECORDING_BYTES)
        .map_err(|source| RecordingError::Unreadable { path: file(), source })?;
    let text = String::from_utf8(bytes).map_err(|_| RecordingError::NotText { path: file() })?;
    let at = |line: usize| move |fault: LineFault| RecordingError::Line { path: path.to_path_buf(), line, fault };
    let mut lines = text.lines().enumerate().map(|(i, line)| (i + 1, line)).filter(|(_, l)| !l.trim().is_empty());
    let Some((first, header)) = lines.next() else {
        return Err(RecordingError::Empty { path: file() });
    };
    check_header(header).map_err(at(first))?;
    let mut calls = Vec::new();
    let mut run = None;
    // The call that went out and has not returned, as the lines are read.
    let mut in_flight: Option<(String, Request)> = None;
    let mut interrupted = None;
    let mut rereads = Vec::new();
    for (number, line) in std::iter::once((first, header)).chain(lines) {
        if line.contains(crate::record::line_bound::CUT_FIELD)
            && let Ok(serde_json::Value::Object(object)) = serde_json::from_str::<serde_json::Value>(line)
            && let Some(cut) = object.get(crate::record::line_bound::CUT_FIELD)
        {
            let left_out = cut["bytes_left_out"].as_u64().unwrap_or(0);
            return Err(at(number)(LineFault::Cut(left_out)));
        }
        let event: Event = serde_json::from_str(line).map_err(|e| at(number)(LineFault::NotAnEvent(Arc::new(e))))?;
        match event {
            Event::Run(header) if run.is_none() => {
                let options = RunOptions::try_from(header.options).map_err(|e| at(number)(LineFault::Options(e)))?;
                run = Some((options, header.seed, header.catalogue));
            }
            Event::Run(_) => return Err(at(number)(LineFault::SecondRun)),
            // A credential is the host's to answer: no replay asks the mesh for one.
            Event::Started(started) if started.request.op != Op::Credential => {
                in_flight = Some((started.module, started.request));
            }
            Event::Reread(reread) => rereads.push(reread),
            Event::Interrupted(stop) => {
                interrupted = Some(Interruption { signal: stop.signal, during: in_flight.take() });
            }
            Event::Call(call) => {
                in_flight = None;
                check_call(&call).map_err(|e| at(number)(LineFault::Call(e)))?;
                let denied = matches!(&call.result, CallResult::Error(e) if e.kind == ErrorKind::Denied);
                if call.request.op != Op::Credential && !denied {
                    calls.push(call);
                }
            }
            _ => {}
        }
    }
    let Some((options, seed, catalogue)) = run else {
        return Err(RecordingError::NoRun { path: file() });
    };
    if calls.is_empty() {
        return Err(RecordingError::NoCalls { path: file() });
    }
    Ok(Recording { options, calls, seed, catalogue, interrupted, rereads })
}

/// Refuses a first line that is not a `run` event of this schema version, saying which it
/// is: a stream from before streams carried a version, or of another version.
fn check_header(line: &str) -> Result<(), LineFault> {
    let header: Header = serde_json::from_str(line).map_err(|e| LineFault::NotAnObject(Arc::new(e)))?;
    match header.event.as_deref() {
        Some("run") => {}
        Some(other) => return Err(LineFault::NotRunFirst(other.to_string())),
        None => return Err(LineFault::NoEvent),
    }
    match header.schema {
        None => Err(LineFault::NoSchema),
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(SCHEMA.into()) => Ok(()),
        Some(other) => Err(LineFault::OtherSchema(other.to_string())),
    }
}

/// Refuses a call whose arguments or answer do not fit its import, so that nothing is
/// misread as something else.
pub(super) fn check_call(call: &CallEvent) -> Result<(), CallFault> {
    let op = call.request.op;
    let arity = match op {
        Op::Carry => Some(2),
        Op::Credential | Op::Inspect | Op::Fetch => Some(1),
        Op::Tell => None,
    };
    if let Some(takes) = arity
        && call.request.args.len() != takes
    {
        return Err(CallFault::Arity { op, given: call.request.args.len(), takes });
    }
    // A tell that reached the mesh is a command of its vocabulary: words that are none were
    // never sent, and a replay could not tell them.
    let reached = !matches!(&call.result, CallResult::Error(e) if e.kind == ErrorKind::Denied);
    if op == Op::Tell
        && reached
        && let Err(why) = Command::parse(&call.request.args)
    {
        return Err(CallFault::NotACommand { words: call.request.words(), why });
    }
    if let CallResult::Ok(value) = &call.result
        && !value.fits(op)
    {
        return Err(CallFault::Answer { op, shape: shape(value) });
    }
    Ok(())
}

/// The article before an import's name in a message.
fn article(op: Op) -> &'static str {
    if op == Op::Inspect { "an" } else { "a" }
}

/// What kind of value a recorded answer is, for a message.
pub(super) fn shape(value: &CallValue) -> &'static str {
    match value {
        CallValue::Output(_) => "a tell's output",
        CallValue::Container(_) => "a container",
        CallValue::Response(_) => "a fetch's response",
        CallValue::Nothing => "null",
    }
}
