//! The node's push rule run forward, case by case: each container kept, recreated or created,
//! each secret accepted, sealed or held; only prepared modules applied, those the control plane
//! had before the run included; and the mesh as each push should find it and leave it.

use serde_json::json;

use super::{World, known, manifest, pairs};
use crate::effect::{ContainerSpec, MeshView, Prediction};

/// Each push of `prediction` in words, one line a push: who pushed, then what happens to each
/// container (by whose manifest) and each secret the push settles; then the secrets held
/// before the run, and those of them accepted again.
fn described(prediction: &Prediction) -> Vec<String> {
    let mut lines: Vec<String> = prediction
        .pushes
        .iter()
        .map(|push| {
            let mut words: Vec<String> =
                push.containers.iter().map(|t| format!("{} {} ({})", t.container, t.effect, t.module)).collect();
            words.extend(push.secrets.iter().map(|s| {
                let how = match (s.accepted, &s.credential) {
                    (true, Some(credential)) => format!("accepted as {credential}"),
                    (true, None) => "accepted".to_string(),
                    (false, _) => "sealed".to_string(),
                };
                format!("secret {}/{} {how}", s.module, s.secret)
            }));
            if words.is_empty() {
                words.push("nothing".into());
            }
            format!("{}: {}", push.module, words.join("; "))
        })
        .collect();
    let secrets = |of: &mut dyn Iterator<Item = (&String, &String)>| -> String {
        of.map(|(module, secret)| format!("{module}/{secret}")).collect::<Vec<_>>().join(", ")
    };
    if !prediction.held.is_empty() {
        lines.push(format!("held before: {}", secrets(&mut prediction.held.iter().map(|(m, s)| (m, s)))));
    }
    if !prediction.accepted_again.is_empty() {
        let again = secrets(&mut prediction.accepted_again.iter().map(|s| (&s.module, &s.secret)));
        lines.push(format!("accepted again: {again}"));
    }
    lines
}

/// The store genesis raised, as this view of the node has it.
fn store(view: &mut MeshView) -> &mut ContainerSpec {
    view.containers.get_mut("mesh-store").expect("genesis raised the store")
}

/// The control plane holding `store`, registered and prepared by an earlier run with the
/// manifest it has now, the node holding its secret.
fn store_known(view: &mut MeshView) {
    let store = manifest(&World::phase_three().modules[0].manifest);
    view.modules.push(known("store", &store, true, &["superuser"]));
}

/// A row's edit of the world: what a plan says, what the node holds.
type Case = fn(&mut World);

#[test]
fn each_push_applies_every_prepared_module_by_the_push_rule() {
    let cases: Vec<(Case, &[&str])> = vec![
        // Phase three: the store kept and handed its credential, the bus recreated once, the
        // vault created and its key sealed; every push applying every module prepared so far.
        (
            |_| {},
            &[
                "store: mesh-store kept postgres:16 (store); secret store/superuser accepted as store-superuser",
                "bus: mesh-store kept postgres:16 (store); mesh-bus recreated nats:2 → nats-snapshot:1 (bus)",
                "vault: mesh-store kept postgres:16 (store); mesh-bus kept nats-snapshot:1 (bus); \
                 mesh-vault created vault:1 (vault); secret vault/unseal-key sealed",
            ],
        ),
        // A module not prepared is not applied, even by its own push.
        (
            |w| w.plan("store").retain(|c| !c.starts_with("prepare")),
            &[
                "store: nothing",
                "bus: mesh-bus recreated nats:2 → nats-snapshot:1 (bus)",
                "vault: mesh-bus kept nats-snapshot:1 (bus); mesh-vault created vault:1 (vault); \
                 secret vault/unseal-key sealed",
            ],
        ),
        // A secret not accepted before the push is sealed by it...
        (
            |w| w.plan("store").retain(|c| !c.starts_with("secret accept")),
            &[
                "store: mesh-store kept postgres:16 (store); secret store/superuser sealed",
                "bus: mesh-store kept postgres:16 (store); mesh-bus recreated nats:2 → nats-snapshot:1 (bus)",
                "vault: mesh-store kept postgres:16 (store); mesh-bus kept nats-snapshot:1 (bus); \
                 mesh-vault created vault:1 (vault); secret vault/unseal-key sealed",
            ],
        ),
        // ...and one accepted after its push, too: the push settled it.
        (
            |w| {
                let accept = w.plan("store").remove(1);
                w.plan("store").push(accept);
                w.modules.truncate(1);
            },
            &["store: mesh-store kept postgres:16 (store); secret store/superuser sealed"],
        ),
        // A secret the node held before the run is not sealed again, and is said to be held...
        (
            |w| {
                w.plan("store").retain(|c| !c.starts_with("secret accept"));
                w.modules.truncate(1);
                w.on_node = store_known;
            },
            &["store: mesh-store kept postgres:16 (store)", "held before: store/superuser"],
        ),
        // ...and one held and accepted again is said to be taken from the value carried in.
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = store_known;
            },
            &[
                "store: mesh-store kept postgres:16 (store)",
                "held before: store/superuser",
                "accepted again: store/superuser",
            ],
        ),
        // A module the control plane had before the run, prepared, is applied again by every push.
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    let cache = manifest(&json!({"name": "cache", "resources": [
                        {"id": "c", "type": "container", "name": "mesh-cache", "image": "cache:1"}]}));
                    v.containers.insert("mesh-cache".into(), ContainerSpec::new("cache:1", Some(vec![])));
                    v.modules.push(known("cache", &cache, true, &[]));
                }
            },
            &["store: mesh-cache kept cache:1 (cache); mesh-store kept postgres:16 (store); \
               secret store/superuser accepted as store-superuser"],
        ),
        // One it had, not prepared, is not.
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    let cache = manifest(&json!({"name": "cache", "resources": [
                        {"id": "c", "type": "container", "name": "mesh-cache", "image": "cache:1"}]}));
                    v.modules.push(known("cache", &cache, false, &[]));
                }
            },
            &["store: mesh-store kept postgres:16 (store); secret store/superuser accepted as store-superuser"],
        ),
        // A module registered again is applied by the manifest this run registers...
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    let mut old = World::phase_three().modules[0].manifest.clone();
                    old["resources"][0]["image"] = json!("postgres:15");
                    v.modules.push(known("store", &manifest(&old), true, &["superuser"]));
                }
            },
            &[
                "store: mesh-store kept postgres:16 (store)",
                "held before: store/superuser",
                "accepted again: store/superuser",
            ],
        ),
        // ...and, not registered again, by the one the control plane has.
        (
            |w| {
                w.plan("store").retain(|c| !c.starts_with("module add"));
                w.modules.truncate(1);
                w.on_node = |v| {
                    let mut old = World::phase_three().modules[0].manifest.clone();
                    old["resources"][0]["image"] = json!("postgres:15");
                    v.modules.push(known("store", &manifest(&old), true, &["superuser"]));
                }
            },
            &[
                "store: mesh-store recreated postgres:16 → postgres:15 (store)",
                "held before: store/superuser",
                "accepted again: store/superuser",
            ],
        ),
        // Where the node recorded a digest, the digest alone decides: another image, kept...
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| store(v).image = "postgres:16-relabelled".into();
            },
            &["store: mesh-store kept postgres:16 (store); secret store/superuser accepted as store-superuser"],
        ),
        // ...another digest, recreated.
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| store(v).digest = crate::effect::SpecDigest::parse(&"e".repeat(64));
            },
            &["store: mesh-store recreated postgres:16 → postgres:16 (store); \
               secret store/superuser accepted as store-superuser"],
        ),
        // Where it did not, the image and mounts decide: the same, kept...
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| store(v).digest = None;
            },
            &["store: mesh-store kept postgres:16 (store); secret store/superuser accepted as store-superuser"],
        ),
        // ...mounts the node does not show, not compared...
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    store(v).digest = None;
                    store(v).volumes = None;
                }
            },
            &["store: mesh-store kept postgres:16 (store); secret store/superuser accepted as store-superuser"],
        ),
        // ...other mounts, recreated...
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    store(v).digest = None;
                    store(v).volumes = Some(vec!["/srv/other:/var/lib/postgresql/data".into()]);
                }
            },
            &["store: mesh-store recreated postgres:16 → postgres:16 (store); \
               secret store/superuser accepted as store-superuser"],
        ),
        // ...another image, recreated.
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    store(v).digest = None;
                    store(v).image = "postgres:15".into();
                }
            },
            &["store: mesh-store recreated postgres:15 → postgres:16 (store); \
               secret store/superuser accepted as store-superuser"],
        ),
        // No container of its name on the node: created.
        (
            |w| {
                w.modules.truncate(1);
                w.on_node = |v| {
                    v.containers.remove("mesh-store");
                };
            },
            &["store: mesh-store created postgres:16 (store); secret store/superuser accepted as store-superuser"],
        ),
    ];
    let mut problems = Vec::new();
    for (at, (case, pushes)) in cases.into_iter().enumerate() {
        let mut world = World::phase_three();
        case(&mut world);
        let (_, prediction, _) = world.predict();
        let said = described(&prediction);
        if said != pushes {
            problems.push(format!("case {at}: {said:#?}, not {pushes:#?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_push_is_counted_and_each_module_preparing_itself_named() {
    let (_, prediction, _) = World::phase_three().predict();
    let counted = |p: &Prediction| p.pushes_by_module.iter().map(|(m, n)| (m.clone(), *n)).collect::<Vec<_>>();
    let count = |pairs: &[(&str, usize)]| pairs.iter().map(|(m, n)| (m.to_string(), *n)).collect::<Vec<_>>();
    assert_eq!(counted(&prediction), count(&[("bus", 1), ("store", 1), ("vault", 1)]));
    assert_eq!(prediction.prepares_itself, ["bus", "store", "vault"].map(String::from).into());
    // A plan that pushes twice is counted twice; one that pushes never, as none.
    let mut world = World::phase_three();
    world.plan("vault").push("push node-1".into());
    world.plan("bus").retain(|c| c != "push node-1");
    let (_, prediction, _) = world.predict();
    assert_eq!(counted(&prediction), count(&[("bus", 0), ("store", 1), ("vault", 2)]));
    // A module prepared by another's plan does not prepare itself.
    let mut world = World::phase_three();
    world.plan("bus").retain(|c| !c.starts_with("prepare"));
    world.plan("vault").insert(1, "prepare node-1 bus".into());
    let (_, prediction, _) = world.predict();
    assert_eq!(prediction.prepares_itself, ["store", "vault"].map(String::from).into());
}

#[test]
fn the_mesh_before_each_push_is_the_one_the_pushes_before_it_leave() {
    let (view, prediction, ahead) = World::phase_three().predict();
    let at: Vec<(&str, usize)> = ahead.iter().map(|a| (a.module.as_str(), a.command)).collect();
    assert_eq!(at, [("store", 3), ("bus", 2), ("vault", 2)]);
    // Before the first push: the node as the run found it, the store registered and prepared,
    // its secret accepted but not yet settled.
    let first = &ahead[0];
    assert_eq!(first.expected.containers, view.containers);
    let modules: Vec<(&str, bool, usize)> =
        first.expected.modules.iter().map(|k| (k.name.as_str(), k.prepared, k.settled.len())).collect();
    assert_eq!(modules, [("store", true, 0)]);
    assert_eq!(first.accepted, pairs(&[("store", "superuser")]));
    assert_eq!((first.node.as_str(), first.expected.looked, first.expected.modules_known), ("node-1", true, true));
    // Before each later push: the node as the push before it left it, and what it settled.
    for (before, after) in ahead[1..].iter().zip(&prediction.pushes) {
        assert_eq!(before.expected.containers, after.after, "before {}'s push", before.module);
    }
    let second: Vec<(&str, bool, Vec<&str>)> = ahead[1]
        .expected
        .modules
        .iter()
        .map(|k| (k.name.as_str(), k.prepared, k.settled.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(second, [("store", true, vec!["superuser"]), ("bus", true, vec![])]);
    // What a push leaves: a kept container as it ran (genesis's owner, its state); a recreated
    // one on the module's spec, owned by the module, running as the node will say.
    let after_bus = &prediction.pushes[1].after;
    assert_eq!(after_bus["mesh-store"], view.containers["mesh-store"]);
    let bus = &after_bus["mesh-bus"];
    let pushed = crate::effect::pushed_containers(&manifest(&World::phase_three().modules[1].manifest));
    assert_eq!(bus.image, "nats-snapshot:1");
    assert_eq!(bus.digest.as_ref(), Some(&pushed[0].digest));
    assert_eq!((bus.owner.as_deref(), bus.running), (Some("bus"), None));
}

#[test]
fn the_phase_changes_each_container_once_and_says_what_a_saved_plan_binds() {
    let (_, prediction, _) = World::phase_three().predict();
    let changes: Vec<String> =
        prediction.changes().iter().map(|t| format!("{} {} (by {})", t.container, t.effect, t.module)).collect();
    assert_eq!(
        changes,
        [
            "mesh-store kept postgres:16 (by store)",
            "mesh-bus recreated nats:2 → nats-snapshot:1 (by bus)",
            "mesh-vault created vault:1 (by vault)",
        ]
    );
    assert_eq!(prediction.sealed(), [("vault".to_string(), "unseal-key".to_string())]);
}
