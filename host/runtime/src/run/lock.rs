//! The run's hold on the mesh's lock: taken before preflight and held to the run's end,
//! however it ends; refused, or waited for, when another holds it (never past the moment its
//! holder is known gone); released at the end only once the control plane runs nothing the
//! run sent (waited for up to `--wait`), or, for a run dropped half-way, by the guard as it is
//! dropped. A release that fails leaves the lock, and the run says so and fails. A check
//! takes none, and says who holds it, or why that could not be read.

use std::sync::Arc;
use std::time::Duration;

use crate::events::{Landing, LockEvent, LockOutcome};
use crate::mesh::Mesh;
use crate::mesh::lock::{LeftBecause, LockBroken, LockHolder, LockLeft, LockScope, Locking, Unlocked};
use crate::record::transcript::{Entry, Transcript};
use crate::remedy::Remedy;
use crate::run::{Held, Mode, Run};

/// How often a run that waits for the lock, or for its release, asks again, on the mesh's
/// clock.
const LOCK_POLL: Duration = Duration::from_secs(1);

/// The mesh's lock as a run holds it. Dropped before [`Run::release_lock`] (the run's future
/// dropped by an embedder's cancel or an interrupt), it releases the lock there and then,
/// without an executor ([`Mesh::unlock_blocking`]), since nothing can await in a `Drop`, and
/// notes in the record what the release said of the call under way.
pub(super) struct HeldLock {
    mesh: Arc<dyn Mesh>,
    holder: LockHolder,
    /// What the lock keeps out: a fenced one ([`LockScope::Mesh`]) says, as it is released,
    /// whether the control plane still runs what the run sent.
    scope: LockScope,
    transcript: Arc<Transcript>,
    /// Whether it has been released, or there was nothing to release: a mesh with no lock
    /// ([`LockScope::None`]) is asked nothing at the end.
    released: bool,
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        if !self.released {
            // What cannot be released here is left, shown to the next run as left: the
            // operator breaks it. There is nowhere to say so from a drop but the record's
            // last event, which names the call under way and what became of it, and the lock
            // when it is left.
            let answer = self.mesh.unlock_blocking(&self.holder.id);
            self.transcript.let_go(landing(self.scope, &answer));
            if answer.is_err() {
                self.transcript.lock_left(&self.holder.id);
            }
        }
    }
}

/// A lock being asked for. The mesh may take it and the run be stopped before its answer comes
/// back (an interrupt while the `lock` command runs): dropped unanswered, it lets the lock go
/// once more under its id, and names it as left in the record's last event when that fails.
struct Asking {
    mesh: Arc<dyn Mesh>,
    id: String,
    transcript: Arc<Transcript>,
    answered: bool,
}

impl Drop for Asking {
    fn drop(&mut self) {
        if !self.answered && self.mesh.unlock_blocking(&self.id).is_err() {
            self.transcript.lock_left(&self.id);
        }
    }
}

/// What a lock's release as the run stopped says of the call under way: only a fenced lock's
/// control plane promises to let the lock go once nothing sent under it runs.
fn landing(scope: LockScope, answer: &Result<Unlocked, crate::mesh::MeshError>) -> Landing {
    match (scope, answer) {
        (LockScope::Mesh, Ok(Unlocked::Releasing { .. })) => Landing::StillRunning,
        (LockScope::Mesh, Ok(_)) => Landing::Ended,
        _ => Landing::Unknown,
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
    /// timeout when another holds it, but no longer once its holder is known gone (a lock a
    /// killed run left is freed only by the operator); the hold that stops the run when it
    /// cannot be had. A check takes no lock: it only says who holds one.
    pub(super) async fn take_lock(&self, mode: Mode) -> Result<Option<HeldLock>, (Held, String)> {
        if mode == Mode::Check {
            self.say_lock_held().await;
            return Ok(None);
        }
        // Written wherever the holder is: this machine's lock file, the mesh's lock, every
        // other operator's check. No secret goes there, whatever the command line held.
        let command = self.credentials.redact(self.lock_command.clone()).0;
        let holder = LockHolder::this_process(&command, &self.options.node);
        // Another run holds the lock in real time, whatever this mesh's clock (a simulator's
        // runs in virtual time): the wait is for the operator's seconds.
        let deadline = std::time::Instant::now() + self.lock_timeout;
        let mut waiting = false;
        // Once, however often a waiting run asks again.
        self.reading(crate::events::MeshRead::Lock);
        loop {
            let mut asking = Asking {
                mesh: self.mesh.clone(),
                id: holder.id.clone(),
                transcript: self.transcript.clone(),
                answered: false,
            };
            let answer = self.mesh.lock(&holder).await;
            asking.answered = true;
            let (other, lock, releasing) = match answer {
                Ok(Locking::Taken { scope }) => {
                    self.record_lock(LockOutcome::Taken, Some(scope), Some(&holder), None, None);
                    let released = scope == LockScope::None;
                    let transcript = self.transcript.clone();
                    return Ok(Some(HeldLock { mesh: self.mesh.clone(), holder, scope, transcript, released }));
                }
                Ok(Locking::Held(other, lock)) => (other, lock, false),
                Ok(Locking::Releasing(other, lock)) => (other, lock, true),
                Ok(Locking::Damaged(damaged)) => {
                    let why =
                        format!("this machine's lock `{}` is damaged: {}", damaged.file.display(), damaged.damage);
                    let remedy = damaged.remedy();
                    self.record_lock(LockOutcome::Unreadable, None, None, Some(why.clone()), Some(remedy.clone()));
                    let because = format!("{why}, so no run can tell who holds the lock; {remedy}; nothing was done");
                    return Err((Held::LockDamaged(damaged), because));
                }
                Err(error) => {
                    // The mesh may have taken the lock before it erred or stopped answering (a
                    // `lock` command that timed out after taking it): it is let go under its id,
                    // and named as left when that fails too.
                    let left = self.mesh.unlock(&holder.id).await.is_err().then(|| holder.id.clone());
                    let mut why = format!("the mesh's lock could not be taken: {error}");
                    if let Some(id) = &left {
                        why.push_str(&format!(
                            "; it may have been taken under id `{id}`, and letting it go failed too"
                        ));
                    }
                    let remedy = left.as_ref().map(|id| Remedy::Unlock { id: id.clone(), force: false });
                    self.record_lock(LockOutcome::Failed, None, Some(&holder), Some(why.clone()), remedy);
                    return Err((Held::LockFailed { why: why.clone(), left }, format!("{why}; nothing was done")));
                }
            };
            // A lock whose holder is gone is freed by the operator alone: waiting for it would
            // only use up the timeout. One being released goes soon, whoever held it.
            let gone = !releasing && other.process_gone();
            if std::time::Instant::now() < deadline && !gone {
                if !waiting {
                    waiting = true;
                    let message = match releasing {
                        true => format!(
                            "its release is under way, once the control plane ends what it sent; waiting up to {}s \
                             for it",
                            self.lock_timeout.as_secs()
                        ),
                        false => format!("waiting up to {}s for it", self.lock_timeout.as_secs()),
                    };
                    self.record_lock(LockOutcome::Waiting, Some(lock), Some(&other), Some(message), None);
                }
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                futures_timer::Delay::new(LOCK_POLL.min(left)).await;
                continue;
            }
            let (message, remedy) = match (gone, waiting, releasing) {
                (true, true, _) => (
                    Some("its holder's process is gone, so waiting would not free it: the wait stopped".to_string()),
                    Some(Remedy::Unlock { id: other.id.clone(), force: false }),
                ),
                (true, false, _) => (None, Some(Remedy::Unlock { id: other.id.clone(), force: false })),
                (false, _, true) => (
                    Some("its release is under way: the control plane lets it go once what it sent has ended".into()),
                    Some(Remedy::WaitForLock { id: other.id.clone() }),
                ),
                (false, _, false) => (None, Some(Remedy::WaitForLock { id: other.id.clone() })),
            };
            self.record_lock(LockOutcome::Held, Some(lock), Some(&other), message.clone(), remedy);
            let waited = match (waiting, gone) {
                (true, true) => " (it stopped waiting: the holder's process is gone)".to_string(),
                (true, false) => format!(" (waited {}s for it)", self.lock_timeout.as_secs()),
                (false, _) => String::new(),
            };
            let releasing = if releasing { "; its release is under way" } else { "" };
            let because = format!(
                "the mesh is locked by another run{waited}: {}{releasing}; nothing was done",
                other.described()
            );
            return Err((Held::Locked { holder: other }, because));
        }
    }

    /// Releases the lock a run took, at its end, waiting (up to the run's `--wait`) while the
    /// control plane still runs a command the run sent; what the mesh answered is recorded.
    /// A lock that could not be released is left, and returned: the run then fails, naming it.
    pub(super) async fn release_lock(&self, lock: Option<HeldLock>) -> Option<LockLeft> {
        let mut lock = lock.filter(|lock| !lock.released)?;
        let left = self.release(&lock.holder).await;
        // Released, or left and said so. A run dropped before this is let go by the guard.
        lock.released = true;
        left
    }

    /// [`Run::release_lock`]'s asking and waiting, for the lock `holder` holds.
    async fn release(&self, holder: &LockHolder) -> Option<LockLeft> {
        let deadline = self.mesh.now().saturating_add(self.options.wait);
        let mut waited = false;
        // Once, however often the release is asked again while the control plane ends what it ran.
        self.reading(crate::events::MeshRead::Unlock);
        loop {
            let answer = self.mesh.unlock(&holder.id).await;
            let broken = |now: String| Some(format!("this run's lock `{}` had been broken: {now}", holder.id));
            let message = match answer {
                Ok(Unlocked::Released) => None,
                // Asked before, the control plane let it go itself once what ran had ended.
                Ok(Unlocked::NotHeld | Unlocked::HeldByAnother(_)) if waited => None,
                Ok(Unlocked::NotHeld) => broken("no lock was held at the run's end".into()),
                Ok(Unlocked::HeldByAnother(other)) => {
                    broken(format!("the mesh's lock is held by another run now: {}", other.described()))
                }
                Ok(Unlocked::Releasing { running }) if self.mesh.now() < deadline => {
                    if !waited {
                        waited = true;
                        let message = format!(
                            "the control plane still runs `{running}`, which this run sent: the lock goes once it \
                             ends; waiting up to {}s for it",
                            self.options.wait.as_secs()
                        );
                        self.record_lock(LockOutcome::Releasing, None, Some(holder), Some(message), None);
                    }
                    self.mesh.sleep(LOCK_POLL.min(deadline.saturating_sub(self.mesh.now()))).await;
                    continue;
                }
                Ok(Unlocked::Releasing { running }) => {
                    let left = LockLeft {
                        id: holder.id.clone(),
                        why: LeftBecause::StillRunning { running: running.clone(), waited: self.options.wait },
                    };
                    let message = format!(
                        "it is left: the control plane still ran `{running}`, which this run sent, after {}s; it \
                         lets the lock go once that ends",
                        self.options.wait.as_secs()
                    );
                    self.record_lock(LockOutcome::Failed, None, Some(holder), Some(message), Some(left.remedy()));
                    return Some(left);
                }
                Err(error) => {
                    let error = error.to_string();
                    let left =
                        LockLeft { id: holder.id.clone(), why: LeftBecause::ReleaseFailed { error: error.clone() } };
                    let message = format!("the mesh did not release it ({error}): it is left");
                    self.record_lock(LockOutcome::Failed, None, Some(holder), Some(message), Some(left.remedy()));
                    return Some(left);
                }
            };
            match message {
                None => self.record_lock(LockOutcome::Released, None, Some(holder), None, None),
                Some(message) => self.record_lock(LockOutcome::Failed, None, Some(holder), Some(message), None),
            }
            return None;
        }
    }

    /// Says, once, that the mesh's own check found this run's lock broken: who holds it now
    /// (where the control plane said), which command it refused.
    pub(super) fn say_lock_broken(&self, broken: &LockBroken) {
        let message = format!(
            "this run's lock `{}` was broken under it: the control plane refused `{}`, and nothing more was sent",
            broken.id, broken.refused
        );
        self.record_lock(LockOutcome::Broken, None, broken.by.as_ref(), Some(message), Some(broken.remedy()));
    }

    /// What a check says of the mesh's lock: who holds it, when someone does, or why that
    /// could not be read.
    async fn say_lock_held(&self) {
        self.reading(crate::events::MeshRead::LockHolder);
        match self.mesh.lock_holder().await {
            Ok(Some((holder, lock))) => {
                let remedy = holder.process_gone().then(|| Remedy::Unlock { id: holder.id.clone(), force: false });
                self.record_lock(LockOutcome::Held, Some(lock), Some(&holder), None, remedy);
            }
            Ok(None) => {}
            Err(error) => {
                let why = format!("who holds the lock could not be read: {error}");
                self.record_lock(LockOutcome::Unreadable, None, None, Some(why), None);
            }
        }
    }

    /// One lock event, in the record and the stream.
    fn record_lock(
        &self,
        outcome: LockOutcome,
        scope: Option<LockScope>,
        holder: Option<&LockHolder>,
        message: Option<String>,
        remedy: Option<Remedy>,
    ) {
        let process_gone = holder.is_some_and(LockHolder::process_gone);
        let event = LockEvent { outcome, scope, holder: holder.cloned(), process_gone, message, remedy };
        self.transcript.record(Entry::Lock(event));
    }
}
