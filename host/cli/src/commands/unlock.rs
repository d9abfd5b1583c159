//! `mesh-adopt unlock`: breaks the live mesh's lock that a run killed outright left, by the
//! id a refused run named: the mesh's own lock (the configuration's `unlock`) and this
//! machine's; or clears a damaged lock file of this machine's (`--damaged FILE`). A run never
//! breaks a lock itself; a lock whose process still runs on this machine is that run's, and is
//! not broken here: the run releases it when it ends. A process that has the holder's id but
//! started after the lock was taken is not the holder (the id was given again after a
//! reboot): that lock is broken as one whose process is gone. A lock held from another
//! machine may be held by a run that still runs there: it is broken only with `--force`, and
//! that run is then fenced where the control plane fences.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use super::phase::live_config;
use crate::exit::ExitStatus;
use mesh_adopt_live::LiveMesh;
use mesh_adopt_live::machine_lock::{LockFile, MachineLockError, MachineLocks};
use mesh_adopt_runtime::mesh::Mesh;
use mesh_adopt_runtime::mesh::lock::{LockHolder, Unlocked, is_lock_id};

/// The arguments of `unlock`.
#[derive(Debug, Args)]
pub struct UnlockArgs {
    /// The lock's id, as the run it refused named it.
    #[arg(required_unless_present = "damaged", conflicts_with = "damaged")]
    id: Option<String>,
    /// Break the lock though its holder runs on another machine and may still run there: that
    /// run is then fenced, where the control plane fences (its next command refused).
    #[arg(long, requires = "id")]
    force: bool,
    /// Clear this machine's lock file FILE, which names no holder (empty, cut short, not a
    /// lock's line, not a regular file), as the run it refused named it.
    #[arg(long, value_name = "FILE")]
    damaged: Option<PathBuf>,
    /// The live mesh's configuration [default: ./mesh-adopt.toml if present, else built-in].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Breaks the lock held under the id given, or clears the damaged lock file given: exit 0
/// when it was released (or its release recorded, to be made once what still runs under it
/// ends) or cleared, 1 when it was not (no such lock, one held under another id, one whose run
/// still runs here, one held from another machine without `--force`, a mesh that erred, a
/// lock file that is not damaged), 2 when the id, the file or the configuration cannot be used.
pub async fn unlock(args: UnlockArgs) -> Result<ExitStatus> {
    if let Some(file) = &args.damaged {
        return clear_damaged(file);
    }
    let Some(id) = &args.id else { bail!("name the lock's id, or a damaged lock file with `--damaged FILE`") };
    if !is_lock_id(id) {
        bail!("`{id}` is not a lock id: a lock id is the hexadecimal word a refused run names (`lock id …`)");
    }
    let mesh = LiveMesh::new(live_config(args.config.as_deref())?);
    let left_by = holder_with(&mesh, id).await;
    if let Some(holder) = &left_by
        && holder.on_this_machine()
        && !holder.process_gone()
    {
        crate::errln!(
            "lock `{id}` is held by {}, which still runs on this machine: it releases the lock when it ends; stop \
             it (SIGINT) rather than break its lock",
            holder.described()
        );
        return Ok(ExitStatus::Failed);
    }
    if let Some(holder) = &left_by
        && !holder.on_this_machine()
        && !args.force
    {
        let then = match mesh.fences() {
            true => "that run is then fenced: the control plane refuses its next command, and it stops there",
            false => {
                "this mesh's control plane does not fence (`lock_fences`), so that run, if it still runs, would go \
                 on unaware beside the next"
            }
        };
        crate::errln!(
            "lock `{id}` is held by {}, on another machine, which this one cannot see: its run may still be \
             running. Once it is known gone, break the lock with `mesh-adopt unlock {id} --force`; {then}. Nothing \
             was released",
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
        Ok(Unlocked::Releasing { running }) => {
            crate::outln!(
                "the release of lock `{id}` is recorded: the control plane still runs `{running}`, sent under it, and \
                 lets the lock go once that ends"
            );
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
    let here = mesh.machine_locks().into_iter().flat_map(|locks| locks.held()).filter_map(|(_, file)| match file {
        LockFile::Held(holder) => Some(holder),
        LockFile::Damaged(_) => None,
    });
    let on_mesh = mesh.lock_holder().await.ok().flatten().map(|(holder, _)| holder);
    here.chain(on_mesh).find(|holder| holder.id == id)
}

/// Clears this machine's damaged lock file `file`: 0 cleared, 1 when there is none or it is
/// not damaged, 2 when it is no lock file of this machine's.
fn clear_damaged(file: &std::path::Path) -> Result<ExitStatus> {
    let Some(dir) = MachineLocks::default_dir() else {
        bail!("there is no place for this machine's locks: set XDG_STATE_HOME (an absolute path) or HOME");
    };
    match MachineLocks::in_dir(dir).clear_damaged(file) {
        Ok(damage) => {
            crate::outln!("cleared this machine's damaged lock `{}` ({damage})", file.display());
            Ok(ExitStatus::Success)
        }
        Err(error @ MachineLockError::NotALockFile { .. }) => Err(error.into()),
        Err(error) => {
            let remedy = error.remedy();
            crate::errln!("{:#}; {remedy}", anyhow::Error::from(error));
            Ok(ExitStatus::Failed)
        }
    }
}
