//! What the control plane holds for one node, as its `state` command answers: the modules it
//! has registered, each with its manifest, whether it is prepared on the node and the secrets
//! the node holds for it. A live mesh's prediction starts from it, as the simulator's does from
//! its own world, so a push is not predicted to seal a secret the node already holds.
//!
//! The command's contract (docs/operating.md's "The mesh's state, read per node" says it for an
//! operator): given the node as its `{node}` word, it prints one JSON object on its standard
//! output and exits 0:
//!
//! ```json
//! {"node": "node-1",
//!  "modules": [
//!    {"name": "postgres", "manifest": {"name": "postgres", "…": "…"}, "prepared": true, "secrets": ["superuser"]},
//!    {"name": "mesh-vault", "manifest": {"name": "mesh-vault", "…": "…"}, "prepared": true, "secrets": ["unseal-key"]}
//!  ]}
//! ```
//!
//! - `node`: the node it answers for, which is the node asked.
//! - `modules`: every module the control plane has registered, in the order it registered
//!   them (`[]` when none), each once:
//!   - `name`: the module's name, which its manifest's `name` is;
//!   - `manifest`: the manifest registered for it (the one its last `module add` took), as a
//!     JSON object;
//!   - `prepared`: whether it is prepared on the node, so that a push there applies it;
//!   - `secrets`: the names of its secrets the node holds, accepted or sealed, each once.
//!
//! No other key, and no key twice. Anything else is no answer: the run stops before any effect,
//! naming the command and what is wrong with its answer.

use std::collections::BTreeSet;
use std::sync::Arc;

use mesh_adopt_runtime::effect::{KnownModule, MeshView};
use mesh_adopt_runtime::manifest::{ModuleManifest, command::check_word};
use mesh_adopt_runtime::mesh::MeshError;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::LiveMesh;
use crate::templates::Template;

/// The answer as its contract writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer<'a> {
    node: String,
    #[serde(borrow)]
    modules: Vec<Entry<'a>>,
}

/// One module of the answer; its manifest kept as the command wrote it, to be read as a
/// catalogue's manifest is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry<'a> {
    name: String,
    #[serde(borrow)]
    manifest: &'a RawValue,
    prepared: bool,
    secrets: Vec<String>,
}

/// Reads a `state` command's answer for `node`: the modules the control plane has, in the
/// order it registered them, as the prediction starts from them. An error says what is wrong
/// with the answer, naming the module where one is to blame.
pub fn read_answer(answer: &str, node: &str) -> Result<Vec<KnownModule>, String> {
    let read: Answer<'_> = serde_json::from_str(answer).map_err(|e| {
        format!(
            "it is not one JSON object `{{\"node\", \"modules\": [{{\"name\", \"manifest\", \"prepared\", \"secrets\"}}]}}`: {e}"
        )
    })?;
    if read.node != node {
        return Err(format!("it answers for the node `{}`, and the node asked was `{node}`", read.node.escape_debug()));
    }
    let mut modules: Vec<KnownModule> = Vec::with_capacity(read.modules.len());
    for entry in read.modules {
        let name = entry.name;
        mesh_adopt_runtime::options::check_module_name(&name).map_err(|e| format!("a module's `name`: {e}"))?;
        if modules.iter().any(|m| m.name == name) {
            return Err(format!("it names the module `{name}` twice"));
        }
        let bytes = entry.manifest.get().as_bytes();
        let manifest = ModuleManifest::parse(bytes).map_err(|e| format!("the module `{name}`'s `manifest` {e:#}"))?;
        manifest
            .check_valid(bytes)
            .map_err(|e| format!("the module `{name}`'s `manifest` {}: {}", e.kind(), e.detail()))?;
        if manifest.name != name {
            return Err(format!(
                "the module `{name}`'s `manifest` names its module `{}`",
                manifest.name.escape_debug()
            ));
        }
        let mut settled = BTreeSet::new();
        for secret in entry.secrets {
            check_word("secret", &secret).map_err(|e| format!("the module `{name}`'s `secrets`: {e}"))?;
            if !settled.insert(secret.clone()) {
                return Err(format!("the module `{name}`'s `secrets` name `{secret}` twice"));
            }
        }
        modules.push(KnownModule { name, manifest: Arc::new(manifest), prepared: entry.prepared, settled });
    }
    Ok(modules)
}

impl LiveMesh {
    /// Adds to `view` what the control plane holds for `node`, when the configuration has a
    /// `state` command and the view was seen so far: its modules, and that they are the
    /// control plane's answer. A `state` that fails or answers otherwise leaves the mesh
    /// unseen, never read as holding nothing.
    pub(crate) async fn add_state(&self, node: &str, view: &mut MeshView) {
        if let (None, Some(command)) = (&view.unseen, &self.config.state) {
            match self.read_state(command, node).await {
                Ok(modules) => {
                    view.modules = modules;
                    view.modules_known = true;
                }
                Err(e) => {
                    view.unseen = Some(format!("the control plane could not say what it holds on node `{node}`: {e}"))
                }
            }
        }
        view.complete = view.modules_known && view.containers.values().all(|c| c.volumes.is_some());
    }

    /// Runs the `state` command for `node` and reads its answer ([`read_answer`]).
    async fn read_state(&self, command: &Template, node: &str) -> Result<Vec<KnownModule>, MeshError> {
        let argv = command.fill(|_| node.to_string());
        let stdout = self.run_ok(&argv, None, self.config.state_timeout).await?;
        read_answer(&stdout, node).map_err(|why| {
            let cut = if stdout.len() >= self.config.output_bytes {
                format!(" (its answer was cut at `output_bytes`, {} bytes)", self.config.output_bytes)
            } else {
                String::new()
            };
            MeshError::Failed(format!(
                "`{}` answered what is not the state of node `{node}`: {why}{cut}",
                argv.join(" ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, secrets: &[&str]) -> String {
        serde_json::json!({
            "name": name,
            "version": "1.0.0",
            "resources": [{"id": "server", "type": "container", "name": format!("mesh-{name}"), "image": "x:1"}],
            "secrets": secrets,
        })
        .to_string()
    }

    fn answer(node: &str, modules: &[(&str, String, bool, &[&str])]) -> String {
        let entries: Vec<String> = modules
            .iter()
            .map(|(name, manifest, prepared, secrets)| {
                format!(
                    r#"{{"name": "{name}", "manifest": {manifest}, "prepared": {prepared}, "secrets": {}}}"#,
                    serde_json::to_string(secrets).unwrap()
                )
            })
            .collect();
        format!(r#"{{"node": "{node}", "modules": [{}]}}"#, entries.join(", "))
    }

    #[test]
    fn the_modules_are_read_in_registration_order_with_what_the_node_holds() {
        let text = answer(
            "node-1",
            &[
                ("vault", manifest("vault", &["unseal-key"]), true, &["unseal-key"]),
                ("store", manifest("store", &["superuser", "replica"]), false, &[]),
            ],
        );
        let modules = read_answer(&text, "node-1").unwrap();
        let read: Vec<(&str, bool, Vec<&str>)> = modules
            .iter()
            .map(|m| (m.name.as_str(), m.prepared, m.settled.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(read, [("vault", true, vec!["unseal-key"]), ("store", false, vec![])]);
        assert_eq!(modules[1].manifest.secrets, ["superuser", "replica"]);
        assert!(read_answer(r#"{"node": "node-2", "modules": []}"#, "node-2").unwrap().is_empty());
    }

    #[test]
    fn an_answer_that_is_not_the_contracts_is_refused_saying_why() {
        let good = manifest("vault", &["unseal-key"]);
        for (text, why) in [
            (String::new(), "is not one JSON object"),
            ("[]".to_string(), "is not one JSON object"),
            (r#"{"modules": []}"#.to_string(), "missing field `node`"),
            (r#"{"node": "node-1"}"#.to_string(), "missing field `modules`"),
            (r#"{"node": "node-1", "modules": [], "extra": 1}"#.to_string(), "unknown field `extra`"),
            (r#"{"node": "node-1", "node": "node-1", "modules": []}"#.to_string(), "duplicate field `node`"),
            (r#"{"node": "node-2", "modules": []}"#.to_string(), "answers for the node `node-2`, and the node asked was `node-1`"),
            (answer("node-1", &[("vault", good.clone(), true, &[]), ("vault", good.clone(), true, &[])]), "names the module `vault` twice"),
            (answer("node-1", &[("store", good.clone(), true, &[])]), "the module `store`'s `manifest` names its module `vault`"),
            (answer("node-1", &[("vault", good.clone(), true, &["unseal-key", "unseal-key"])]), "name `unseal-key` twice"),
            (answer("node-1", &[("vault", good.clone(), true, &["-x"])]), "starts with `-`"),
            (answer("node-1", &[("va ult", good.clone(), true, &[])]), "a module's `name`"),
            (answer("node-1", &[("vault", "[1]".to_string(), true, &[])]), "the module `vault`'s `manifest`"),
            (
                answer("node-1", &[("vault", r#"{"name": "vault", "name": "vault", "version": "1", "resources": [{"id": "s", "type": "container", "name": "v", "image": "x:1"}]}"#.to_string(), true, &[])]),
                "the module `vault`'s `manifest`",
            ),
            (
                r#"{"node": "node-1", "modules": [{"name": "vault", "manifest": {}, "prepared": "yes", "secrets": []}]}"#.to_string(),
                "invalid type",
            ),
        ] {
            let error = read_answer(&text, "node-1").err().unwrap_or_else(|| panic!("{text} was read"));
            assert!(error.contains(why), "{text}: {error}");
        }
    }
}
