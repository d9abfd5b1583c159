//! The fence: while a run holds the mesh's lock, every command it sends carries that lock's id
//! in [`LOCK_ID_VAR`], and a control plane that fences refuses a changing command whose lock is
//! not the one it holds, with [`FENCED`]. That refusal is the only word a run gets that its
//! lock was broken under it (another host's `mesh-adopt unlock`): the lock is marked broken,
//! and nothing more is sent.

use std::sync::Mutex;

use mesh_adopt_runtime::mesh::MeshError;
use mesh_adopt_runtime::mesh::lock::{LockBroken, LockHolder};

/// The environment variable every command a run sends while it holds the mesh's lock carries
/// the lock's id in. A command sent while no lock is held has none, even one this program's
/// own environment holds.
pub const LOCK_ID_VAR: &str = "MESH_ADOPT_LOCK_ID";

/// The exit status of a changing command a fencing control plane refused: the lock its
/// [`LOCK_ID_VAR`] names is not the mesh's (it was broken, and maybe taken by another), or it
/// names none while the mesh's lock is held. The holder's line, when one holds it, is on its
/// standard output.
pub const FENCED: i32 = 77;

/// The mesh's lock as the commands of one live mesh carry it.
#[derive(Debug, Default)]
pub(crate) struct Fence {
    state: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    /// The id of the mesh's lock held now.
    id: Option<String>,
    /// The lock found broken, once a command was refused.
    broken: Option<LockBroken>,
}

impl Fence {
    fn state(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on every command carries `id`: the mesh's lock was taken under it.
    pub(crate) fn hold(&self, id: &str) {
        *self.state() = Held { id: Some(id.to_string()), broken: None };
    }

    /// The lock held under `id` is let go: commands carry no id from now on.
    pub(crate) fn let_go(&self, id: &str) {
        let mut state = self.state();
        if state.id.as_deref() == Some(id) {
            state.id = None;
        }
    }

    /// The id every command carries now, if the mesh's lock is held.
    pub(crate) fn id(&self) -> Option<String> {
        self.state().id.clone()
    }

    /// The lock, once found broken.
    pub(crate) fn broken(&self) -> Option<LockBroken> {
        self.state().broken.clone()
    }

    /// Before a changing command goes out: refused, sending nothing, once the lock is broken.
    pub(crate) fn before(&self, what: &str) -> Result<(), MeshError> {
        match &self.state().broken {
            Some(broken) => Err(MeshError::Failed(format!(
                "`{what}` was not sent: this run's lock `{}` was broken under it (the control plane refused `{}`)",
                broken.id, broken.refused
            ))),
            None => Ok(()),
        }
    }

    /// A command `what` the control plane refused with [`FENCED`], printing `stdout`: while a
    /// lock is held, the lock is broken, and the error says so and who holds it now; `None`
    /// when no lock is held (the status is then no fence's, and the command's failure stands).
    pub(crate) fn refused(&self, what: &str, stdout: &str) -> Option<MeshError> {
        let mut state = self.state();
        let id = state.id.clone()?;
        let by = LockHolder::from_line(stdout).ok();
        let holder =
            by.as_ref().map(|by| format!(", and the mesh's lock is held by {}", by.described())).unwrap_or_default();
        let error = MeshError::Failed(format!(
            "the control plane refused `{what}` (status {FENCED}): this run's lock `{id}` is no longer the mesh's{holder}; \
             it was broken under the run, which sends nothing more"
        ));
        state.broken.get_or_insert(LockBroken { id, refused: what.to_string(), by });
        Some(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_breaks_the_held_lock_once_and_stops_every_later_command() {
        let fence = Fence::default();
        assert!(fence.refused("push node-1", "").is_none(), "no lock held: 77 is no fence's");
        fence.hold("5ca1ab1e");
        assert_eq!(fence.id().as_deref(), Some("5ca1ab1e"));
        fence.before("assign node-1 postgres").unwrap();
        let other = LockHolder::this_process("mesh-adopt run", "node-1");
        let error = fence.refused("assign node-1 postgres", &other.to_line()).unwrap().to_string();
        assert!(error.contains("this run's lock `5ca1ab1e` is no longer the mesh's"), "{error}");
        assert!(error.contains(&other.id), "{error}");
        let broken = fence.broken().unwrap();
        assert_eq!((broken.refused.as_str(), broken.by.map(|b| b.id)), ("assign node-1 postgres", Some(other.id)));
        let later = fence.before("prepare node-1 postgres").unwrap_err().to_string();
        assert!(later.contains("`prepare node-1 postgres` was not sent"), "{later}");
        // A second refusal leaves the first as the one that broke it.
        fence.refused("push node-1", "").unwrap();
        assert_eq!(fence.broken().unwrap().refused, "assign node-1 postgres");
        fence.let_go("5ca1ab1e");
        assert_eq!(fence.id(), None);
    }
}
