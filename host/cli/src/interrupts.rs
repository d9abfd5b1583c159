//! SIGINT and SIGTERM during any command: answered by stopping cleanly (exit 130; a run's
//! record closed with an `interrupted` event, the toolchains a build started ended), and
//! within a second whatever holds the command up.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mesh_adopt_runtime::record::transcript::Transcript;

use crate::exit::ExitStatus;
use crate::output::Output;

/// How long a run has, once interrupted, to stop by itself before the program ends anyway.
const INTERRUPT_GRACE: Duration = Duration::from_millis(500);

/// The output and the record the watcher closes when it ends the program itself.
type Closing = Arc<OnceLock<(Arc<Output>, Arc<Transcript>)>>;

/// The signal that interrupted the command, once one has: what `main` answers with 130
/// whatever the command returned (a build whose toolchain the signal ended returns its
/// failure, which is not the command's).
static RECEIVED: OnceLock<&'static str> = OnceLock::new();

/// Whether the command's end by an interrupt has been said, so it is said once whoever
/// (`main` or the watcher) gets there first.
static SAID: AtomicBool = AtomicBool::new(false);

/// Whether the interrupt ended a toolchain the command had started, for the line saying so.
static ENDED_CHILDREN: AtomicBool = AtomicBool::new(false);

/// The process groups of the toolchains a command runs (a build's cargo, npm or pip), each
/// in a group of its own: ended, with everything they started, when the command is
/// interrupted, since a SIGTERM sent to this program alone would leave them running.
fn children() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    static CHILDREN: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());
    CHILDREN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends every toolchain's process group still running; true when there was one.
fn end_children() -> bool {
    let groups = std::mem::take(&mut *children());
    for &group in &groups {
        if let Ok(group) = i32::try_from(group) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), nix::sys::signal::Signal::SIGTERM);
        }
    }
    if !groups.is_empty() {
        ENDED_CHILDREN.store(true, Ordering::SeqCst);
    }
    !groups.is_empty()
}

/// Runs `command` to its end, its process group its own and known to the watcher, which ends
/// it when the command is interrupted; `output` says whether its stdout is captured.
pub fn run_child(command: &mut std::process::Command, output: bool) -> std::io::Result<std::process::Output> {
    use std::os::unix::process::CommandExt as _;
    if output {
        command.stdout(std::process::Stdio::piped());
    }
    let child = command.process_group(0).spawn()?;
    let _tracked = Tracked::of(&child);
    child.wait_with_output()
}

/// A toolchain's process group known to the watcher while this is held: made when it was
/// spawned in a group of its own, forgotten when it has ended.
pub struct Tracked(u32);

impl Tracked {
    /// Tracks `child`, spawned with `process_group(0)`; one spawned after an interrupt is
    /// ended at once.
    pub fn of(child: &std::process::Child) -> Tracked {
        children().insert(child.id());
        if RECEIVED.get().is_some() {
            end_children();
        }
        Tracked(child.id())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        children().remove(&self.0);
    }
}

/// The signal that interrupted the command, if one has.
pub fn received() -> Option<&'static str> {
    RECEIVED.get().copied()
}

/// Says on stderr that the command was interrupted, once, for a command with no record.
pub fn say_interrupted(signal: &str) {
    if SAID.swap(true, Ordering::SeqCst) {
        return;
    }
    let ended =
        if ENDED_CHILDREN.load(Ordering::SeqCst) { ": the toolchain commands it had started were ended" } else { "" };
    crate::errln!("\ninterrupted by {signal}{ended}");
}

/// SIGINT and SIGTERM, taken over as soon as a command starts so that from then on neither
/// kills the program half-way: a run answers them by stopping cleanly. They are watched from
/// a task of their own, which ends the toolchains a build started at once and ends the
/// program itself, record closed, should the command not have stopped within
/// [`INTERRUPT_GRACE`]: a plugin being compiled holds the run's thread, nothing can
/// interrupt a compile, and a command with no run (`test`, `build`) does not stop by itself.
pub struct Interrupts {
    /// The signal the watcher received, named, for the run to answer: behind a lock, so the
    /// session that holds these waits on it while its run borrows it too.
    received: tokio::sync::Mutex<tokio::sync::oneshot::Receiver<&'static str>>,
    /// Where the watcher closes the record when it ends the program itself.
    closing: Closing,
}

impl Interrupts {
    /// Takes SIGINT and SIGTERM over from their default (ending the program at once) and
    /// starts the watcher; on the command's async runtime, before anything is written.
    pub fn take_over() -> Interrupts {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt()).ok();
        let mut term = signal(SignalKind::terminate()).ok();
        let (sent, received) = tokio::sync::oneshot::channel();
        let closing: Closing = Arc::default();
        let slot = closing.clone();
        tokio::spawn(async move {
            let next = |s: &mut Option<tokio::signal::unix::Signal>| {
                let mut s = s.take();
                async move {
                    match &mut s {
                        Some(s) => s.recv().await,
                        None => std::future::pending().await,
                    }
                }
            };
            let signal = tokio::select! {
                _ = next(&mut int) => "SIGINT",
                _ = next(&mut term) => "SIGTERM",
            };
            let _ = RECEIVED.set(signal);
            let _ = sent.send(signal);
            end_children();
            tokio::time::sleep(INTERRUPT_GRACE).await;
            // Still here: the run did not get to stop itself. What it started goes first.
            mesh_adopt_live::end_every_command();
            let left = mesh_adopt_live::lock::release_every_lock();
            if let Some((output, transcript)) = slot.get() {
                transcript.locks_left_at_exit(&left);
                output.interrupted(signal, transcript);
            } else {
                // A command with no record (`test`, `build`, `cache optimise`): what it did is
                // on its lines.
                say_interrupted(signal);
            }
            crate::output::finish_stdout_within(INTERRUPT_GRACE);
            std::process::exit(ExitStatus::Interrupted.code().into());
        });
        Interrupts { received: tokio::sync::Mutex::new(received), closing }
    }

    /// Where the record is, once it is open, for the watcher to close should it end the
    /// program itself.
    pub fn close_with(&self, output: &Arc<Output>, transcript: &Arc<Transcript>) {
        let _ = self.closing.set((output.clone(), transcript.clone()));
    }

    /// Waits for SIGINT or SIGTERM, and names it.
    pub async fn next(&self) -> &'static str {
        match (&mut *self.received.lock().await).await {
            Ok(signal) => signal,
            Err(_) => std::future::pending().await,
        }
    }
}
