//! A run's event stream, written as it happens: the `run` header, every call, line and plan,
//! each module's outcome once it is final, the summary, and the last line (`end` or
//! `interrupted`). The command line's `--json` and `--record` are sinks of it; an embedder
//! gives its own, or a [`RecordFile`] that `mesh-adopt replay` reads.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::catalogue::credentials::Credentials;
use crate::events::Event;

/// Receives a run's events, in order, as they happen. It is called from the run's task
/// and must not block for long: a slow sink holds the run up.
pub trait Sink: Send + Sync {
    /// One event.
    fn event(&self, event: &Event);
}

/// Any function of an event is a sink.
impl<F: Fn(&Event) + Send + Sync> Sink for F {
    fn event(&self, event: &Event) {
        self(event)
    }
}

/// Several sinks fed the same events, in order: a record file and a `--json` stream.
impl Sink for Vec<Arc<dyn Sink>> {
    fn event(&self, event: &Event) {
        for sink in self {
            sink.event(event);
        }
    }
}

/// A sink that gets every event with the run's credentials' values taken out, whatever text
/// of the run they reached (a header's node, a foundation's image in a prediction): values are
/// scrubbed where a plugin's text enters the run, this is the last guard of the stream.
pub(crate) struct Redacted {
    pub(crate) sink: Arc<dyn Sink>,
    pub(crate) credentials: Arc<Credentials>,
}

impl Sink for Redacted {
    fn event(&self, event: &Event) {
        let (text, shown) = self.credentials.redact(line_of(event));
        match shown.and_then(|_| serde_json::from_str::<Event>(&text).ok()) {
            Some(redacted) => self.sink.event(&redacted),
            None => self.sink.event(event),
        }
    }
}

/// An event as one line of JSON, as every stream writes it.
pub fn line_of(event: &Event) -> String {
    // Events hold only strings, numbers, booleans, and lists and structs of them: nothing
    // that JSON cannot write (no map with keys that are not strings).
    serde_json::to_string(event).expect("an event always serialises as JSON")
}

/// A record file: every event as a JSON line (`docs/events.md`), flushed as written so a
/// crash keeps what came before it. What `mesh-adopt replay` reads, from any directory: its
/// first line names the catalogue, foundation and credentials the run read.
///
/// A record of the project's example catalogue's `postgres` (its plugin placed by `just
/// build-plugins`), ended by its caller:
///
/// ```
/// # use std::{path::Path, sync::Arc};
/// # use mesh_adopt_runtime::*;
/// # use mesh_adopt_runtime::mesh::replay::read_recording;
/// # use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
/// # use mesh_adopt_runtime::record::stream::RecordFile;
/// # use mesh_adopt_runtime::options::parse_catalog_source;
/// # fn main() -> anyhow::Result<()> {
/// let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue");
/// let foundation = Foundation::load(&dir.join("foundation.json"))?;
/// let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
/// let kept = tempfile::tempdir()?;
/// let record = Arc::new(RecordFile::create(&kept.path().join("run.jsonl"))?);
/// let source = parse_catalog_source("https://git.mesh.local/catalogue.git@v3.2.0")?;
/// let run = Run::builder(PluginHost::new(Limits::default())?, Catalogue::at(&dir), foundation, mesh)
///     .credentials(Arc::new(Credentials::open(&dir.join("genesis/credentials"))))
///     .options(RunOptions { catalog_source: Some(source), ..RunOptions::default() })
///     .events(record.clone())
///     .build();
/// let report = run.run_blocking(&["postgres".to_string()], Mode::Adopt)?;
/// // The record's last line, which tells a finished run from one cut short: the caller's.
/// run.end(report.exit_code());
/// assert_eq!(record.broken(), None);
/// let recording = read_recording(record.path())?;
/// let named = recording.catalogue.expect("a catalogue read from its directory is named");
/// assert_eq!(Path::new(&named.dir), dir.canonicalize()?);
/// # Ok(())
/// # }
/// ```
pub struct RecordFile {
    path: PathBuf,
    file: Mutex<File>,
    broken: Mutex<Option<String>>,
}

impl RecordFile {
    /// Creates (or empties) the record at `path`, refusing anything but a regular file.
    pub fn create(path: &Path) -> Result<RecordFile, crate::files::FileError> {
        let file = crate::files::create_output(path, "a recording")?;
        Ok(RecordFile { path: path.to_path_buf(), file: Mutex::new(file), broken: Mutex::new(None) })
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the record is incomplete, when a write failed (a full disk): the run goes on, and
    /// its caller says so at the end.
    pub fn broken(&self) -> Option<String> {
        self.broken.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Writes one line as it is.
    pub fn write_line(&self, line: &str) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let written = writeln!(file, "{line}").and_then(|()| file.flush());
        if let Err(e) = written {
            self.broken.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }
    }
}

impl Sink for RecordFile {
    fn event(&self, event: &Event) {
        self.write_line(&line_of(event));
    }
}
