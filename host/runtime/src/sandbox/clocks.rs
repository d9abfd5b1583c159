//! The mesh's clock as the plugin's WASI clocks and timers: virtual on the simulator, real on
//! a live mesh, and every wait bounded by the call's deadline.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use wasmtime::component::Resource;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock};

use crate::mesh::Mesh;
use crate::sandbox::deadline::Deadline;
use crate::sandbox::state::RunState;

/// The mesh's clock as WASI's wall clock: the mesh's start date plus its time.
pub struct MeshWallClock {
    pub mesh: Arc<dyn Mesh>,
}

impl HostWallClock for MeshWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        let opened = self.mesh.opened_at().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        opened.saturating_add(self.mesh.now())
    }
}

/// The mesh's clock as WASI's monotonic clock, in nanoseconds since the mesh opened.
pub struct MeshMonotonicClock {
    pub mesh: Arc<dyn Mesh>,
}

/// A duration in nanoseconds, saturating.
fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl HostMonotonicClock for MeshMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }

    fn now(&self) -> u64 {
        nanos(self.mesh.now())
    }
}

/// A WASI timer: ready when the mesh's clock reaches `at`. Blocking on it waits on the
/// mesh's clock (at once on the simulator), never past the call's deadline.
struct Timer {
    deadline: Arc<Deadline>,
    at: Duration,
    what: String,
}

#[async_trait::async_trait]
impl Pollable for Timer {
    async fn ready(&mut self) {
        let now = self.deadline.mesh_now();
        if now >= self.at {
            return;
        }
        // Not due: a check that does not block sees that, and a poll of several pollables
        // sees any other that is ready, before the clock moves.
        tokio::task::yield_now().await;
        let now = self.deadline.mesh_now();
        if now >= self.at {
            return;
        }
        let _waiting = self.deadline.waiting(&self.what);
        self.deadline.wasi_wait(&self.what, self.at - now).await;
    }
}

impl RunState {
    fn timer(&mut self, at: Duration, what: String) -> wasmtime::Result<Resource<DynPollable>> {
        let deadline = self.deadline.clone();
        let timer = self.table().push(Timer { deadline, at, what })?;
        subscribe(self.table(), timer)
    }
}

impl monotonic_clock::Host for RunState {
    fn now(&mut self) -> wasmtime::Result<u64> {
        Ok(nanos(self.env.mesh.now()))
    }

    fn resolution(&mut self) -> wasmtime::Result<u64> {
        Ok(1)
    }

    fn subscribe_instant(&mut self, when: u64) -> wasmtime::Result<Resource<DynPollable>> {
        let at = Duration::from_nanos(when);
        let ahead = at.saturating_sub(self.env.mesh.now());
        let what =
            format!("a WASI sleep (`wasi:clocks/monotonic-clock.subscribe-instant` of an instant {ahead:?} ahead)");
        self.timer(at, what)
    }

    fn subscribe_duration(&mut self, duration: u64) -> wasmtime::Result<Resource<DynPollable>> {
        let what = format!(
            "a WASI sleep (`wasi:clocks/monotonic-clock.subscribe-duration` of {:?})",
            Duration::from_nanos(duration)
        );
        let at = self.env.mesh.now().saturating_add(Duration::from_nanos(duration));
        self.timer(at, what)
    }
}

impl wasmtime_wasi_io::IoView for RunState {
    fn table(&mut self) -> &mut wasmtime::component::ResourceTable {
        RunState::table(self)
    }
}
