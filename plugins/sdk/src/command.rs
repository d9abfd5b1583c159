//! The control-plane vocabulary a plugin builds its commands in, and the command the
//! contract carries for each: one place where the two meet, for the plan and for `tell`.

use crate::bindings::mesh::adopt::types::{self as wit, Placement};

pub use mesh_adopt_manifest::command::{
    BUILD_TIMEOUT_SECONDS, BUILD_WAIT, Command, DEFAULT_REF, accepting_remote, manifest_remote,
};

/// A command of the vocabulary as the contract carries it.
pub fn typed(command: &Command) -> wit::Command {
    let place = |node: &String, module: &String| Placement { node: node.clone(), module: module.clone() };
    match command {
        Command::ModuleAdd { remote } => wit::Command::ModuleAdd(remote.clone()),
        Command::Build { repository, module, reference } => wit::Command::Build(wit::Build {
            repository: repository.clone(),
            module: module.clone(),
            ref_: reference.clone(),
        }),
        Command::ModuleIssue { module, node } => wit::Command::ModuleIssue(place(node, module)),
        Command::Assign { node, module } => wit::Command::Assign(place(node, module)),
        Command::Prepare { node, module } => wit::Command::Prepare(place(node, module)),
        Command::SecretAccept { node, module, secret, from } => wit::Command::SecretAccept(wit::SecretAccept {
            node: node.clone(),
            module: module.clone(),
            secret: secret.clone(),
            source: from.clone(),
        }),
        Command::Push { node } => wit::Command::Push(node.clone()),
    }
}
