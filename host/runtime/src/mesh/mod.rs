//! The mesh a plugin acts on. Every import a plugin calls reaches the mesh through [`Mesh`],
//! so the same plugin runs against the simulator, a live control plane, or a recording.

use std::fmt;

pub use crate::catalogue::credentials::SecretValue;
/// The attribute a [`Mesh`] or a [`layer::Layer`] is implemented with (`#[async_trait]` on
/// the `impl`), re-exported so an embedder's mesh needs no dependency of its own for it.
pub use async_trait::async_trait;
/// The control-plane command a mesh is told: one value from the contract's boundary to the
/// mesh, whose words a backend makes only where it runs a process or writes a line.
pub use mesh_adopt_manifest::command::Command;

/// How long the default [`Mesh::view`] waits for each inspect before it says the mesh could
/// not be seen.
pub const VIEW_WAIT: Duration = Duration::from_secs(60);
use crate::effect::Violation;
use std::time::{Duration, SystemTime};

pub mod layer;
// The lock's words live in the model, below the event schema that records them; here is the
// path an embedder knows them by.
pub use crate::model::lock;
pub mod replay;
pub mod simulated;

/// What a plugin carries into the control plane.
#[derive(Debug, Clone)]
pub enum Payload {
    /// Bytes the plugin had, such as its manifest.
    Bytes(Vec<u8>),
    /// A credential the host read for it.
    Secret(SecretValue),
}

/// Why the mesh did not do what it was asked. The host maps these onto the contract's
/// `host-error`, adding `denied` for what the grants refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeshError {
    /// The mesh answered no; the text is its answer.
    Failed(String),
    /// No answer within the call's timeout.
    TimedOut(String),
    /// What was asked for cannot be reached.
    Unavailable(String),
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeshError::Failed(m) => write!(f, "failed: {m}"),
            MeshError::TimedOut(m) => write!(f, "timed out: {m}"),
            MeshError::Unavailable(m) => write!(f, "unavailable: {m}"),
        }
    }
}

/// What a node says of the images a run's modules run ([`Mesh::images`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeImages {
    /// The node has every image asked about (the simulator's node runs any image).
    Present,
    /// The node lacks these images, each once, in the order asked.
    Missing(Vec<String>),
    /// The mesh has no way to ask its node (a live mesh without an `images` command): the run
    /// goes on, and says that an image the node lacks is found only when the control plane
    /// builds the module that runs it, after the modules before it have had their effect.
    Unasked,
}

/// What a container on the node runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerState {
    /// The image it runs.
    pub image: String,
    /// Whether it is running now.
    pub running: bool,
}

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The body, as text.
    pub body: String,
}

/// What happened to a container on the node during a run, for the operator's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerChange {
    /// Already running with the same spec: left be.
    Kept {
        /// The container.
        name: String,
        /// The image it kept running.
        image: String,
    },
    /// Replaced with another spec.
    Recreated {
        /// The container.
        name: String,
        /// The image it ran before.
        from: String,
        /// The image it runs now.
        to: String,
    },
    /// Raised where there was none.
    Created {
        /// The container.
        name: String,
        /// The image it runs.
        image: String,
    },
    /// Taken away.
    Removed {
        /// The container.
        name: String,
    },
}

impl ContainerChange {
    /// The container the change happened to.
    pub fn name(&self) -> &str {
        match self {
            ContainerChange::Kept { name, .. }
            | ContainerChange::Recreated { name, .. }
            | ContainerChange::Created { name, .. }
            | ContainerChange::Removed { name } => name,
        }
    }
}

/// The mesh's own account of a run, where the backend can give one.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    /// Container changes, in the order the node made them.
    pub changes: Vec<ContainerChange>,
    /// Invariants found broken.
    pub violations: Vec<Violation>,
    /// Secret values the mesh holds, so the host can check none was shown anywhere.
    pub secret_values: Vec<Vec<u8>>,
    /// What every apply did to each container, with the module applied, in order: what the
    /// host holds to the rules and to its prediction.
    pub touches: Vec<crate::effect::Touch>,
    /// Secrets the node sealed with fresh bytes, as `(module, secret)`, in order.
    pub sealed: Vec<(String, String)>,
    /// Whether the backend saw what the node did (the simulator does); when not, nothing
    /// after a push was checked, and the summary says so.
    pub observed: bool,
}

/// Where a virtual mesh's wall clock starts, in seconds since the Unix epoch:
/// 2025-01-01T00:00:00Z.
pub const VIRTUAL_EPOCH_SECONDS: u64 = 1_735_689_600;

/// A backend that carries plugin calls to a mesh.
#[async_trait]
pub trait Mesh: Send + Sync {
    /// Names the backend in messages, so an error says which mesh answered.
    fn summary(&self) -> String;

    /// Puts a file into the control plane at `remote`.
    async fn carry(&self, name: &str, payload: Payload, remote: &str) -> Result<(), MeshError>;

    /// Runs one control-plane command within `timeout`, returning its output.
    async fn tell(&self, command: &Command, timeout: Duration) -> Result<String, MeshError>;

    /// What a container on `node` (the run's) runs, or `None` when there is no such container.
    async fn inspect(&self, node: &str, container: &str) -> Result<Option<ContainerState>, MeshError>;

    /// An HTTP GET.
    async fn fetch(&self, url: &str) -> Result<Response, MeshError>;

    /// Time since the mesh was opened: virtual in the simulator.
    fn now(&self) -> Duration;

    /// Waits: instantly advances a virtual clock, or really sleeps on a live mesh.
    async fn sleep(&self, duration: Duration);

    /// The wall-clock time at which [`Mesh::now`] was zero: what a plugin's WASI wall clock
    /// counts from. A fixed date by default, so a virtual mesh's runs repeat; a live mesh
    /// says when it was opened.
    fn opened_at(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(VIRTUAL_EPOCH_SECONDS)
    }

    /// The seed a plugin's WASI random numbers are drawn from, when the backend makes runs
    /// repeat (the simulator's `SimSetup::seed`); `None`: real randomness.
    fn seed(&self) -> Option<u64> {
        None
    }

    /// How long `node` takes, after a push, to apply it and have the containers it restarts
    /// answer again, when the backend knows (the simulator's apply delay plus its bus's
    /// recovery): preflight refuses a `--wait` shorter than this, since every wait on the
    /// node would run out. `None` by default: a live node's time is not known beforehand.
    fn restart_time(&self, _node: &str) -> Option<Duration> {
        None
    }

    /// Notes that `module`'s plugin drew WASI random numbers: a replay of a run whose draws
    /// were not recorded says so where the plugin then did otherwise than the record.
    fn random_drawn(&self, _module: &str) {}

    /// Waits, up to `within`, for what the node was pushed to land, so the host can check it
    /// against the prediction (the simulator advances its clock to the applies due by then);
    /// a backend that cannot tell does nothing.
    async fn land_pushes(&self, _within: Duration) {}

    /// Lets the node finish what it was pushed, where the backend can tell (the simulator
    /// advances its clock past pending applies); a live mesh has nothing to do here.
    async fn quiesce(&self) {}

    /// Whether this mesh can carry a run on `node` (the run's option): `Err` says why not,
    /// and the run is refused before anything reaches the mesh, as an option that cannot be
    /// used. By default every node is served.
    fn serves(&self, _node: &str) -> Result<(), String> {
        Ok(())
    }

    /// What `node` holds before a run, for the prediction of its pushes: the containers
    /// named (absent ones left out) and, where the backend can tell, the control plane's
    /// modules. By default each container is inspected, its volumes unknown; an inspect that
    /// errs, or does not answer within [`VIEW_WAIT`], leaves the mesh unseen (never read as a
    /// container that is not there), and the run stops before any effect.
    async fn view(&self, node: &str, containers: &[String]) -> crate::effect::MeshView {
        inspected_view(self, node, containers).await
    }

    /// Whether `node` has each of `images`, asked in preflight for every image the run's
    /// modules run, so that a node that cannot run one refuses the run before any effect
    /// instead of at that module's build, after the modules before it were adopted. Read-only.
    /// By default the mesh cannot ask ([`NodeImages::Unasked`]), and the run says so.
    async fn images(&self, _node: &str, _images: &[String]) -> Result<NodeImages, MeshError> {
        Ok(NodeImages::Unasked)
    }

    /// Reads the mesh again just before a push, the same reads [`Mesh::view`] made for the
    /// prediction, and holds what it finds to what the prediction says the mesh is then
    /// (`ahead`): anything else means another operator or run moved it since preflight, and
    /// the push is not told. By default `view` of `ahead.names`, compared with
    /// [`crate::effect::Reread::of`]; nothing is read when preflight did not look either. A replay
    /// answers with what the recorded run found.
    async fn reread(&self, ahead: &crate::effect::AheadOfPush) -> crate::effect::Reread {
        if !ahead.expected.looked {
            return crate::effect::Reread::default();
        }
        let found = self.view(&ahead.node, &ahead.names).await;
        crate::effect::Reread::of(ahead, &found)
    }

    /// The mesh's own account of what changed and which invariants broke; empty where the
    /// backend cannot observe that.
    fn audit(&self) -> Audit {
        Audit::default()
    }

    /// Takes the mesh's lock for `holder` before a run changes anything, so one run changes a
    /// mesh at a time: [`lock::Locking::Held`] names who holds it instead. A lock is never
    /// broken here, whoever left it. By default the mesh has no lock, and says so.
    async fn lock(&self, _holder: &lock::LockHolder) -> Result<lock::Locking, MeshError> {
        Ok(lock::Locking::Taken { scope: lock::LockScope::None })
    }

    /// Releases the lock held under `id`: a run's own at its end, or one a killed run left,
    /// broken by the operator. By default there is no lock, so none is held.
    async fn unlock(&self, _id: &str) -> Result<lock::Unlocked, MeshError> {
        Ok(lock::Unlocked::NotHeld)
    }

    /// Who holds the lock now, without taking it: what `check` says. By default nobody.
    async fn lock_holder(&self) -> Result<Option<(lock::LockHolder, lock::LockScope)>, MeshError> {
        Ok(None)
    }

    /// This run's lock, when the mesh's own check (its fence) found it broken: a control
    /// plane refused a command sent under it because the lock is no longer the mesh's. From
    /// then on the run sends nothing more. By default nothing is ever found broken.
    fn lock_broken(&self) -> Option<lock::LockBroken> {
        None
    }

    /// [`Mesh::unlock`] without an executor, for a run dropped before its end (what drops it
    /// cannot await): by default `unlock` driven to its end on the calling thread, which a
    /// mesh whose `unlock` needs the caller's executor overrides.
    fn unlock_blocking(&self, id: &str) -> Result<lock::Unlocked, MeshError> {
        crate::wait::block_on(self.unlock(id))
    }
}

/// The view [`Mesh::view`] makes by default: each container on `node` asked of `mesh`'s
/// `inspect`, its volumes unknown; an inspect that errs, or does not answer within
/// [`VIEW_WAIT`], leaves the mesh unseen. For a mesh (or a [`layer::Layer`]) that answers
/// `inspect` its own way and would have the view follow.
pub async fn inspected_view(mesh: &(impl Mesh + ?Sized), node: &str, containers: &[String]) -> crate::effect::MeshView {
    {
        let mut view = crate::effect::MeshView::looked();
        for name in containers {
            match crate::wait::within(mesh.inspect(node, name), VIEW_WAIT).await {
                Some(Ok(Some(state))) => {
                    let spec = crate::effect::ContainerSpec::new(state.image, None).with_running(Some(state.running));
                    view.containers.insert(name.clone(), spec);
                }
                Some(Ok(None)) => {}
                Some(Err(error)) => {
                    view.unseen = Some(format!("inspecting `{name}` failed: {error}"));
                    break;
                }
                None => {
                    view.unseen = Some(format!("inspecting `{name}` did not answer within {VIEW_WAIT:?}"));
                    break;
                }
            }
        }
        view
    }
}

impl From<&ContainerChange> for crate::events::Change {
    fn from(change: &ContainerChange) -> crate::events::Change {
        match change.clone() {
            ContainerChange::Kept { name, image } => crate::events::Change::Kept { container: name, image },
            ContainerChange::Recreated { name, from, to } => {
                crate::events::Change::Recreated { container: name, from, to }
            }
            ContainerChange::Created { name, image } => crate::events::Change::Created { container: name, image },
            ContainerChange::Removed { name } => crate::events::Change::Removed { container: name },
        }
    }
}
