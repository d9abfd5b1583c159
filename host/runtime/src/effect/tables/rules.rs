//! Each rule of the mesh decided case by case: for every rule, the smallest world that keeps
//! it, the smallest change that breaks it, and what the broken rule says; and the node held to
//! the prediction after a push (`effect-as-predicted`), field by field.

use serde_json::{Value, json};

use super::{World, known, manifest, node, removed};
use crate::effect::{ContainerSpec, MeshView, Rule, Seen, SpecDigest, landed_differences};

/// A row's edit of the world: what a manifest or plan says, what the node holds or did.
type Case = fn(&mut World);

/// `vault`'s container mounting `volumes`.
fn vault_mounts(world: &mut World, volumes: Value) {
    world.manifest("vault")["resources"][0]["volumes"] = volumes;
}

/// `vault`'s container named `mesh-cache`, the name of a container the node already runs.
fn vault_as_cache(world: &mut World) {
    world.manifest("vault")["resources"][0]["name"] = json!("mesh-cache");
}

/// The node running `mesh-cache`, which genesis did not raise, owned as its label says.
fn cache_on_node(view: &mut MeshView, owner: Option<&str>) {
    let running = ContainerSpec::new("cache:1", Some(vec![])).with_owner(owner.map(String::from));
    view.containers.insert("mesh-cache".into(), running);
}

/// The node running `mesh-vault` already (its volumes not said), owned as its label says.
fn vault_on_node(view: &mut MeshView, owner: Option<&str>) {
    let running = ContainerSpec::new("vault:1", None).with_owner(owner.map(String::from));
    view.containers.insert("mesh-vault".into(), running);
}

/// The node without the store genesis raised.
fn store_gone(view: &mut MeshView) {
    view.containers.remove("mesh-store");
}

#[test]
fn each_rule_is_kept_by_its_smallest_world_and_broken_by_the_smallest_change_saying_what_broke_it() {
    use Rule::*;
    use Seen::{Observed, Predicted};
    let cases: Vec<(Seen, Case, &[Rule], &[&str])> = vec![
        // The world as it stands keeps every rule, predicted and as the node did it.
        (Predicted, |_| {}, &[], &[]),
        (Observed, |_| {}, &[], &[]),
        // genesis-touched-as-declared: the adopting container named otherwise than genesis's,
        // so a second container would mount the store's data.
        (
            Predicted,
            |w| w.manifest("store")["resources"][0]["name"] = json!("mesh-db"),
            &[GenesisTouchedAsDeclared, GenesisVolumesHeldOnce],
            &["`store` declares its container `server` adopts `mesh-store` (the bundle's `store`), but names it"],
        ),
        // A container declared recreated onto the image genesis runs: the push would keep it.
        (
            Predicted,
            |w| w.manifest("bus")["resources"][0]["image"] = json!("nats:2"),
            &[GenesisTouchedAsDeclared],
            &["`bus` declares it recreates `mesh-bus` (the bundle's `bus`), but its image `nats:2` is the one genesis"],
        ),
        // A module raising a container genesis raised, without declaring it adopts it.
        (
            Predicted,
            |w| w.manifest("store")["adopts"] = json!([]),
            &[GenesisTouchedAsDeclared],
            &["`store`'s manifest raises a container named `mesh-store`, which genesis raised", "does not declare it"],
        ),
        // Adopted on a node genesis did not raise it on: the push would create it anew.
        (
            Predicted,
            |w| w.on_node = store_gone,
            &[GenesisTouchedAsDeclared],
            &["`mesh-store` (the bundle's `store`), which `store` declares it keeps, does not run on node `node-1`"],
        ),
        // ...unless the module adopted it on this node before, and the node has lost it since...
        (
            Predicted,
            |w| {
                w.on_node = |v| {
                    store_gone(v);
                    let store = manifest(&World::phase_three().modules[0].manifest);
                    v.modules.push(known("store", &store, true, &["superuser"]));
                }
            },
            &[],
            &[],
        ),
        // ...and what a node did is not held to it: that rule is the prediction's.
        (Observed, |w| w.on_node = store_gone, &[], &[]),
        // A container declared kept whose spec differs from the bundle's: recreated.
        (
            Predicted,
            |w| w.manifest("store")["resources"][0]["environment"] = json!({"PGDATA": "/tmp"}),
            &[GenesisTouchedAsDeclared],
            &["`store` declares it keeps, would be recreated (its spec differs from the bundle's in `environment`)"],
        ),
        // A container declared recreated once, recreated twice by the node.
        (
            Observed,
            |w| w.on_effects = |p| p.pushes.push(p.pushes[1].clone()),
            &[GenesisTouchedAsDeclared],
            &["`mesh-bus` (the bundle's `bus`) was recreated 2 times; `bus` declares it is recreated once"],
        ),
        // A container genesis raised, taken away.
        (
            Observed,
            |w| w.on_effects = |p| p.pushes[0].containers.push(removed("mesh-store", "store")),
            &[GenesisTouchedAsDeclared],
            &["`mesh-store` (the bundle's `store`), which `store` declares it keeps, was removed"],
        ),
        // adopted-keeps-volumes: genesis's volumes in another order are genesis's volumes.
        (
            Predicted,
            |w| {
                w.manifest("bus")["resources"][0]["volumes"] =
                    json!(["/etc/mesh/bus:/etc/nats:ro", "/var/lib/mesh/bus:/data"])
            },
            &[],
            &[],
        ),
        // Recreated on other volumes: refused from what the module declares...
        (
            Predicted,
            |w| w.manifest("bus")["resources"][0]["volumes"][0] = json!("/var/lib/mesh/bus2:/data"),
            &[AdoptedKeepsVolumes],
            &["`bus` would recreate `mesh-bus` on volumes `/var/lib/mesh/bus2:/data`, `/etc/mesh/bus:/etc/nats:ro` \
               where genesis gave it `/var/lib/mesh/bus:/data`, `/etc/mesh/bus:/etc/nats:ro`"],
        ),
        // ...and, as the node did it, named again as done.
        (
            Observed,
            |w| w.manifest("bus")["resources"][0]["volumes"][0] = json!("/var/lib/mesh/bus2:/data"),
            &[AdoptedKeepsVolumes, AdoptedKeepsVolumes],
            &["`mesh-bus` was recreated for `bus` on volumes `/var/lib/mesh/bus2:/data`"],
        ),
        // one-owner: two modules declaring they adopt one container.
        (
            Predicted,
            |w| {
                let mut twin = World::phase_three().modules.remove(0);
                twin.name = "store-twin".into();
                twin.manifest["name"] = json!("store-twin");
                twin.plan = twin.plan.iter().map(|c| c.replace(" store", " store-twin")).collect();
                w.modules.push(twin);
            },
            &[OneOwner, OneOwner],
            &[
                "`mesh-store` (the bundle's `store`) is declared adopted by `store` and `store-twin`",
                "`mesh-store` is raised by the manifests of `store` and `store-twin`",
            ],
        ),
        // One manifest raising one name twice.
        (
            Predicted,
            |w| {
                let vault = w.manifest("vault")["resources"][0].clone();
                w.manifest("vault")["resources"].as_array_mut().unwrap().push(vault);
            },
            &[OneOwner],
            &["`mesh-vault` is raised 2 times by `vault`'s manifest"],
        ),
        // Replacing a container a module the control plane has raised in an earlier run...
        (
            Predicted,
            |w| {
                vault_as_cache(w);
                w.on_node = |v| {
                    cache_on_node(v, Some("cache"));
                    let cache = manifest(&json!({"name": "cache", "resources": [
                        {"id": "c", "type": "container", "name": "mesh-cache", "image": "cache:1"}]}));
                    v.modules.push(known("cache", &cache, false, &[]));
                };
            },
            &[OneOwner],
            &["`mesh-cache` was raised by `cache` in an earlier run, and `vault`'s push would replace it"],
        ),
        // ...or one the node's owner label gives to another module...
        (
            Predicted,
            |w| {
                vault_as_cache(w);
                w.on_node = |v| cache_on_node(v, Some("cache"));
            },
            &[OneOwner],
            &["`mesh-cache` was raised by `cache` as the node's owner label says"],
        ),
        // ...or one nothing says who raised...
        (
            Predicted,
            |w| {
                vault_as_cache(w);
                w.on_node = |v| cache_on_node(v, None);
            },
            &[OneOwner],
            &["`mesh-cache` runs on the node (cache:1), and neither the foundation bundle nor any module the control \
               plane has raised it: `vault`'s push would replace a container nothing declares"],
        ),
        // ...but a module replaces a container of its own.
        (
            Predicted,
            |w| {
                vault_as_cache(w);
                w.on_node = |v| cache_on_node(v, Some("vault"));
            },
            &[],
            &[],
        ),
        // credential-never-replaced: the adopter of a container genesis runs with a credential
        // says no secret carries it in.
        (
            Predicted,
            |w| {
                w.manifest("store")["adopts"][0]
                    .as_object_mut()
                    .unwrap()
                    .retain(|k, _| k != "credential" && k != "secret")
            },
            &[CredentialNeverReplaced],
            &["`mesh-store` (the bundle's `store`) runs with genesis credential `store-superuser`, and `store`, \
                 which adopts it, declares no secret that carries it in"],
        ),
        // The secret that carries it, not accepted before the push: sealed over.
        (
            Predicted,
            |w| w.plan("store").retain(|c| !c.starts_with("secret accept")),
            &[CredentialNeverReplaced],
            &["the push would seal fresh bytes for `store`'s secret `superuser`, but `mesh-store` runs with genesis \
               credential `store-superuser`, which that secret carries: it must be accepted before the push"],
        ),
        // ...accepted, but only after the push: sealed over all the same.
        (
            Predicted,
            |w| {
                let accept = w.plan("store").remove(1);
                w.plan("store").push(accept);
            },
            &[CredentialNeverReplaced],
            &["seal fresh bytes for `store`'s secret `superuser`"],
        ),
        // A module's own container runs where the mesh cannot say whether the node holds its
        // secret: a seal may be over the one the container holds...
        (
            Predicted,
            |w| {
                w.on_node = |v| {
                    v.modules_known = false;
                    vault_on_node(v, Some("vault"));
                }
            },
            &[CredentialNeverReplaced],
            &["seal fresh bytes for `vault`'s secret `unseal-key`, but `mesh-vault` (raised by `vault`) already runs \
               on the node, and this mesh cannot say whether the node holds that secret"],
        ),
        // ...the same for one no owner is recorded for, which genesis did not raise...
        (
            Predicted,
            |w| {
                w.on_node = |v| {
                    v.modules_known = false;
                    vault_on_node(v, None);
                }
            },
            &[CredentialNeverReplaced],
            &["`mesh-vault` (running vault:1, which genesis did not raise) already runs"],
        ),
        // ...but where the mesh says the node holds none, the seal is over nothing.
        (Predicted, |w| w.on_node = |v| vault_on_node(v, Some("vault")), &[], &[]),
        // genesis-volumes-held-once: a new container mounting inside what the store holds...
        (
            Predicted,
            |w| vault_mounts(w, json!(["/var/lib/mesh/store/pg:/vault"])),
            &[GenesisVolumesHeldOnce],
            &["`vault`'s container `mesh-vault` would mount `/var/lib/mesh/store/pg`, which genesis's `mesh-store` \
               (the bundle's `store`) holds"],
        ),
        // ...above it, so over the store and the bus alike...
        (
            Predicted,
            |w| vault_mounts(w, json!(["/var/lib/mesh:/vault"])),
            &[GenesisVolumesHeldOnce, GenesisVolumesHeldOnce],
            &["which genesis's `mesh-bus`", "which genesis's `mesh-store`"],
        ),
        // ...spelled otherwise...
        (
            Predicted,
            |w| vault_mounts(w, json!(["//var/lib/mesh/./store/:/vault"])),
            &[GenesisVolumesHeldOnce],
            &["which genesis's `mesh-store`"],
        ),
        // ...or what the store mounts now beyond the bundle.
        (
            Predicted,
            |w| {
                vault_mounts(w, json!(["/srv/extra:/vault"]));
                w.on_node = |v| {
                    let store = v.containers.get_mut("mesh-store").unwrap();
                    store.volumes.as_mut().unwrap().push("/srv/extra:/extra".into());
                }
            },
            &[GenesisVolumesHeldOnce],
            &["would mount `/srv/extra`, which genesis's `mesh-store`"],
        ),
        // A path that only begins like the store's is another path.
        (Predicted, |w| vault_mounts(w, json!(["/var/lib/mesh/store2:/vault"])), &[], &[]),
        // one-push: a plan that pushes twice.
        (
            Predicted,
            |w| w.plan("vault").push("push node-1".into()),
            &[OnePush],
            &["`vault`'s plan pushes 2 times; a module pushes once"],
        ),
        // A module that adopts, prepares itself and leaves its push to another module's.
        (
            Predicted,
            |w| w.plan("bus").retain(|c| c != "push node-1"),
            &[OnePush],
            &["`bus` declares it adopts `mesh-bus` and its plan prepares it, but never pushes"],
        ),
        // One that adopts nothing may leave itself to another's push.
        (Predicted, |w| w.plan("vault").retain(|c| c != "push node-1"), &[], &[]),
    ];
    let mut problems = Vec::new();
    for (at, (seen, case, rules, says)) in cases.into_iter().enumerate() {
        let mut world = World::phase_three();
        case(&mut world);
        let broken = world.judge(seen);
        let names: Vec<Rule> = broken.iter().map(|v| v.rule).collect();
        if names != rules {
            problems.push(format!("case {at} ({seen:?}) broke {names:?}, not {rules:?}: {broken:#?}"));
        }
        for fragment in says {
            if !broken.iter().any(|v| v.detail.contains(fragment)) {
                problems.push(format!("case {at}: no broken rule says {fragment:?}: {broken:#?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A spec digest of one repeated hex digit, told apart by its short form.
fn digest(digit: char) -> Option<SpecDigest> {
    SpecDigest::parse(&digit.to_string().repeat(64))
}

/// A row's edit of the container the node runs after a push, at first as predicted.
type Landing = fn(&mut ContainerSpec);

#[test]
fn the_node_after_a_push_is_held_to_the_prediction_in_every_field_the_mesh_shows() {
    let predicted = || ContainerSpec::new("postgres:16", Some(vec!["/srv/a:/data".into()])).with_digest(digest('a'));
    let expected = [("mesh-store".to_string(), predicted())].into();
    let cases: Vec<(Landing, &[&str])> = vec![
        // As predicted: nothing to say.
        (|_| {}, &[]),
        // Another image.
        (
            |c| c.image = "postgres:17".into(),
            &["`mesh-store` runs postgres:17, where the prediction has it run postgres:16"],
        ),
        // Another spec: named by both digests' short forms.
        (
            |c| c.digest = digest('b'),
            &["`mesh-store` was created from the spec bbbbbbbbbbbb, where the prediction has the spec aaaaaaaaaaaa"],
        ),
        // No digest recorded on the node: the rest is compared, the spec is not.
        (|c| c.digest = None, &[]),
        // Other mounts.
        (
            |c| c.volumes = Some(vec!["/srv/b:/data".into()]),
            &["`mesh-store` is mounted on /srv/b:/data, where the prediction has /srv/a:/data"],
        ),
        // Mounts the mesh does not show are not compared.
        (|c| c.volumes = None, &[]),
        // A mount's options aside, a mount is its host path at its inside path.
        (|c| c.volumes = Some(vec!["/srv/a:/data:ro".into()]), &[]),
        // Whether it runs is the node's, not the push's: not held to the prediction.
        (|c| c.running = Some(false), &[]),
    ];
    let mut problems = Vec::new();
    for (at, (edit, differences)) in cases.into_iter().enumerate() {
        let mut found = node();
        let mut container = predicted();
        edit(&mut container);
        found.containers.insert("mesh-store".into(), container);
        let said = landed_differences(&expected, &found);
        if said != differences {
            problems.push(format!("case {at}: {said:?}, not {differences:?}"));
        }
    }
    // A container the prediction has and the node does not.
    let said = landed_differences(&expected, &node());
    if said != ["`mesh-store` is not on the node, where the prediction has it run postgres:16"] {
        problems.push(format!("a container gone: {said:?}"));
    }
    // One the node runs that the prediction says nothing of is not the push's.
    let mut found = node();
    found.containers.insert("mesh-store".into(), predicted());
    found.containers.insert("mesh-other".into(), ContainerSpec::new("other:1", None));
    if !landed_differences(&expected, &found).is_empty() {
        problems.push("a container the prediction does not name was held to it".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
