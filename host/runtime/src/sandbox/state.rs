//! A plugin's state during one export call: the run it belongs to, the sandbox's WASI
//! context, and the counters the host's limits are kept with. The sandbox's linker and the
//! host's imports both act on it, and the runtime makes one per call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::catalogue::credentials::Credentials;
use crate::mesh::Mesh;
use crate::model::Export;
use crate::record::transcript::Transcript;
use crate::sandbox::deadline::Deadline;
use crate::sandbox::grants::Permissions;
use crate::sandbox::limits::Limits;

/// What a plugin run acts on and reports to.
#[derive(Clone)]
pub struct RunEnv {
    /// The module the plugin adopts; prefixes its say lines and records.
    pub module: String,
    /// The mesh its calls reach.
    pub mesh: Arc<dyn Mesh>,
    /// The credentials the host reads for it, and scrubs from its text.
    pub credentials: Arc<Credentials>,
    /// Where its calls and lines are recorded.
    pub transcript: Arc<Transcript>,
    /// What the plugin may do.
    pub permissions: Permissions,
    /// Whether the executor has a turn at each of its host calls (`RunBuilder::turns_at_calls`).
    pub turns_at_calls: bool,
}

/// The store's caps on memory, tables and instances, noting when a memory was refused
/// growth: the stop that follows is then a memory stop, known by what happened rather than
/// read back out of the engine's words.
pub(crate) struct Caps {
    pub(crate) limits: StoreLimits,
    pub(crate) memory_refused: bool,
}

impl wasmtime::ResourceLimiter for Caps {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum);
        if !matches!(allowed, Ok(true)) {
            self.memory_refused = true;
        }
        allowed
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.memory_refused = true;
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

/// A plugin's per-call state: the sandbox's WASI context and the run it belongs to.
pub struct RunState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) store_limits: Caps,
    pub(crate) env: RunEnv,
    pub(crate) phase: Export,
    pub(crate) limits: Limits,
    pub(crate) said: usize,
    pub(crate) started: Instant,
    pub(crate) in_host: Duration,
    /// The last host call, for the report if the plugin is stopped.
    pub(crate) last_call: String,
    /// The timeout of the call about to start, for its `Started` event.
    pub(crate) pending_timeout: Option<Duration>,
    /// The current export call's wall deadline, on the mesh's clock.
    pub(crate) deadline: Arc<Deadline>,
    /// The plan `adopt` is held to, once `check` made it.
    pub(crate) plan: Option<PlanCursor>,
    /// Host calls made so far in this export call.
    pub(crate) calls: usize,
    /// Where this plugin carried secrets in this call: the only places it may accept from.
    pub(crate) carried_secrets: std::collections::BTreeSet<String>,
    /// Where this plugin carried its manifest in this call: the only places it may register.
    pub(crate) carried_manifests: std::collections::BTreeSet<String>,
    /// A cap the plugin reached: every call from then on is denied, and the sandbox stops
    /// it at its next step.
    pub(crate) cap_reached: Option<crate::sandbox::denial::Cap>,
}

/// A plan's commands and how many of them `adopt` has told so far.
pub(crate) struct PlanCursor {
    pub(crate) commands: Vec<crate::model::PluginCommand>,
    pub(crate) told: usize,
    /// What the run does just before each of the plan's pushes goes out, if anything.
    pub(crate) before_push: Option<Arc<dyn BeforePush>>,
}

/// What a run does just before a plugin's `tell push` goes to the control plane: the last
/// moment the host can still keep a push from a mesh that moved since preflight.
#[async_trait::async_trait]
pub(crate) trait BeforePush: Send + Sync {
    /// `Err(found)`: the mesh read again was not as predicted (or could not be read), the push
    /// is not told, and the plugin's tell is denied saying so. `command` is the push's place in
    /// `module`'s plan.
    async fn before_push(&self, module: &str, command: usize) -> Result<(), crate::effect::Reread>;
}

impl PlanCursor {
    /// The commands never told, in order.
    pub(crate) fn left(mut self) -> Vec<crate::model::PluginCommand> {
        self.commands.split_off(self.told)
    }
}

impl WasiView for RunState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl RunState {
    /// Starts the budgets of an export call afresh: its compute time, its wall time and its
    /// host calls are each export's own, even when `adopt` follows `check` on one instance
    /// (what the limits say: per export call). Lines said are counted per run.
    pub(crate) fn begin_export(&mut self, phase: Export) {
        self.phase = phase;
        self.started = Instant::now();
        self.in_host = Duration::ZERO;
        self.calls = 0;
        self.deadline.restart();
    }

    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }
}
