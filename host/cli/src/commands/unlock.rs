//! `mesh-adopt unlock`: breaks the live mesh's lock that a run killed outright left, by the
//! id a refused run named: the mesh's own lock (the configuration's `unlock`) and this
//! machine's. A run never breaks a lock itself; a lock whose process still runs on this
//! machine is that run's, and is not broken here: the run releases it when it ends. A process
//! that has the holder's id but started after the lock was taken is not the holder (the id was
//! given again after a reboot): that lock is broken as one whose process is gone.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use super::phase::live_config;
use crate::exit::ExitStatus;
use mesh_adopt_live::LiveMesh;
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::mesh::lock::{LockHolder, Unlocked, is_lock_id, this_host};

/// The arguments of `unlock`.
#[derive(Debug, Args)]
pub struct UnlockArgs {
    /// The lock's id, as the run it refused named it.
    id: String,
    /// The live mesh's configuration [default: ./mesh-adopt.toml if present, else built-in].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Breaks the lock held under the id given: exit 0 when it was released, 1 when it was not
/// (no such lock, one held under another id, one whose run still runs here, a mesh that
/// erred), 2 when the id or the configuration cannot be used.
pub async fn unlock(args: UnlockArgs) -> Result<ExitStatus> {
    let id = &args.id;
    if !is_lock_id(id) {
        bail!("`{id}` is not a lock id: a lock id is the hexadecimal word a refused run names (`lock id …`)");
    }
    let mesh = LiveMesh::new(live_config(args.config.as_deref())?);
    let left_by = holder_with(&mesh, id).await;
    if let Some(holder) = &left_by
        && holder.host == this_host()
        && !holder.process_gone()
    {
        crate::errln!(
            "lock `{id}` is held by {}, which still runs on this machine: it releases the lock when it ends; stop \
             it (SIGINT) rather than break its lock",
            holder.described()
        );
        return Ok(ExitStatus::Failed);
    }
    match mesh.unlock(id).await {
        Ok(Unlocked::Released) => {
            match left_by {
                Some(holder) => crate::outln!("released lock `{id}`, held by {}", holder.described()),
                None => crate::outln!("released lock `{id}`"),
            }
            Ok(ExitStatus::Success)
        }
        Ok(Unlocked::NotHeld) => {
            crate::errln!("no lock `{id}` is held on {}, nor on this machine: nothing was released", mesh.summary());
            Ok(ExitStatus::Failed)
        }
        Ok(Unlocked::HeldByAnother(other)) => {
            crate::errln!(
                "lock `{id}` is not held: the mesh's lock is held by {}, and was left alone",
                other.described()
            );
            Ok(ExitStatus::Failed)
        }
        Err(error) => {
            crate::errln!("lock `{id}` was not released: {error}");
            Ok(ExitStatus::Failed)
        }
    }
}

/// Who holds the lock `id`, as this machine's locks or the mesh say, if either knows.
async fn holder_with(mesh: &LiveMesh, id: &str) -> Option<LockHolder> {
    let here = mesh.machine_locks().into_iter().flat_map(|locks| locks.held()).map(|(_, holder)| holder);
    let on_mesh = mesh.lock_holder().await.ok().flatten();
    here.chain(on_mesh).find(|holder| holder.id == id)
}
