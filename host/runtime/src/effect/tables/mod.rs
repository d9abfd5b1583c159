//! The small worlds the effect's tables are built from, so that a row says only its case:
//! manifests and plans written as JSON and words, a node as genesis left it, and a run's own
//! wiring from them to a prediction and to the rules it breaks. The tables, one a concern (what
//! a push does, what a re-read finds moved, what each rule decides, what a spec's digest
//! holds), are the modules below, each row one case run through the functions a run calls.

mod predict;
mod reread;
mod rules;
mod spec;

use std::collections::BTreeSet;
use std::sync::Arc;

use mesh_adopt_manifest::ModuleManifest;
use serde_json::{Value, json};

use crate::catalogue::Foundation;
use crate::effect::{
    AheadOfPush, ContainerEffect, Declarations, KnownModule, MeshView, Planned, Prediction, Seen, Touch, Violation,
    predict_ahead,
};
use crate::model::PluginCommand;

/// A manifest from its JSON; one that does not parse is a mistake in the test.
pub(crate) fn manifest(text: &Value) -> Arc<ModuleManifest> {
    let bytes = serde_json::to_vec(text).expect("JSON serialises");
    Arc::new(ModuleManifest::parse(&bytes).unwrap_or_else(|e| panic!("the test's manifest {text}: {e}")))
}

/// A plan's commands from their words, one command a string.
pub(crate) fn plan(commands: &[impl AsRef<str>]) -> Vec<PluginCommand> {
    commands.iter().map(|c| PluginCommand::from_words(c.as_ref().split(' ').map(String::from).collect())).collect()
}

/// A module the control plane has, with the secrets the node holds for it.
pub(crate) fn known(name: &str, manifest: &Arc<ModuleManifest>, prepared: bool, settled: &[&str]) -> KnownModule {
    KnownModule {
        name: name.to_string(),
        manifest: manifest.clone(),
        prepared,
        settled: settled.iter().map(|s| s.to_string()).collect(),
    }
}

/// A view of `node-1` from a backend that looked and has the control plane's own answer.
pub(crate) fn node() -> MeshView {
    MeshView { modules_known: true, complete: true, node: "node-1".into(), ..MeshView::looked() }
}

/// One module of a [`World`]: its name, its manifest as JSON and its plan as words.
pub(crate) struct Module {
    pub name: String,
    pub manifest: Value,
    pub plan: Vec<String>,
}

/// Phase three in miniature, for a table to edit a case at a time: genesis raised a store (run
/// with a credential) and a bus; module `store` keeps the store and is handed the credential,
/// `bus` recreates the bus onto its own image on genesis's volumes, `vault` raises a container
/// of its own with a secret the node seals. As it stands it breaks no rule.
pub(crate) struct World {
    /// The foundation bundle's `resources`.
    pub bundle: Value,
    /// The run's modules, in the order they are adopted.
    pub modules: Vec<Module>,
    /// What the node holds besides what genesis raised, as a backend would say it.
    pub on_node: fn(&mut MeshView),
    /// What the node did otherwise than predicted, for a rule held to what it did.
    pub on_effects: fn(&mut Prediction),
}

impl World {
    /// The world as it stands, breaking no rule.
    pub(crate) fn phase_three() -> World {
        let module = |name: &str, manifest: Value, plan: &[&str]| Module {
            name: name.to_string(),
            manifest,
            plan: plan.iter().map(|c| c.to_string()).collect(),
        };
        World {
            bundle: json!([
                {"id": "store", "kind": "container", "name": "mesh-store", "image": "postgres:16",
                 "volumes": ["/var/lib/mesh/store:/var/lib/postgresql/data"], "credentials": ["store-superuser"]},
                {"id": "bus", "kind": "container", "name": "mesh-bus", "image": "nats:2",
                 "volumes": ["/var/lib/mesh/bus:/data", "/etc/mesh/bus:/etc/nats:ro"]},
            ]),
            modules: vec![
                module(
                    "store",
                    json!({"name": "store", "secrets": ["superuser"],
                           "resources": [{"id": "server", "type": "container", "name": "mesh-store",
                                          "image": "postgres:16",
                                          "volumes": ["${access:data}:/var/lib/postgresql/data"]}],
                           "accesses": [{"id": "data", "path": "/var/lib/mesh/store"}],
                           "adopts": [{"foundation": "store", "container": "server", "how": "kept",
                                       "credential": "store-superuser", "secret": "superuser"}],
                           "adopt": {"grants": {"credentials": ["store-superuser"]}}}),
                    &[
                        "module add /store.json",
                        "secret accept node-1 store superuser --from /superuser",
                        "prepare node-1 store",
                        "push node-1",
                    ],
                ),
                module(
                    "bus",
                    json!({"name": "bus",
                           "resources": [{"id": "server", "type": "container", "name": "mesh-bus",
                                          "image": "nats-snapshot:1",
                                          "volumes": ["/var/lib/mesh/bus:/data", "/etc/mesh/bus:/etc/nats:ro"]}],
                           "adopts": [{"foundation": "bus", "container": "server", "how": "recreated"}]}),
                    &["module add /bus.json", "prepare node-1 bus", "push node-1"],
                ),
                module(
                    "vault",
                    json!({"name": "vault", "secrets": ["unseal-key"],
                           "resources": [{"id": "vault", "type": "container", "name": "mesh-vault",
                                          "image": "vault:1", "volumes": ["/var/lib/mesh/vault:/vault"]}]}),
                    &["module add /vault.json", "prepare node-1 vault", "push node-1"],
                ),
            ],
            on_node: |_| {},
            on_effects: |_| {},
        }
    }

    /// The module called `name`; the world has it.
    pub(crate) fn module(&mut self, name: &str) -> &mut Module {
        self.modules.iter_mut().find(|m| m.name == name).unwrap_or_else(|| panic!("the world has no module {name}"))
    }

    /// The manifest of the module called `name`, to edit.
    pub(crate) fn manifest(&mut self, name: &str) -> &mut Value {
        &mut self.module(name).manifest
    }

    /// The plan of the module called `name`, to edit.
    pub(crate) fn plan(&mut self, name: &str) -> &mut Vec<String> {
        &mut self.module(name).plan
    }

    /// The foundation bundle, read as a run reads it.
    pub(crate) fn foundation(&self) -> Foundation {
        let bytes = serde_json::to_vec(&json!({"resources": self.bundle})).expect("JSON serialises");
        Foundation::parse(&bytes).unwrap_or_else(|e| panic!("the test's bundle {}: {e:#}", self.bundle))
    }

    /// The node as the run sees it: every container genesis raised, as genesis raised it, then
    /// [`World::on_node`].
    pub(crate) fn view(&self) -> MeshView {
        let foundation = self.foundation();
        let mut view = node();
        for name in foundation.specs.keys() {
            view.containers.insert(name.clone(), foundation.raised(name).expect("the bundle raised it"));
        }
        (self.on_node)(&mut view);
        view
    }

    /// What the run predicts from the world: the view it starts from, the prediction (then
    /// [`World::on_effects`]) and the mesh as it should be before each push.
    pub(crate) fn predict(&self) -> (MeshView, Prediction, Vec<AheadOfPush>) {
        let view = self.view();
        let manifests: Vec<Arc<ModuleManifest>> = self.modules.iter().map(|m| manifest(&m.manifest)).collect();
        let plans: Vec<Vec<PluginCommand>> = self.modules.iter().map(|m| plan(&m.plan)).collect();
        let planned: Vec<Planned<'_>> = self
            .modules
            .iter()
            .zip(manifests.iter().zip(&plans))
            .map(|(m, (manifest, commands))| Planned { module: &m.name, manifest, commands })
            .collect();
        let (mut prediction, ahead) = predict_ahead(&view, &planned);
        (self.on_effects)(&mut prediction);
        (view, prediction, ahead)
    }

    /// The rules the world breaks, gathered as a run gathers them: the declarations of its
    /// modules and of those the node has prepared, who raised what in an earlier run, and the
    /// effects as predicted (`Seen::Predicted`) or as the node is said to have done them.
    pub(crate) fn judge(&self, seen: Seen) -> Vec<Violation> {
        let (view, prediction, _) = self.predict();
        let manifests: Vec<(String, ModuleManifest)> =
            self.modules.iter().map(|m| (m.name.clone(), (*manifest(&m.manifest)).clone())).collect();
        let earlier = view.modules.iter().filter(|k| k.prepared).map(|k| (k.name.as_str(), &*k.manifest));
        let mut declarations = Declarations::of(
            &self.foundation(),
            manifests.iter().map(|(name, manifest)| (name.as_str(), manifest)).chain(earlier),
        );
        declarations.learn_earlier(&view.modules);
        crate::effect::rules(&declarations, &view, &prediction, seen)
    }
}

/// `container` taken away by `module`'s push: an effect no prediction makes, which a node may
/// still be found to have done.
pub(crate) fn removed(container: &str, module: &str) -> Touch {
    Touch { container: container.into(), module: module.into(), effect: ContainerEffect::Removed }
}

/// The secrets of `pairs`, as a re-read's `accepted` holds them.
pub(crate) fn pairs(pairs: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    pairs.iter().map(|(m, s)| (m.to_string(), s.to_string())).collect()
}
