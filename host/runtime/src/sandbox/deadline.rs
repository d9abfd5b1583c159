//! The wall deadline of one export call (`check`, `adopt`): whatever a plugin waits on (a
//! host call, the contract's `clock.sleep`, a WASI sleep or poll), the call ends by it.
//!
//! Time is the mesh's ([`Mesh::now`]): virtual on the simulator, so a plugin asking to sleep
//! a year is stopped at once there, and real on a live mesh, where it is stopped when its
//! deadline comes. Real time bounds the call as well, should a virtual mesh ever wait for
//! real. A wait that would run past the deadline waits only up to it and then stops the
//! plugin: the waiting host call never returns to the guest, the export's future is
//! dropped, and the call ends with a message naming what was waited on. WASI sleeps and
//! polls have a bound of their own, in real time ([`crate::Limits::wasi_wait`]).
//!
//! Its timers are `futures-timer`'s, which need no timer driver from the executor: an
//! embedder's runtime may be current-thread, built without timers, or not tokio at all.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::mesh::Mesh;
use crate::model::stop::StopKind;

/// How often the watchdog looks at the mesh's clock while nothing else wakes it.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// One export call's deadline, shared by the host calls, the WASI clocks and the watchdog.
pub struct Deadline {
    mesh: Arc<dyn Mesh>,
    limit: Duration,
    /// Real time the call's WASI waits may take together.
    wasi_wait: Duration,
    state: Mutex<State>,
    stopped: Notify,
}

struct State {
    /// The mesh's time and the real time at which the current export began.
    began_mesh: Duration,
    began_real: Instant,
    /// What the plugin waits on right now, for the message if the deadline passes.
    waiting_on: Option<String>,
    /// Why the plugin was stopped, once it was.
    reason: Option<(StopKind, String)>,
    /// WASI waits in progress, since when, and the real time spent in them before: time
    /// the guest-time budget does not count.
    waits: u32,
    waits_began: Instant,
    waited: Duration,
}

impl Deadline {
    /// A deadline `limit` after now, on `mesh`'s clock, and WASI waits bounded by `wasi_wait`
    /// of real time in all.
    pub fn new(mesh: Arc<dyn Mesh>, limit: Duration, wasi_wait: Duration) -> Arc<Deadline> {
        let now = Instant::now();
        let began_mesh = mesh.now();
        Arc::new(Deadline {
            mesh,
            limit,
            wasi_wait,
            state: Mutex::new(State {
                began_mesh,
                began_real: now,
                waiting_on: None,
                reason: None,
                waits: 0,
                waits_began: now,
                waited: Duration::ZERO,
            }),
            stopped: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the deadline again: a new export call on the same instance has its own.
    pub fn restart(&self) {
        let began_mesh = self.mesh.now();
        let mut state = self.state();
        state.began_mesh = began_mesh;
        state.began_real = Instant::now();
    }

    /// The mesh's clock.
    pub fn mesh_now(&self) -> Duration {
        self.mesh.now()
    }

    /// Time left before the deadline on the mesh's clock (`Duration::MAX` when the limit is:
    /// no deadline).
    pub fn remaining(&self) -> Duration {
        if self.limit == Duration::MAX {
            return Duration::MAX;
        }
        let now = self.mesh.now();
        let state = self.state();
        self.limit.saturating_sub(now.saturating_sub(state.began_mesh))
    }

    /// Time left before the deadline on the real clock, which bounds a virtual mesh too.
    fn remaining_real(&self) -> Duration {
        if self.limit == Duration::MAX {
            return Duration::MAX;
        }
        self.limit.saturating_sub(self.state().began_real.elapsed())
    }

    /// Whether the deadline has passed, on the mesh's clock or the real one.
    pub fn passed(&self) -> bool {
        self.remaining().is_zero() || self.remaining_real().is_zero()
    }

    /// Real time spent in WASI waits so far.
    pub fn waited(&self) -> Duration {
        let state = self.state();
        if state.waits > 0 { state.waited + state.waits_began.elapsed() } else { state.waited }
    }

    /// Waits `duration` on the mesh's clock (virtual time advances at once on the
    /// simulator), naming the wait `what`. When `duration` runs past the deadline it waits
    /// only up to it, and then stops the plugin: it does not return.
    pub async fn wait(&self, what: &str, duration: Duration) {
        let remaining = self.remaining();
        self.state().waiting_on = Some(what.to_string());
        if duration <= remaining {
            self.mesh.sleep(duration).await;
            self.state().waiting_on = None;
            if !self.passed() {
                return;
            }
        } else {
            self.mesh.sleep(remaining).await;
        }
        match self.stop(what).await {}
    }

    /// Waits for a WASI timer as [`Deadline::wait`] does, and stops the plugin once its WASI
    /// waits have taken [`crate::Limits::wasi_wait`] of real time in this call, naming the wait.
    pub async fn wasi_wait(&self, what: &str, duration: Duration) {
        let left = self.wasi_wait.saturating_sub(self.waited());
        let waited = std::pin::pin!(self.wait(what, duration));
        if !finished_within(waited, left).await {
            self.mark(
                StopKind::Limit,
                format!(
                    "stopped: its WASI sleeps and polls took more than the {:?} of real time a call may spend in them \
                 (limits.wasi_wait), in {what}; a plugin waits with the contract's `clock.sleep`",
                    self.wasi_wait
                ),
            );
            std::future::pending::<()>().await;
        }
    }

    /// Names the host call in flight (or none), for the message if the deadline passes
    /// during it.
    pub fn in_call(&self, what: Option<String>) {
        self.state().waiting_on = what;
    }

    /// Marks `what` as waited on until the guard is dropped: a WASI wait, counted out of the
    /// guest's time and named if the watchdog stops the plugin during it.
    pub fn waiting(self: &Arc<Self>, what: &str) -> WaitGuard {
        let mut state = self.state();
        if state.waits == 0 {
            state.waits_began = Instant::now();
        }
        state.waits += 1;
        state.waiting_on = Some(what.to_string());
        WaitGuard { deadline: self.clone() }
    }

    /// Stops the plugin past its deadline while it waited on `what`: records why, wakes the
    /// watchdog and never returns, so the guest never runs again.
    pub async fn stop(&self, what: &str) -> Infallible {
        self.mark(
            StopKind::WallTime,
            format!("stopped: waited past its deadline of {:?} of wall time (limits.wall_time) in {what}", self.limit),
        );
        std::future::pending().await
    }

    fn mark(&self, kind: StopKind, reason: String) {
        let mut state = self.state();
        if state.reason.is_none() {
            state.reason = Some((kind, reason));
        }
        drop(state);
        self.stopped.notify_one();
    }

    /// Resolves when the plugin is to be stopped, with why: a wait stopped it, or the
    /// deadline passed while it waited on something else (or computed).
    pub async fn stopped(&self) -> (StopKind, String) {
        loop {
            let notified = self.stopped.notified();
            if let Some(reason) = self.state().reason.clone() {
                return reason;
            }
            let remaining = self.remaining().min(self.remaining_real());
            if remaining.is_zero() {
                let waiting_on = self.state().waiting_on.clone();
                match waiting_on {
                    Some(what) => {
                        self.mark(
                            StopKind::WallTime,
                            format!(
                                "stopped: waited past its deadline of {:?} of wall time (limits.wall_time) in {what}",
                                self.limit
                            ),
                        );
                    }
                    None => self.mark(
                        StopKind::WallTime,
                        format!("stopped: ran past its deadline of {:?} of wall time (limits.wall_time)", self.limit),
                    ),
                }
                continue;
            }
            finished_within(std::pin::pin!(notified), remaining.min(WATCH_EVERY)).await;
        }
    }
}

/// Waits for `future` up to `limit` of real time: true when it finished, false when the time
/// ran out first (the future is left unfinished).
async fn finished_within(future: std::pin::Pin<&mut impl Future<Output = ()>>, limit: Duration) -> bool {
    crate::wait::within(future, limit).await.is_some()
}

/// A WASI wait in progress; see [`Deadline::waiting`].
pub struct WaitGuard {
    deadline: Arc<Deadline>,
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        let mut state = self.deadline.state();
        state.waits = state.waits.saturating_sub(1);
        if state.waits == 0 {
            let spent = state.waits_began.elapsed();
            state.waited += spent;
            state.waiting_on = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Foundation;
    use crate::mesh::simulated::{SimSetup, SimulatedMesh};

    fn simulated() -> Arc<dyn Mesh> {
        let foundation = Foundation::parse(br#"{"resources": []}"#).unwrap();
        Arc::new(SimulatedMesh::new(SimSetup::new(foundation, "node-1")))
    }

    #[tokio::test]
    async fn a_wait_within_the_deadline_advances_virtual_time_and_returns() {
        let mesh = simulated();
        let deadline = Deadline::new(mesh.clone(), Duration::from_secs(60), Duration::MAX);
        deadline.wait("clock.sleep", Duration::from_secs(59)).await;
        assert_eq!(mesh.now(), Duration::from_secs(59));
        assert_eq!(deadline.remaining(), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_wait_past_the_deadline_stops_at_it_naming_the_wait() {
        let mesh = simulated();
        let deadline = Deadline::new(mesh.clone(), Duration::from_secs(60), Duration::MAX);
        let started = Instant::now();
        let why = tokio::select! {
            () = deadline.wait("`clock.sleep` of a year", Duration::from_secs(365 * 24 * 3600)) => unreachable!(),
            (kind, why) = deadline.stopped() => { assert_eq!(kind, StopKind::WallTime); why }
        };
        assert!(why.contains("stopped: waited past its deadline of 60s"), "{why}");
        assert!(why.contains("`clock.sleep` of a year"), "{why}");
        // Virtual time went to the deadline and no further; no real time was spent.
        assert_eq!(mesh.now(), Duration::from_secs(60));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_restart_gives_the_next_export_its_own_deadline() {
        let mesh = simulated();
        let deadline = Deadline::new(mesh.clone(), Duration::from_secs(60), Duration::MAX);
        deadline.wait("clock.sleep", Duration::from_secs(50)).await;
        deadline.restart();
        assert_eq!(deadline.remaining(), Duration::from_secs(60));
    }

    #[tokio::test]
    async fn the_watchdog_stops_a_plugin_waiting_in_real_time() {
        let mesh = simulated();
        let deadline = Deadline::new(mesh, Duration::from_millis(300), Duration::MAX);
        let _waiting = deadline.waiting("a WASI sleep");
        let started = Instant::now();
        let (kind, why) = deadline.stopped().await;
        assert_eq!(kind, StopKind::WallTime);
        assert!(why.contains("waited past its deadline") && why.contains("a WASI sleep"), "{why}");
        assert!(started.elapsed() >= Duration::from_millis(290) && started.elapsed() < Duration::from_secs(2));
    }
}
