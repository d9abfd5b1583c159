//! The run's hold on the mesh's lock: taken before preflight and held to the run's end,
//! however it ends; refused, or waited for, when another holds it; released at the end, or,
//! for a run dropped half-way, by the guard as it is dropped. A check takes none, and only
//! says when one is held.

use std::sync::Arc;
use std::time::Duration;

use crate::events::{LockEvent, LockOutcome};
use crate::mesh::Mesh;
use crate::mesh::lock::{LockHolder, LockScope, Locking, Unlocked};
use crate::record::transcript::Entry;
use crate::run::{Held, Mode, Run};

/// How often a run that waits for the lock asks for it again, on the mesh's clock.
const LOCK_POLL: Duration = Duration::from_secs(1);

/// The mesh's lock as a run holds it. Dropped before [`Run::release_lock`] (the run's future
/// dropped by an embedder's cancel or an interrupt), it releases the lock there and then,
/// without an executor ([`Mesh::unlock_blocking`]), since nothing can await in a `Drop`.
pub(super) struct HeldLock {
    mesh: Arc<dyn Mesh>,
    holder: LockHolder,
    /// Whether it has been released, or there was nothing to release: a mesh with no lock
    /// ([`LockScope::None`]) is asked nothing at the end.
    released: bool,
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        if !self.released {
            // What cannot be released here is left, shown to the next run as left: the
            // operator breaks it. There is nowhere to say so from a drop.
            let _ = self.mesh.unlock_blocking(&self.holder.id);
        }
    }
}

/// This process's command line, the program named by its file name: who holds a lock, as a
/// refused run shows it, unless the embedder says otherwise.
pub(super) fn this_command() -> String {
    // Read once: a process's arguments do not change, and every run builder asks.
    static COMMAND: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    COMMAND
        .get_or_init(|| {
            let mut words = std::env::args();
            let program = words.next().unwrap_or_default();
            let program =
                std::path::Path::new(&program).file_name().map_or(program.clone(), |n| n.to_string_lossy().into());
            std::iter::once(program).chain(words).collect::<Vec<_>>().join(" ")
        })
        .clone()
}

impl Run<'_> {
    /// Takes the mesh's lock for a run that adopts, waiting for it up to the run's lock
    /// timeout when another holds it; the hold that stops the run when it cannot be had. A
    /// check takes no lock: it only says when one is held.
    pub(super) async fn take_lock(&self, mode: Mode) -> Result<Option<HeldLock>, (Held, String)> {
        if mode == Mode::Check {
            self.say_lock_held().await;
            return Ok(None);
        }
        let holder = LockHolder::this_process(&self.lock_command, &self.options.node);
        let deadline = self.mesh.now().saturating_add(self.lock_timeout);
        let mut waiting = false;
        loop {
            match self.mesh.lock(&holder).await {
                Ok(Locking::Taken { scope }) => {
                    self.record_lock(LockOutcome::Taken, Some(scope), &holder, None);
                    let released = scope == LockScope::None;
                    return Ok(Some(HeldLock { mesh: self.mesh.clone(), holder, released }));
                }
                Ok(Locking::Held(other)) if self.mesh.now() < deadline => {
                    if !waiting {
                        waiting = true;
                        let message = format!("waiting up to {}s for it", self.lock_timeout.as_secs());
                        self.record_lock(LockOutcome::Waiting, None, &other, Some(message));
                    }
                    self.mesh.sleep(LOCK_POLL.min(deadline.saturating_sub(self.mesh.now()))).await;
                }
                Ok(Locking::Held(other)) => {
                    self.record_lock(LockOutcome::Held, None, &other, None);
                    let waited = match waiting {
                        true => format!(" (waited {}s for it)", self.lock_timeout.as_secs()),
                        false => String::new(),
                    };
                    let because =
                        format!("the mesh is locked by another run{waited}: {}; nothing was done", other.described());
                    return Err((Held::Locked { holder: other }, because));
                }
                Err(error) => {
                    let why = format!("the mesh's lock could not be taken: {error}");
                    self.record_lock(LockOutcome::Failed, None, &holder, Some(why.clone()));
                    return Err((Held::LockFailed { why: why.clone() }, format!("{why}; nothing was done")));
                }
            }
        }
    }

    /// Releases the lock a run took, at its end; what the mesh answered is recorded, and a
    /// lock that could not be released is said to be left.
    pub(super) async fn release_lock(&self, lock: Option<HeldLock>) {
        let Some(mut lock) = lock.filter(|lock| !lock.released) else { return };
        let answer = self.mesh.unlock(&lock.holder.id).await;
        lock.released = true;
        let (outcome, message) = match answer {
            Ok(Unlocked::Released) => (LockOutcome::Released, None),
            Ok(Unlocked::NotHeld) => (LockOutcome::Failed, Some("it was no longer held: it had been broken".into())),
            Ok(Unlocked::HeldByAnother(other)) => (
                LockOutcome::Failed,
                Some(format!("it had been broken, and is held by another run now: {}", other.described())),
            ),
            Err(error) => (LockOutcome::Failed, Some(format!("the mesh did not release it ({error}): it is left"))),
        };
        self.record_lock(outcome, None, &lock.holder, message);
    }

    /// What a check says of the mesh's lock: who holds it, when someone does.
    async fn say_lock_held(&self) {
        if let Ok(Some(holder)) = self.mesh.lock_holder().await {
            self.record_lock(LockOutcome::Held, None, &holder, None);
        }
    }

    /// One lock event, in the record and the stream.
    fn record_lock(
        &self,
        outcome: LockOutcome,
        scope: Option<LockScope>,
        holder: &LockHolder,
        message: Option<String>,
    ) {
        let event = LockEvent { outcome, scope, holder: holder.clone(), process_gone: holder.process_gone(), message };
        self.transcript.record(Entry::Lock(event));
    }
}
