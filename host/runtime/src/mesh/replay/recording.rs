//! Reading a recording: a `--record` file (or a saved `--json` stdout, the same stream) read
//! through the stream's types, every line held to its event's shape, and what a replay needs of
//! it kept: the run's options, seed and catalogue, the calls that reached the mesh, the re-reads
//! before its pushes, and where it was interrupted.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

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

/// Reads a `--record` file through the stream's types (`docs/events.md`): its first line
/// must be a `run` event of this program's schema version, every line an event of it.
/// Keeps the run's options, seed and catalogue, the calls that reached the mesh (credentials,
/// answered by the host, and calls the host denied, never sent, are left out) and, when the
/// run was interrupted, where. Every problem names the file and the line.
pub fn read_recording(path: &Path) -> Result<Recording, crate::error::Error> {
    crate::error::at_boundary(crate::error::Error::Recording, || {
        let text = crate::files::read_bounded(path, RECORDING_BYTES)
            .map_err(anyhow::Error::from)
            .and_then(|bytes| Ok(String::from_utf8(bytes)?))
            .with_context(|| format!("failed to read the recording `{}`", path.display()))?;
        let at = |number: usize| format!("line {number} of the recording `{}`", path.display());
        let mut lines = text.lines().enumerate().map(|(i, line)| (i + 1, line)).filter(|(_, l)| !l.trim().is_empty());
        let Some((first, header)) = lines.next() else {
            bail!("the recording `{}` is empty: a recording starts with a `run` event", path.display());
        };
        check_header(header).with_context(|| at(first))?;
        let mut calls = Vec::new();
        let mut run = None;
        // The call that went out and has not returned, as the lines are read.
        let mut in_flight: Option<(String, Request)> = None;
        let mut interrupted = None;
        let mut rereads = Vec::new();
        for (number, line) in std::iter::once((first, header)).chain(lines) {
            let event: Event = serde_json::from_str(line)
                .with_context(|| format!("{} is not an event of schema {SCHEMA} (docs/events.md)", at(number)))?;
            match event {
                Event::Run(header) if run.is_none() => {
                    let options = RunOptions::try_from(header.options)
                        .with_context(|| format!("{} has run options that cannot be used", at(number)))?;
                    run = Some((options, header.seed, header.catalogue));
                }
                Event::Run(_) => bail!("{} is a second `run` event: a recording holds one run", at(number)),
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
                    check_call(&call).with_context(|| at(number))?;
                    let denied = matches!(&call.result, CallResult::Error(e) if e.kind == ErrorKind::Denied);
                    if call.request.op != Op::Credential && !denied {
                        calls.push(call);
                    }
                }
                _ => {}
            }
        }
        let Some((options, seed, catalogue)) = run else {
            bail!("the recording `{}` has no `run` event", path.display());
        };
        if calls.is_empty() {
            bail!("the recording `{}` holds no calls that reached a mesh", path.display());
        }
        Ok(Recording { options, calls, seed, catalogue, interrupted, rereads })
    })
}

/// Refuses a first line that is not a `run` event of this schema version, saying which it
/// is: a stream from before streams carried a version, or of another version.
fn check_header(line: &str) -> Result<()> {
    let header: Header = serde_json::from_str(line).context("is not a JSON object")?;
    match header.event.as_deref() {
        Some("run") => {}
        Some(other) => bail!("is a `{other}` event: a recording starts with its `run` event"),
        None => bail!("has no `event` field: a recording starts with its `run` event"),
    }
    match header.schema {
        None => bail!(
            "has no `schema` version: the recording was made before recordings carried one, and this \
             mesh-adopt reads only schema {SCHEMA} (docs/events.md); record the run again"
        ),
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(SCHEMA.into()) => Ok(()),
        Some(other) => bail!(
            "is in schema {other}: this mesh-adopt reads only schema {SCHEMA} (docs/events.md); replay it with \
             the mesh-adopt that made it"
        ),
    }
}

/// Refuses a call whose arguments or answer do not fit its import, so that nothing is
/// misread as something else.
pub(super) fn check_call(call: &CallEvent) -> Result<()> {
    let op = call.request.op;
    let arity = match op {
        Op::Carry => Some(2),
        Op::Credential | Op::Inspect | Op::Fetch => Some(1),
        Op::Tell => None,
    };
    let name = op.as_str();
    if let Some(arity) = arity
        && call.request.args.len() != arity
    {
        bail!("has {} `{name}` call with {} args; `{name}` takes {arity}", article(op), call.request.args.len());
    }
    // A tell that reached the mesh is a command of its vocabulary: words that are none were
    // never sent, and a replay could not tell them.
    let reached = !matches!(&call.result, CallResult::Error(e) if e.kind == ErrorKind::Denied);
    if op == Op::Tell
        && reached
        && let Err(why) = Command::parse(&call.request.args)
    {
        bail!("has a `tell` call `{}` that reached the mesh and is no command of it: {why}", call.request.words());
    }
    if let CallResult::Ok(value) = &call.result
        && !value.fits(op)
    {
        bail!("has {} `{name}` call answered with {}, which `{name}` never returns", article(op), shape(value));
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
