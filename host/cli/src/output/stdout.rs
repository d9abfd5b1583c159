//! Where every line the program writes goes out: stdout through a writer thread of its own,
//! stderr directly, each line through the last redaction first. A stream that cannot be
//! written never stops the program: a run that got under way goes on to its end.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use super::redact::redacted;

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

/// The channel to stdout's writer thread and the thread itself: taken (and so closed) when
/// stdout is finished, after which [`emit`] writes directly.
type StdoutWriter = Mutex<Option<(std::sync::mpsc::Sender<String>, std::thread::JoinHandle<()>)>>;

/// stdout's writer, started by the first line: one for the program, so lines keep their order.
static STDOUT_WRITER: std::sync::OnceLock<StdoutWriter> = std::sync::OnceLock::new();

/// Writes a line to stderr; a stderr that cannot be written (full, closed) is no reason to
/// stop the program.
pub fn emit_err(line: &str) {
    let line = redacted(line);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
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

/// Says once on stderr that stdout cannot be written, unless it is only a reader that left
/// (a closed pipe, as `| head -1` makes), which is no news.
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
