//! The node's push rule, run forward over every module's plan from the mesh's state.

use std::collections::{BTreeMap, BTreeSet};

use mesh_adopt_manifest::ModuleManifest;
use mesh_adopt_manifest::command::Command;

use super::{AheadOfPush, ContainerEffect, ContainerSpec, KnownModule, MeshView, SecretEffect, Touch};

/// What one push of the run does, in the order the node applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushEffect {
    /// The module whose plan pushes.
    pub module: String,
    /// Where in that plan, counting its commands from 0.
    pub command: usize,
    /// Every container of every prepared module, in the order the node applies them.
    pub containers: Vec<Touch>,
    /// Every secret the push settles: accepted before it, or sealed by it.
    pub secrets: Vec<SecretEffect>,
    /// The containers of the node once the push has landed, as far as the run's manifests and
    /// the mesh's state tell: what the host checks the node against afterwards.
    pub after: BTreeMap<String, ContainerSpec>,
}

/// The whole phase's effect on the mesh: each push in turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prediction {
    /// The pushes, in the order the plans make them.
    pub pushes: Vec<PushEffect>,
    /// How many pushes each module's plan makes, for every module planned (0 for a plan
    /// that makes none).
    pub pushes_by_module: BTreeMap<String, usize>,
    /// The modules whose own plan prepares them on the node: what another module's push
    /// would then apply, if their own plan does not push.
    pub prepares_itself: BTreeSet<String>,
    /// Modules moved ahead of the order asked for: an earlier run left each prepared without
    /// its hand-over, so its own `secret accept` must come before any other module's push.
    pub first: Vec<String>,
    /// The secrets of the modules the pushes apply that the node held before the run, as
    /// `(module, secret)`, in the order the pushes meet them: none is sealed again, and a
    /// re-run says so.
    pub held: Vec<(String, String)>,
    /// Of those held secrets, the ones this run's plans accept again before a push: the node
    /// takes the value carried in over the one it held, so what it holds from then on is the
    /// genesis credential's value now (`credential`, where the module declares one).
    pub accepted_again: Vec<SecretEffect>,
    /// What preflight found on the node, or could not ask it, that a person should know
    /// beside the effect (a container gone, mounts or images the node was not asked about).
    pub warnings: Vec<crate::events::EffectWarning>,
}

impl Prediction {
    /// The containers' changes over the whole phase, one line each as a node reports them: a
    /// container's first change that is not `kept`, each recreation again, and `kept` only
    /// for a container nothing else happens to.
    pub fn changes(&self) -> Vec<Touch> {
        let mut changes: Vec<Touch> = Vec::new();
        for touch in self.pushes.iter().flat_map(|p| &p.containers) {
            match touch.effect {
                ContainerEffect::Kept { .. } => {
                    if !changes.iter().any(|c| c.container == touch.container) {
                        changes.push(touch.clone());
                    }
                }
                _ => {
                    changes.retain(|c| {
                        !(c.container == touch.container && matches!(c.effect, ContainerEffect::Kept { .. }))
                    });
                    changes.push(touch.clone());
                }
            }
        }
        changes
    }

    /// The secrets the phase seals, as `(module, secret)`.
    pub fn sealed(&self) -> Vec<(String, String)> {
        self.pushes
            .iter()
            .flat_map(|p| &p.secrets)
            .filter(|s| !s.accepted)
            .map(|s| (s.module.clone(), s.secret.clone()))
            .collect()
    }
}

/// One module of the run: its name, its manifest and its plan's commands.
pub struct Planned<'a> {
    /// The module.
    pub module: &'a str,
    /// Its manifest, as the control plane will register it.
    pub manifest: &'a std::sync::Arc<ModuleManifest>,
    /// The commands its plan tells, in order.
    pub commands: &'a [crate::model::PluginCommand],
}

/// Runs the node's push rule over `modules`' plans, in order, from `view`: the prediction,
/// and what the mesh should be just before each push, what the host reads the mesh again
/// against before telling it ([`AheadOfPush`]; its `names` left empty for the caller to fill).
pub fn predict_ahead(view: &MeshView, modules: &[Planned<'_>]) -> (Prediction, Vec<AheadOfPush>) {
    let mut ahead = Vec::new();
    let mut node: BTreeMap<String, ContainerSpec> = view.containers.clone();
    let mut known: Vec<KnownModule> = view.modules.clone();
    let mut accepted: BTreeSet<(String, String)> = BTreeSet::new();
    let mut prediction = Prediction::default();
    let held_before: BTreeSet<(String, String)> =
        view.modules.iter().flat_map(|k| k.settled.iter().map(|s| (k.name.clone(), s.clone()))).collect();
    for planned in modules {
        prediction.pushes_by_module.entry(planned.module.to_string()).or_insert(0);
        for (index, planned_command) in planned.commands.iter().enumerate() {
            let Some(command) = planned_command.known() else { continue };
            match command.clone() {
                Command::ModuleAdd { .. } => register(&mut known, planned.module, planned.manifest),
                Command::Prepare { module, .. } => {
                    if module == planned.module {
                        prediction.prepares_itself.insert(module.clone());
                    }
                    if let Some(k) = known.iter_mut().find(|k| k.name == module) {
                        k.prepared = true;
                    }
                }
                Command::SecretAccept { module, secret, .. } => {
                    accepted.insert((module, secret));
                }
                Command::Push { node: pushed } => {
                    ahead.push(AheadOfPush {
                        module: planned.module.to_string(),
                        node: pushed,
                        command: index,
                        expected: MeshView {
                            containers: node.clone(),
                            modules: known.clone(),
                            modules_known: view.modules_known,
                            complete: view.complete,
                            looked: view.looked,
                            unseen: None,
                            node: view.node.clone(),
                        },
                        accepted: accepted.clone(),
                        names: Vec::new(),
                    });
                    *prediction.pushes_by_module.entry(planned.module.to_string()).or_default() += 1;
                    let push = apply(&mut node, &mut known, &accepted, planned.module, index);
                    for module in known.iter().filter(|k| k.prepared) {
                        for secret in &module.manifest.secrets {
                            let pair = (module.name.clone(), secret.clone());
                            if !held_before.contains(&pair) || prediction.held.contains(&pair) {
                                continue;
                            }
                            if accepted.contains(&pair) {
                                prediction.accepted_again.push(SecretEffect {
                                    module: module.name.clone(),
                                    secret: secret.clone(),
                                    accepted: true,
                                    credential: handed_over_as(&module.manifest, secret),
                                });
                            }
                            prediction.held.push(pair);
                        }
                    }
                    prediction.pushes.push(push);
                }
                Command::Build { .. } | Command::ModuleIssue { .. } | Command::Assign { .. } => {}
            }
        }
    }
    (prediction, ahead)
}

/// The genesis credential `manifest` declares it hands over as `secret` (`adopts[].credential`).
fn handed_over_as(manifest: &ModuleManifest, secret: &str) -> Option<String> {
    manifest.adopts.iter().find(|a| a.secret.as_deref() == Some(secret)).and_then(|a| a.credential.clone())
}

/// `module add`: the control plane takes the module's manifest, replacing one registered before.
fn register(known: &mut Vec<KnownModule>, module: &str, manifest: &std::sync::Arc<ModuleManifest>) {
    match known.iter_mut().find(|k| k.name == module) {
        Some(k) => k.manifest = manifest.clone(),
        None => known.push(KnownModule { name: module.to_string(), manifest: manifest.clone(), ..Default::default() }),
    }
}

/// One push: every prepared module's containers compared with the node's, every declared
/// secret not yet settled accepted or sealed.
fn apply(
    node: &mut BTreeMap<String, ContainerSpec>,
    known: &mut [KnownModule],
    accepted: &BTreeSet<(String, String)>,
    pushed_by: &str,
    command: usize,
) -> PushEffect {
    let mut push = PushEffect {
        module: pushed_by.to_string(),
        command,
        containers: Vec::new(),
        secrets: Vec::new(),
        after: BTreeMap::new(),
    };
    for module in known.iter_mut().filter(|k| k.prepared) {
        for pushed in super::pushed_containers(&module.manifest).iter() {
            let declared = &pushed.resource;
            let wanted = ContainerSpec::new(declared.image.clone(), Some(declared.volumes.clone()))
                .with_digest(Some(pushed.digest.clone()))
                .with_owner(Some(module.name.clone()));
            let effect = match node.get(&declared.name) {
                Some(running) if running.keeps(&wanted) => ContainerEffect::Kept { image: declared.image.clone() },
                Some(running) => ContainerEffect::Recreated {
                    from: running.image.clone(),
                    to: declared.image.clone(),
                    volumes: declared.volumes.clone(),
                },
                None => ContainerEffect::Created { image: declared.image.clone(), volumes: declared.volumes.clone() },
            };
            // A kept container is left as it is: it keeps the owner the node gave it.
            // Nor is it restarted: it runs as it ran. Whether a raised one runs yet is the node's.
            let (owner, running) = match &effect {
                ContainerEffect::Kept { .. } => {
                    node.get(&declared.name).map(|running| (running.owner.clone(), running.running)).unwrap_or_default()
                }
                _ => (wanted.owner.clone(), None),
            };
            node.insert(declared.name.clone(), wanted.with_owner(owner).with_running(running));
            push.containers.push(Touch { container: declared.name.clone(), module: module.name.clone(), effect });
        }
        for secret in &module.manifest.secrets {
            if module.settled.contains(secret) {
                continue;
            }
            let was_accepted = accepted.contains(&(module.name.clone(), secret.clone()));
            module.settled.insert(secret.clone());
            let credential = was_accepted.then(|| handed_over_as(&module.manifest, secret)).flatten();
            push.secrets.push(SecretEffect {
                module: module.name.clone(),
                secret: secret.clone(),
                accepted: was_accepted,
                credential,
            });
        }
    }
    push.after = node.clone();
    push
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const STORE: &[u8] = br#"{"name": "postgres", "secrets": ["superuser"],
        "resources": [{"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16"}],
        "adopts": [{"foundation": "store", "container": "server", "how": "kept",
                    "credential": "store-superuser", "secret": "superuser"}]}"#;

    /// The store's module run again on a node that holds its hand-over, with `plan` as its
    /// commands.
    fn again(plan: &[&str]) -> Prediction {
        let manifest = Arc::new(ModuleManifest::parse(STORE).unwrap());
        let commands: Vec<crate::model::PluginCommand> = plan
            .iter()
            .map(|c| crate::model::PluginCommand::from_words(c.split(' ').map(String::from).collect()))
            .collect();
        let mut view = MeshView::looked();
        view.modules_known = true;
        let settled = ["superuser".to_string()].into();
        view.modules =
            vec![KnownModule { name: "postgres".into(), manifest: manifest.clone(), prepared: true, settled }];
        predict_ahead(&view, &[Planned { module: "postgres", manifest: &manifest, commands: &commands }]).0
    }

    #[test]
    fn a_held_secret_accepted_again_is_told_and_one_left_alone_is_not() {
        let accept = "secret accept node-1 postgres superuser --from /accepting-superuser";
        let prediction = again(&["module add /p.json", accept, "push node-1"]);
        let held = vec![("postgres".to_string(), "superuser".to_string())];
        assert_eq!((prediction.sealed(), prediction.held.clone()), (vec![], held.clone()));
        assert_eq!(
            prediction.accepted_again,
            [SecretEffect {
                module: "postgres".into(),
                secret: "superuser".into(),
                accepted: true,
                credential: Some("store-superuser".into())
            }]
        );
        // Settled already: no push settles it again.
        assert!(prediction.pushes.iter().all(|p| p.secrets.is_empty()), "{prediction:?}");
        let left_alone = again(&["module add /p.json", "push node-1"]);
        assert_eq!((left_alone.held.clone(), left_alone.accepted_again.clone()), (held, vec![]));
    }
}
