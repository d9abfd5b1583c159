//! The rules of the mesh, derived from what modules declare they adopt and from the foundation,
//! for any catalogue: held against a prediction before anything moves, and against what the
//! node did after each push.

use std::collections::BTreeMap;

use mesh_adopt_manifest::{AdoptedAs, mounts};

use super::declared::Declarations;
use super::{ContainerEffect, MeshView, Prediction, Touch};
use crate::effect::Violation;
pub use crate::model::rule::Rule;
use crate::model::spec::same_volumes;

/// Whether effects are a prediction or what the node did: how a broken rule is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Worked out before any push.
    Predicted,
    /// Reported by the mesh after a push.
    Observed,
}

impl Seen {
    fn would_be(self) -> &'static str {
        match self {
            Seen::Predicted => "would be",
            Seen::Observed => "was",
        }
    }

    fn the_push_would(self) -> &'static str {
        match self {
            Seen::Predicted => "the push would",
            Seen::Observed => "the node did",
        }
    }
}

/// Every rule `effects` break, given what the modules declare and what the mesh held when the
/// run began; each broken rule is named once per container or secret.
pub fn rules(declarations: &Declarations, view: &MeshView, effects: &Prediction, seen: Seen) -> Vec<Violation> {
    let mut found = declared(declarations);
    let mut recreations: BTreeMap<&str, usize> = BTreeMap::new();
    for touch in effects.pushes.iter().flat_map(|p| &p.containers) {
        if let ContainerEffect::Recreated { .. } = touch.effect {
            *recreations.entry(touch.container.as_str()).or_default() += 1;
        }
        found.extend(touched(declarations, view, touch, recreations.get(touch.container.as_str()).copied(), seen));
    }
    for (module, secret) in effects.sealed() {
        if let Some((container, credential)) = declarations.held.get(&(module.clone(), secret.clone()))
            && view.containers.contains_key(container)
        {
            found.push(
                Rule::CredentialNeverReplaced
                    .broken(format!(
                        "{} seal fresh bytes for `{module}`'s secret `{secret}`, but `{container}` runs with genesis \
                 credential `{credential}`, which that secret carries: it must be accepted before the push",
                        seen.the_push_would()
                    ))
                    .of(module.as_str())
                    .at(container),
            );
        } else if !view.modules_known
            && let Some((container, raised)) = holding(declarations, view, &module)
        {
            found.push(Rule::CredentialNeverReplaced.broken(format!(
                "{} seal fresh bytes for `{module}`'s secret `{secret}`, but `{container}` ({raised}) already runs on \
                 the node, and this mesh cannot say whether the node holds that secret: sealed over, what the \
                 container keeps under the one it holds would be lost. The data comes first: configure the live \
                 mesh's `state` command (mesh-adopt.toml), which says the secrets the node holds, so that the \
                 prediction seals none of them",
                seen.the_push_would()
            )).of(module.as_str()).at(container));
        }
    }
    for (module, pushes) in &effects.pushes_by_module {
        if *pushes > 1 {
            found.push(
                Rule::OnePush
                    .broken(format!(
                        "`{module}`'s plan pushes {pushes} times; a module pushes once, after everything it hands over"
                    ))
                    .of(module.as_str()),
            );
        }
        // A container a module declares it adopts is applied by that module's own push: one
        // prepared and left to another's would be "adopted" by whatever that push did.
        let adopts: Vec<&str> = declarations
            .adopters
            .iter()
            .filter(|(_, adopters)| adopters.iter().any(|a| &a.module == module))
            .map(|(container, _)| container.as_str())
            .collect();
        if *pushes == 0 && !adopts.is_empty() && effects.prepares_itself.contains(module) {
            found.push(
                Rule::OnePush
                    .broken(format!(
                        "`{module}` declares it adopts {} and its plan prepares it, but never pushes: another module's \
                 push would apply it; a module pushes what it adopts itself",
                        adopts.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
                    ))
                    .of(module.as_str()),
            );
        }
    }
    let mut unique = Vec::with_capacity(found.len());
    for violation in found {
        if !unique.contains(&violation) {
            unique.push(violation);
        }
    }
    // The most telling rule first: the one a refusal names.
    unique.sort_by_key(|v| Rule::ALL.iter().position(|r| *r == v.rule));
    unique
}

/// A container of `module`'s manifest that ran before the run and so may hold `module`'s
/// secrets, with who raised it in words: one the node says `module` owns, or one with no owner
/// recorded that genesis did not raise (a container genesis raised holds its credentials, which
/// the declarations name).
fn holding<'a>(declarations: &'a Declarations, view: &MeshView, module: &str) -> Option<(&'a str, String)> {
    declarations.raises.get(module)?.iter().find_map(|name| {
        let running = view.containers.get(name)?;
        match &running.owner {
            Some(owner) if owner == module => Some((name.as_str(), format!("raised by `{module}`"))),
            None if !declarations.genesis.contains_key(name) => {
                Some((name.as_str(), format!("running {}, which genesis did not raise", running.image)))
            }
            _ => None,
        }
    })
}

/// The rules a set of declarations breaks whatever the mesh holds.
fn declared(declarations: &Declarations) -> Vec<Violation> {
    let mut found = Vec::new();
    for (name, adopters) in &declarations.adopters {
        let genesis = &declarations.genesis[name];
        if adopters.len() > 1 {
            let who: Vec<String> = adopters.iter().map(|a| format!("`{}`", a.module)).collect();
            found.push(
                Rule::OneOwner
                    .broken(format!(
                        "`{name}` (the bundle's `{}`) is declared adopted by {}; one module adopts a container",
                        genesis.id,
                        who.join(" and ")
                    ))
                    .at(name.as_str()),
            );
        }
        for adopter in adopters {
            let module = &adopter.module;
            // What the bundle says the container runs with is handed over, whatever the module
            // declares: a module that leaves it out would have the node seal over it.
            for credential in declarations.runs_with.get(name).into_iter().flatten() {
                if adopter.adoption.credential.as_ref() != Some(credential) {
                    found.push(Rule::CredentialNeverReplaced.broken(format!(
                        "`{name}` (the bundle's `{}`) runs with genesis credential `{credential}`, and `{module}`, \
                         which adopts it, declares no secret that carries it in (`adopts` names `credential` \
                         and `secret`): the node would seal fresh bytes over it",
                        genesis.id
                    )).of(module.as_str()).at(name.as_str()));
                }
            }
            if adopter.name != *name {
                found.push(Rule::GenesisTouchedAsDeclared.broken(format!(
                    "`{module}` declares its container `{}` adopts `{name}` (the bundle's `{}`), but names it `{}`: \
                     the node keys containers on their name, so the push would raise `{}` beside `{name}`",
                    adopter.adoption.container, genesis.id, adopter.name, adopter.name
                )).of(module.as_str()).at(name.as_str()));
                continue;
            }
            if adopter.adoption.how == AdoptedAs::Recreated {
                if adopter.image == genesis.image {
                    found.push(Rule::GenesisTouchedAsDeclared.broken(format!(
                        "`{module}` declares it recreates `{name}` (the bundle's `{}`), but its image `{}` is the one \
                         genesis runs there: the push would keep it, and a plan waiting for the restart would wait \
                         for a change that cannot happen",
                        genesis.id, adopter.image
                    )).of(module.as_str()).at(name.as_str()));
                }
                if !same_volumes(&adopter.volumes, &genesis.volumes) {
                    found.push(
                        Rule::AdoptedKeepsVolumes
                            .broken(format!(
                                "`{module}` would recreate `{name}` on volumes {} where genesis gave it {}",
                                list(&adopter.volumes),
                                list(&genesis.volumes)
                            ))
                            .of(module.as_str())
                            .at(name.as_str()),
                    );
                }
            }
        }
    }
    let mut raisers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (module, names) in &declarations.raises {
        for name in names {
            raisers.entry(name).or_default().push(module);
        }
    }
    for (name, modules) in raisers {
        let mut who: Vec<String> = modules.iter().map(|m| format!("`{m}`")).collect();
        who.dedup();
        if who.len() > 1 {
            found.push(Rule::OneOwner.broken(format!(
                "`{name}` is raised by the manifests of {}; the node keys containers on their name, so each push \
                 would replace the other's",
                who.join(" and ")
            )).at(name));
        } else if modules.len() > 1 {
            found.push(Rule::OneOwner.broken(format!(
                "`{name}` is raised {} times by `{}`'s manifest; the node keys containers on their name, so one \
                 would replace the other",
                modules.len(),
                modules[0]
            )).of(modules[0]).at(name));
        }
        if let Some(genesis) = declarations.genesis.get(name) {
            for module in modules {
                if declarations.adopted_as(module, name).is_none() {
                    found.push(Rule::GenesisTouchedAsDeclared.broken(format!(
                        "`{module}`'s manifest raises a container named `{name}`, which genesis raised (the bundle's \
                         `{}`, {}), and `{module}` does not declare it adopts it: its push would take it over",
                        genesis.id, genesis.image
                    )).of(module).at(name));
                }
            }
        }
    }
    found
}

/// The rules one container's effect breaks; `recreations` counts this run's so far.
fn touched(
    declarations: &Declarations,
    view: &MeshView,
    touch: &Touch,
    recreations: Option<usize>,
    seen: Seen,
) -> Vec<Violation> {
    let mut found = Vec::new();
    let name = touch.container.as_str();
    if let Some(genesis) = declarations.genesis.get(name) {
        // One that is not declared is already named by the declarations' own rules.
        if let Some(how) = declarations.adopted_as(&touch.module, name) {
            let module = &touch.module;
            match (&touch.effect, how) {
                (ContainerEffect::Kept { .. }, _) => {}
                // Adopting is taking over what genesis raised on this node: where it raised
                // nothing, there is nothing to adopt, and a push that creates the container
                // anew would be "adopted" (a genesis credential handed into a store that never
                // held it, a summary saying kept of what was created). A module the control
                // plane has already applied on this node adopted it here before: the node has
                // lost it since, and its push raises it again.
                (ContainerEffect::Created { image, .. }, how) => {
                    let adopted_here = view.modules.iter().any(|k| &k.name == module && k.prepared);
                    if seen == Seen::Predicted && !adopted_here && !view.containers.contains_key(name) {
                        let node =
                            if view.node.is_empty() { "the node".to_string() } else { format!("node `{}`", view.node) };
                        found.push(Rule::GenesisTouchedAsDeclared.broken(format!(
                            "`{name}` (the bundle's `{}`), which `{module}` declares it {}, does not run on {node}: \
                             genesis did not raise it there, so there is nothing to adopt, and the push would \
                             create it anew ({image}). Adopt on the node genesis raised it on",
                            genesis.id,
                            match how {
                                AdoptedAs::Kept => "keeps",
                                AdoptedAs::Recreated => "recreates",
                            },
                        )).of(module.as_str()).at(name));
                    }
                }
                (ContainerEffect::Recreated { from, to, volumes }, AdoptedAs::Kept) => {
                    // Which fields of its declared spec differ from the bundle's: the change a
                    // node recreates it for, image and mounts or not (docs/push-rule.md).
                    let fields = declarations
                        .adopters
                        .get(name)
                        .and_then(|adopters| adopters.iter().find(|a| &a.module == module))
                        .map(|a| genesis.spec.differing_fields(&a.spec))
                        .unwrap_or_default();
                    let differs = if fields.is_empty() {
                        String::new()
                    } else {
                        format!(" (its spec differs from the bundle's in {})", list(&fields))
                    };
                    found.push(Rule::GenesisTouchedAsDeclared.broken(format!(
                        "`{name}` (the bundle's `{}`), which `{module}` declares it keeps, {} recreated{differs}: \
                         {from} → {to}, on {} where it ran on {}",
                        genesis.id,
                        seen.would_be(),
                        list(volumes),
                        list(view.containers.get(name).and_then(|c| c.volumes.as_deref()).unwrap_or(&genesis.volumes))
                    )).of(module.as_str()).at(name));
                }
                (ContainerEffect::Recreated { volumes, .. }, AdoptedAs::Recreated) => {
                    if recreations.unwrap_or(0) > 1 {
                        found.push(
                            Rule::GenesisTouchedAsDeclared
                                .broken(format!(
                                    "`{name}` (the bundle's `{}`) {} recreated {} times; `{module}` declares it is \
                             recreated once",
                                    genesis.id,
                                    seen.would_be(),
                                    recreations.unwrap_or(0)
                                ))
                                .of(module.as_str())
                                .at(name),
                        );
                    }
                    // A prediction's are the manifest's own, which the declarations' rule names.
                    if seen == Seen::Observed && !same_volumes(volumes, &genesis.volumes) {
                        found.push(
                            Rule::AdoptedKeepsVolumes
                                .broken(format!(
                                    "`{name}` {} recreated for `{module}` on volumes {} where genesis gave it {}",
                                    seen.would_be(),
                                    list(volumes),
                                    list(&genesis.volumes)
                                ))
                                .of(module.as_str())
                                .at(name),
                        );
                    }
                }
                (ContainerEffect::Removed, _) => {
                    found.push(
                        Rule::GenesisTouchedAsDeclared
                            .broken(format!(
                                "`{name}` (the bundle's `{}`), which `{module}` declares it {}, {} removed",
                                genesis.id,
                                match how {
                                    AdoptedAs::Kept => "keeps",
                                    AdoptedAs::Recreated => "recreates",
                                },
                                seen.would_be()
                            ))
                            .of(module.as_str())
                            .at(name),
                    );
                }
            }
        }
    }
    let replaces = matches!(touch.effect, ContainerEffect::Recreated { .. } | ContainerEffect::Removed);
    if replaces && !declarations.genesis.contains_key(name) && view.containers.contains_key(name) {
        // A container that ran before the run and that genesis did not raise was raised by a
        // module: only that one may replace it, and only when the mesh can say which it was.
        let module = &touch.module;
        // The control plane's modules say who raised it; failing that, the node's owner label.
        // Where both say, they must agree: a container the node labels another's than the
        // control plane remembers is no container to replace on either's word.
        let would = match seen {
            Seen::Predicted => "would",
            Seen::Observed => "did",
        };
        let labelled = view.containers[name].owner.clone();
        let broken = match (declarations.raised_before.get(name), labelled.as_ref()) {
            (Some(recorded), Some(labelled)) if recorded != labelled => Some(format!(
                "`{name}` was raised by `{recorded}` as the control plane says, and by `{labelled}` as the node's \
                 owner label says: the node and its control plane disagree, and `{module}`'s push {would} replace it"
            )),
            (Some(owner), _) | (None, Some(owner)) if owner == module => None,
            (Some(owner), _) => Some(format!(
                "`{name}` was raised by `{owner}` in an earlier run, and `{module}`'s push {would} replace it"
            )),
            (None, Some(owner)) => Some(format!(
                "`{name}` was raised by `{owner}` as the node's owner label says, and `{module}`'s push {would} replace it"
            )),
            (None, None) => Some(format!(
                "`{name}` runs on the node ({}), and neither the foundation bundle nor any module {} raised it: \
                 `{module}`'s push {would} replace a container nothing declares",
                view.containers[name].image,
                if view.complete { "the control plane has" } else { "this mesh can name" },
            )),
        };
        found.extend(broken.map(|detail| Rule::OneOwner.broken(detail).of(module.as_str()).at(name)));
    }
    if let ContainerEffect::Created { volumes, .. } | ContainerEffect::Recreated { volumes, .. } = &touch.effect {
        let mounted: Vec<String> = mounts(volumes).into_values().collect();
        for (other, genesis) in &declarations.genesis {
            if other == name {
                continue;
            }
            // What the bundle says it holds, and what the mesh shows it mounting now.
            let running = view.containers.get(other).and_then(|c| c.volumes.clone()).unwrap_or_default();
            let held: Vec<String> =
                mounts(&genesis.volumes).into_values().chain(mounts(&running).into_values()).collect();
            if let Some(path) = mounted.iter().find(|p| held.iter().any(|h| overlap(p, h))) {
                found.push(Rule::GenesisVolumesHeldOnce.broken(format!(
                    "`{}`'s container `{name}` {} mount `{path}`, which genesis's `{other}` (the bundle's `{}`) \
                     holds: two containers on one store of data",
                    touch.module,
                    match seen {
                        Seen::Predicted => "would",
                        Seen::Observed => "did",
                    },
                    genesis.id
                )).of(touch.module.as_str()).at(name));
            }
        }
    }
    found
}

/// Whether two host paths share files: the same path, or one inside the other, however each
/// is spelled (`//`, `.`, `..`, a trailing `/`). A relative path is taken as it is written.
fn overlap(a: &str, b: &str) -> bool {
    let (a, b) = (components(a), components(b));
    let shorter = a.len().min(b.len());
    a[..shorter] == b[..shorter]
}

/// A path's components after `.`, `..` and repeated or trailing separators are resolved as
/// a path is, without asking the file system (a node's, not this machine's).
fn components(path: &str) -> Vec<&str> {
    let mut kept: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                kept.pop();
            }
            part => kept.push(part),
        }
    }
    kept
}

fn list(volumes: &[String]) -> String {
    if volumes.is_empty() {
        return "no volumes".to_string();
    }
    volumes.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::Prediction;

    #[test]
    fn paths_overlap_however_they_are_spelled_and_when_one_holds_the_other() {
        for (a, b) in [
            ("/var/lib/mesh/store", "/var/lib/mesh/store"),
            ("/var/lib/mesh/store/", "/var/lib/mesh/store"),
            ("//var/lib/mesh/./store", "/var/lib/mesh/store"),
            ("/var/lib/mesh/x/../store", "/var/lib/mesh/store"),
            ("/var/lib/mesh/store/pgdata", "/var/lib/mesh/store"),
            ("/var/lib/mesh", "/var/lib/mesh/store"),
            ("/", "/etc/mesh/bus"),
            ("/etc/mesh/bus/accounts.conf", "/etc/mesh/bus"),
        ] {
            assert!(overlap(a, b), "{a} and {b}");
            assert!(overlap(b, a), "{b} and {a}");
        }
        for (a, b) in [("/var/lib/mesh/vault", "/var/lib/mesh/store"), ("/var/lib/mesh/store2", "/var/lib/mesh/store")]
        {
            assert!(!overlap(a, b), "{a} and {b}");
        }
    }

    const VAULT: &[u8] = br#"{"name": "mesh-vault", "secrets": ["unseal-key"],
        "resources": [{"id": "vault", "type": "container", "name": "mesh-vault", "image": "vault:1"}]}"#;

    /// The vault's plan pushed on a node where the vault runs already, raised by it, as a
    /// backend sees that node: one that knows whether the node holds the vault's key
    /// (`Some`), or one that cannot say (`None`).
    fn vault_again(holds: Option<bool>) -> (MeshView, Prediction) {
        use crate::effect::{ContainerSpec, KnownModule, Planned, Spec, predict_ahead};
        let manifest = std::sync::Arc::new(mesh_adopt_manifest::ModuleManifest::parse(VAULT).unwrap());
        let commands: Vec<crate::model::PluginCommand> =
            ["module add /v.json", "prepare node-1 mesh-vault", "push node-1"]
                .iter()
                .map(|c| crate::model::PluginCommand::from_words(c.split(' ').map(String::from).collect()))
                .collect();
        let mut view = MeshView::looked();
        let digest = Spec::of_module(&manifest.resolved_containers()[0]).digest();
        let running = ContainerSpec::new("vault:1", Some(vec![])).with_digest(Some(digest));
        view.containers.insert("mesh-vault".into(), running.with_owner(Some("mesh-vault".into())));
        if let Some(holds) = holds {
            view.modules_known = true;
            let settled = if holds { ["unseal-key".to_string()].into() } else { Default::default() };
            view.modules =
                vec![KnownModule { name: "mesh-vault".into(), manifest: manifest.clone(), prepared: true, settled }];
        }
        let (prediction, _) =
            predict_ahead(&view, &[Planned { module: "mesh-vault", manifest: &manifest, commands: &commands }]);
        (view, prediction)
    }

    #[test]
    fn a_container_its_control_plane_and_its_node_name_two_owners_of_is_not_replaced() {
        // The vault's spec changed, so its push recreates the running vault.
        let changed: &[u8] = br#"{"name": "mesh-vault", "secrets": ["unseal-key"],
            "resources": [{"id": "vault", "type": "container", "name": "mesh-vault", "image": "vault:2"}]}"#;
        let manifest = std::sync::Arc::new(mesh_adopt_manifest::ModuleManifest::parse(changed).unwrap());
        let (mut view, _) = vault_again(Some(true));
        view.modules[0].manifest = manifest.clone();
        let mut declarations = Declarations::of(&crate::catalogue::Foundation::default(), [("mesh-vault", &*manifest)]);
        declarations.learn_earlier(&view.modules);
        let predict = |view: &MeshView| {
            let commands: Vec<crate::model::PluginCommand> = ["push node-1"]
                .iter()
                .map(|c| crate::model::PluginCommand::from_words(c.split(' ').map(String::from).collect()))
                .collect();
            let planned = [crate::effect::Planned { module: "mesh-vault", manifest: &manifest, commands: &commands }];
            crate::effect::predict_ahead(view, &planned).0
        };
        // Both say the vault raised it: its own push may replace it.
        assert_eq!(rules(&declarations, &view, &predict(&view), Seen::Predicted), vec![]);
        // The node labels it another's: the two disagree, and it is not replaced on either's word.
        let vault = view.containers.remove("mesh-vault").unwrap();
        view.containers.insert("mesh-vault".into(), vault.with_owner(Some("intruder".into())));
        let broken = rules(&declarations, &view, &predict(&view), Seen::Predicted);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert_eq!(broken[0].rule, Rule::OneOwner);
        assert!(broken[0].detail.contains("raised by `mesh-vault` as the control plane says, and by `intruder`"));
    }

    #[test]
    fn a_secret_the_node_holds_is_not_sealed_again_and_one_it_may_hold_is_not_sealed_over() {
        let manifest = mesh_adopt_manifest::ModuleManifest::parse(VAULT).unwrap();
        let declarations = Declarations::of(&crate::catalogue::Foundation::default(), [("mesh-vault", &manifest)]);
        let vault_key = || vec![("mesh-vault".to_string(), "unseal-key".to_string())];
        // The node says it holds the key: nothing sealed, the key named as held.
        let (view, prediction) = vault_again(Some(true));
        assert_eq!((prediction.sealed(), prediction.held.clone()), (vec![], vault_key()));
        assert_eq!(rules(&declarations, &view, &prediction, Seen::Predicted), vec![]);
        // The node says it holds none (a secret new to the module): sealed, and no rule broken.
        let (view, prediction) = vault_again(Some(false));
        assert_eq!((prediction.sealed(), prediction.held.clone()), (vault_key(), vec![]));
        assert_eq!(rules(&declarations, &view, &prediction, Seen::Predicted), vec![]);
        // The mesh cannot say: the seal may be over the key the running vault holds. Refused.
        let (view, prediction) = vault_again(None);
        let broken = rules(&declarations, &view, &prediction, Seen::Predicted);
        assert_eq!(broken.iter().map(|v| v.rule).collect::<Vec<_>>(), [Rule::CredentialNeverReplaced]);
        for fragment in
            ["`mesh-vault` (raised by `mesh-vault`) already runs", "configure the live mesh's `state` command"]
        {
            assert!(broken[0].detail.contains(fragment), "{fragment}: {}", broken[0].detail);
        }
    }
}
