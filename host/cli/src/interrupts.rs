//! SIGINT and SIGTERM during a command that runs plugins: answered by stopping cleanly
//! (exit 130, the record closed with an `interrupted` event), and within a second whatever
//! holds the run up.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mesh_adopt_runtime::transcript::Transcript;

use crate::exit::ExitStatus;
use crate::output::Output;

/// How long a run has, once interrupted, to stop by itself before the program ends anyway.
const INTERRUPT_GRACE: Duration = Duration::from_millis(500);

/// The output and the record the watcher closes when it ends the program itself.
type Closing = Arc<OnceLock<(Arc<Output>, Arc<Transcript>)>>;

/// SIGINT and SIGTERM, taken over as soon as a command starts so that from then on neither
/// kills the program half-way: a run answers them by stopping cleanly. They are watched from
/// a task of their own, which ends the program itself, record closed, should the run not
/// have stopped within [`INTERRUPT_GRACE`]: a plugin being compiled holds the run's thread,
/// and nothing can interrupt a compile.
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
            let _ = sent.send(signal);
            tokio::time::sleep(INTERRUPT_GRACE).await;
            // Still here: the run did not get to stop itself. What it started goes first.
            mesh_adopt_live::end_every_command();
            mesh_adopt_live::lock::release_every_lock();
            if let Some((output, transcript)) = slot.get() {
                output.interrupted(signal, transcript);
            } else {
                // A command with no record (`cache optimise`): what it did is on its lines.
                crate::errln!("\ninterrupted by {signal}");
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
