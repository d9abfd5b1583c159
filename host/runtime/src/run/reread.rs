//! The world read again before each push: just before a plugin's `tell push` goes out, the
//! mesh is read as preflight read it and held to what the prediction says it is then. Should
//! anything have moved, the push is not told, the module is stopped, and no module after it
//! pushes: another run or an operator may be at work on the mesh.

use std::sync::{Arc, Mutex};

use crate::effect::{AheadOfPush, Reread};
use crate::mesh::Mesh;
use crate::model::{Export, Refusal};
use crate::record::transcript::{Entry, Transcript};
use crate::run::ModuleOutcome;
use crate::sandbox::state::BeforePush;

/// The run's re-reads: what the mesh should be before each push, and the first push a
/// re-read stopped.
pub(super) struct Rereads {
    mesh: Arc<dyn Mesh>,
    transcript: Arc<Transcript>,
    ahead: Vec<AheadOfPush>,
    stopped: Mutex<Option<(String, usize, Reread)>>,
}

impl Rereads {
    /// The re-reads before each push of `ahead`, on `mesh`, recorded in `transcript`.
    pub(super) fn new(mesh: Arc<dyn Mesh>, transcript: Arc<Transcript>, ahead: Vec<AheadOfPush>) -> Rereads {
        Rereads { mesh, transcript, ahead, stopped: Mutex::new(None) }
    }

    /// The outcome of `module` when a re-read stopped its push: a refusal of the host's, naming
    /// what moved; `None` when none did.
    pub(super) fn stopped(&self, module: &str) -> Option<ModuleOutcome> {
        let stopped = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        let (_, command, found) = stopped.as_ref().filter(|(m, _, _)| m == module)?;
        let (code, what) = match &found.unseen {
            Some(why) => (Refusal::MESH_UNSEEN, format!("the mesh could not be read again: {why}")),
            None => (Refusal::MESH_MOVED, format!("the mesh was not as predicted: {}", moved_words(found))),
        };
        Some(ModuleOutcome::Refused {
            during: Export::Adopt,
            code: Some(code.into()),
            message: format!(
                "not adopted: just before its push (command {} of its plan), {what}. Another run or an operator \
                 may be at work on the mesh (or an earlier push did not do what was predicted); the push was not \
                 told, and no module after it pushes",
                command + 1
            ),
        })
    }

    /// Whether a re-read stopped a push.
    pub(super) fn any_stopped(&self) -> bool {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
}

/// What moved, one clause each: ``container `mesh-bus` image: predicted a, found b``.
fn moved_words(found: &Reread) -> String {
    found.moved.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

#[async_trait::async_trait]
impl BeforePush for Rereads {
    async fn before_push(&self, module: &str, command: usize) -> Result<(), Reread> {
        let Some(ahead) = self.ahead.iter().find(|a| a.module == module && a.command == command) else {
            return Ok(());
        };
        let found = self.mesh.reread(ahead).await;
        if !found.looked {
            return Ok(());
        }
        self.transcript.record(Entry::Reread {
            module: module.to_string(),
            command,
            found: found.clone(),
            at: self.mesh.now(),
        });
        if found.clear() {
            return Ok(());
        }
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = Some((module.to_string(), command, found.clone()));
        Err(found)
    }
}
