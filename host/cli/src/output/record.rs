//! The `--record` file, and the one way an event becomes a JSON line, which the record and
//! `--json` share so that the two streams are the same lines.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Result;

use mesh_adopt_runtime::events;

use super::redact::redacted;

/// The `--record` file: every event as a JSON line (`docs/events.md`), flushed as written so
/// a crash keeps what came before it.
pub struct Recording {
    /// Where it is, to name it in a warning.
    path: PathBuf,
    /// The file, written a whole line at a time by whichever thread has an event.
    file: Mutex<File>,
    /// Why the file could not be written, once it could not: said at the end, so the run
    /// goes on and the operator learns the record is incomplete.
    broken: Mutex<Option<String>>,
}

/// An event as one line of JSON.
pub fn line_of(event: &events::Event) -> String {
    // Events hold only strings, numbers, booleans, and lists and structs of them: nothing
    // that JSON cannot write (no map with keys that are not strings).
    serde_json::to_string(event).expect("an event always serialises as JSON")
}

impl Recording {
    /// Creates the file at `path`, refusing one that is not a regular file to write.
    pub fn create(path: &Path) -> Result<Recording> {
        let file = mesh_adopt_runtime::catalogue::create_output(path, "a recording")?;
        Ok(Recording { path: path.to_path_buf(), file: Mutex::new(file), broken: Mutex::new(None) })
    }

    /// Records one event.
    pub fn write(&self, event: &events::Event) {
        self.write_line(&line_of(event));
    }

    /// Records one line already made from an event, redacted as every line written is.
    pub fn write_line(&self, line: &str) {
        let line = redacted(line);
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let written = writeln!(file, "{line}").and_then(|()| file.flush());
        if let Err(e) = written {
            self.broken.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }
    }

    /// Says on stderr that the record is incomplete, and why, if a write failed.
    pub fn warn_if_broken(&self) {
        if let Some(why) = self.broken.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            crate::errln!("warning: the recording `{}` is incomplete: {why}", self.path.display());
        }
    }
}
