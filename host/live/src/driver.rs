//! The thread the live mesh starts and watches its processes from, with a runtime of its own.
//!
//! Two reasons for one thread that lives as long as the program. Linux delivers a child's
//! "parent died" signal (`PR_SET_PDEATHSIG`) when the *thread* that spawned it ends, not the
//! process: a control-plane command spawned from a worker thread an executor later retires
//! would be killed half-way, and one spawned from a thread that outlives nothing would
//! outlive a `kill -9` of the host — a killed run's `push` landing in the middle of the next.
//! And the processes, their timeouts and the blocking HTTP fetches then need nothing of the
//! embedder's executor: a current-thread runtime, one without timers or IO, or none at all
//! drives a live mesh as well as the command line's.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The driver's runtime, started on first use.
fn handle() -> &'static Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let (sent, handle) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("mesh-adopt-live".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime with IO and timers builds on Linux");
                sent.send(runtime.handle().clone()).expect("the caller waits for the handle");
                // The thread never ends, so neither does the runtime, nor the children's
                // parent thread: they die with the program.
                runtime.block_on(std::future::pending::<()>());
            })
            .expect("the live mesh's thread starts");
        handle.recv().expect("the live mesh's thread sends its runtime's handle")
    })
}

/// Runs `work` on the driver's thread and waits for it from any executor. Dropping the
/// returned future stops the work there (what it holds is dropped: a process group killer,
/// a child killed on drop), as dropping the work itself would.
pub async fn on_driver<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> Result<T, DriverError> {
    Aborting(handle().spawn(work)).await
}

/// Runs blocking `work` on the driver's pool of blocking threads.
pub async fn blocking_on_driver<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, DriverError> {
    Aborting(handle().spawn_blocking(work)).await
}

/// Why work given to the driver's thread did not come back with its answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// The work panicked there: a fault of this program's.
    #[error("its work on the live mesh's thread panicked: {0}")]
    Panicked(String),
    /// The work was cancelled there before it ended (the program is ending).
    #[error("its work on the live mesh's thread was cancelled")]
    Cancelled,
}

/// A task aborted when the future waiting on it is dropped.
struct Aborting<T>(JoinHandle<T>);

impl<T> Future for Aborting<T> {
    type Output = Result<T, DriverError>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|done| {
            done.map_err(|e| match e.try_into_panic() {
                Ok(panic) => DriverError::Panicked(
                    panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default(),
                ),
                Err(_) => DriverError::Cancelled,
            })
        })
    }
}

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Makes a command about to be spawned die with this program, however it ends: `SIGKILL`
/// when the driver's thread, which never ends on its own, goes with the process. A program
/// that ended between the fork and this is seen, and the command does not start.
pub fn dies_with_us(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: between fork and exec only async-signal-safe calls are made: prctl and getppid,
    // which neither allocate nor take locks.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            if nix::unistd::getppid().as_raw() as u32 != parent {
                return Err(std::io::Error::other("mesh-adopt ended before the command started"));
            }
            Ok(())
        });
    }
}
