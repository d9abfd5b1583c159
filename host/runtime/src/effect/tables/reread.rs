//! The mesh read again before a push, field by field: each field the re-read compares, changed
//! alone, is found and named with what was predicted and what was found; nothing changed is
//! clear; a field one side does not know is not compared.

use std::sync::Arc;

use mesh_adopt_manifest::ModuleManifest;
use serde_json::{Value, json};

use super::{known, manifest, node, pairs};
use crate::effect::reread::moved;
use crate::effect::{AheadOfPush, ContainerSpec, MeshView, Moved, Reread, SpecDigest};

/// A spec digest of one repeated hex digit, told apart by its short form.
fn digest(digit: char) -> Option<SpecDigest> {
    SpecDigest::parse(&digit.to_string().repeat(64))
}

/// The manifest `store` registered, as JSON, for a row to edit.
fn store_manifest() -> Value {
    json!({"name": "store", "secrets": ["superuser"],
           "resources": [{"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16",
                          "volumes": ["${access:data}:/data"], "environment": {"PGDATA": "/data"}}],
           "accesses": [{"id": "data", "path": "/srv/store"}]})
}

/// The store's manifest as the control plane holds it in `view`.
fn store_in(view: &mut MeshView) -> &mut Arc<ModuleManifest> {
    &mut view.modules.iter_mut().find(|k| k.name == "store").expect("the store is registered").manifest
}

/// The store's manifest in `view` replaced by its JSON edited by `edit`.
fn store_edited(view: &mut MeshView, edit: impl FnOnce(&mut Value)) {
    let mut text = store_manifest();
    edit(&mut text);
    *store_in(view) = manifest(&text);
}

/// Just before `vault`'s push: the store kept and the bus recreated by earlier pushes, both
/// running; `store` and `bus` registered and prepared, the node holding the store's secret;
/// `vault` registered by its own plan, which has accepted its key.
fn ahead() -> AheadOfPush {
    let mut expected = node();
    let store = ContainerSpec::new("postgres:16", Some(vec!["/srv/store:/data".into()]));
    let bus = ContainerSpec::new("nats:2", Some(vec!["/srv/bus:/data".into(), "/etc/bus:/etc/nats:ro".into()]));
    expected.containers.insert("mesh-store".into(), store.with_digest(digest('a')).with_running(Some(true)));
    expected.containers.insert("mesh-bus".into(), bus.with_digest(digest('b')).with_running(Some(true)));
    let bus_manifest = json!({"name": "bus", "resources": [
        {"id": "server", "type": "container", "name": "mesh-bus", "image": "nats:2"}]});
    let vault_manifest = json!({"name": "vault", "secrets": ["unseal-key"], "resources": [
        {"id": "vault", "type": "container", "name": "mesh-vault", "image": "vault:1"}]});
    expected.modules = vec![
        known("store", &manifest(&store_manifest()), true, &["superuser"]),
        known("bus", &manifest(&bus_manifest), true, &[]),
        known("vault", &manifest(&vault_manifest), false, &[]),
    ];
    AheadOfPush {
        module: "vault".into(),
        node: "node-1".into(),
        command: 2,
        expected,
        accepted: pairs(&[("vault", "unseal-key")]),
        names: vec!["mesh-bus".into(), "mesh-store".into(), "mesh-vault".into()],
    }
}

/// A row's edit: of what the prediction has before the push, and of what the re-read finds
/// (at first the same).
type Edit = fn(&mut AheadOfPush, &mut MeshView);

/// One thing moved, as a row writes it: what, which field, predicted, found.
type Said = (&'static str, &'static str, &'static str, &'static str);

#[test]
fn each_field_the_reread_compares_is_found_changed_alone_and_named_with_both_sides() {
    let cases: Vec<(Edit, &[Said])> = vec![
        // Nothing changed: clear.
        (|_, _| {}, &[]),
        // containers: one predicted, gone...
        (
            |_, f| {
                f.containers.remove("mesh-store");
            },
            &[("container `mesh-store`", "presence", "running postgres:16", "not on the node")],
        ),
        // ...one not predicted, there.
        (
            |_, f| {
                f.containers.insert("mesh-vault".into(), ContainerSpec::new("vault:1", None));
            },
            &[("container `mesh-vault`", "presence", "not on the node", "running vault:1")],
        ),
        // Another image.
        (
            |_, f| f.containers.get_mut("mesh-store").unwrap().image = "postgres:17".into(),
            &[("container `mesh-store`", "image", "postgres:16", "postgres:17")],
        ),
        // Another spec digest, by the short forms.
        (
            |_, f| f.containers.get_mut("mesh-store").unwrap().digest = digest('c'),
            &[("container `mesh-store`", "spec digest", "aaaaaaaaaaaa", "cccccccccccc")],
        ),
        // Other volumes.
        (
            |_, f| f.containers.get_mut("mesh-store").unwrap().volumes = Some(vec!["/srv/other:/data".into()]),
            &[("container `mesh-store`", "volumes", "/srv/store:/data", "/srv/other:/data")],
        ),
        // Volumes in another order are the same volumes.
        (|_, f| f.containers.get_mut("mesh-bus").unwrap().volumes.as_mut().unwrap().reverse(), &[]),
        // Stopped where it ran.
        (
            |_, f| f.containers.get_mut("mesh-bus").unwrap().running = Some(false),
            &[("container `mesh-bus`", "running", "running", "stopped")],
        ),
        // Not compared where the re-read does not know it: volumes, digest, running...
        (|_, f| f.containers.get_mut("mesh-store").unwrap().volumes = None, &[]),
        (|_, f| f.containers.get_mut("mesh-store").unwrap().digest = None, &[]),
        (|_, f| f.containers.get_mut("mesh-store").unwrap().running = None, &[]),
        // ...nor where the prediction did not know it.
        (
            |a, f| {
                a.expected.containers.get_mut("mesh-store").unwrap().volumes = None;
                f.containers.get_mut("mesh-store").unwrap().volumes = Some(vec!["/srv/other:/data".into()]);
            },
            &[],
        ),
        // modules: one registered by someone else...
        (
            |_, f| {
                let cache = manifest(&json!({"name": "cache"}));
                f.modules.push(known("cache", &cache, false, &[]));
            },
            &[("module `cache`", "registration", "not registered", "registered")],
        ),
        // ...one gone...
        (
            |_, f| f.modules.retain(|k| k.name != "bus"),
            &[("module `bus`", "registration", "registered", "not registered")],
        ),
        // ...but the pushing module's own registration is its plan's, not compared.
        (|_, f| f.modules.retain(|k| k.name != "vault"), &[]),
        // The order they were registered in: the order a push applies them in.
        (
            |_, f| f.modules.swap(0, 1),
            &[("the modules", "registration order", "store, bus, vault", "bus, store, vault")],
        ),
        // Prepared no longer...
        (|_, f| f.modules[1].prepared = false, &[("module `bus`", "prepared", "prepared", "not prepared")]),
        // ...but the pushing module's own preparation is its plan's.
        (|_, f| f.modules[2].prepared = true, &[]),
        // A secret the node held, no longer held...
        (|_, f| f.modules[0].settled.clear(), &[("secret `store/superuser`", "held", "held", "not held")]),
        // ...one held that was not...
        (
            |_, f| {
                f.modules[1].settled.insert("token".into());
            },
            &[("secret `bus/token`", "held", "not held", "held")],
        ),
        // ...but one this run accepted may be held ahead of the push that settles it.
        (
            |_, f| {
                f.modules[2].settled.insert("unseal-key".into());
            },
            &[],
        ),
        // A registered manifest parsed again, unchanged: no change.
        (|_, f| *store_in(f) = manifest(&store_manifest()), &[]),
        // Each field of a registered manifest's container, by its spec: the image...
        (
            |_, f| store_edited(f, |m| m["resources"][0]["image"] = json!("postgres:17")),
            &[("module `store` container `mesh-store`", "image", "postgres:16", "postgres:17")],
        ),
        // ...its volumes, resolved...
        (
            |_, f| store_edited(f, |m| m["accesses"][0]["path"] = json!("/srv/elsewhere")),
            &[("module `store` container `mesh-store`", "volumes", "/srv/store:/data", "/srv/elsewhere:/data")],
        ),
        // ...its environment...
        (
            |_, f| store_edited(f, |m| m["resources"][0]["environment"]["PGDATA"] = json!("/tmp")),
            &[(
                "module `store` container `mesh-store`",
                "environment",
                r#"{"PGDATA":"/data"}"#,
                r#"{"PGDATA":"/tmp"}"#,
            )],
        ),
        // ...and a field no one knows, added.
        (
            |_, f| store_edited(f, |m| m["resources"][0]["a-field-no-one-knows"] = json!(1)),
            &[("module `store` container `mesh-store`", "a-field-no-one-knows", "none", "1")],
        ),
        // A container the registered manifest declares, added...
        (
            |_, f| {
                store_edited(f, |m| {
                    let replica =
                        json!({"id": "replica", "type": "container", "name": "mesh-replica", "image": "pg:1"});
                    m["resources"].as_array_mut().unwrap().push(replica);
                })
            },
            &[("module `store` container `mesh-replica`", "declared", "not declared", "declared")],
        ),
        // ...or taken out.
        (
            |_, f| store_edited(f, |m| m["resources"] = json!([])),
            &[("module `store` container `mesh-store`", "declared", "declared", "not declared")],
        ),
        // The secrets it declares.
        (
            |_, f| store_edited(f, |m| m["secrets"] = json!(["superuser", "replica"])),
            &[("module `store`", "secrets", "superuser", "replica, superuser")],
        ),
        (|_, f| store_edited(f, |m| m["secrets"] = json!([])), &[("module `store`", "secrets", "superuser", "none")]),
        // The pushing module's manifest is compared as any other: only the catalogue's is its.
        (
            |_, f| f.modules[2].manifest = manifest(&json!({"name": "vault", "secrets": ["unseal-key"]})),
            &[("module `vault` container `mesh-vault`", "declared", "declared", "not declared")],
        ),
        // The modules are not compared where the re-read does not have the control plane's answer...
        (
            |_, f| {
                f.modules_known = false;
                f.modules.clear();
            },
            &[],
        ),
        // ...nor where preflight did not.
        (
            |a, f| {
                a.expected.modules_known = false;
                f.modules[1].prepared = false;
            },
            &[],
        ),
    ];
    let mut problems = Vec::new();
    for (at, (edit, said)) in cases.into_iter().enumerate() {
        let mut before = ahead();
        let mut found = before.expected.clone();
        edit(&mut before, &mut found);
        let moved = moved(&before, &found);
        let wanted: Vec<Moved> = said
            .iter()
            .map(|(what, field, predicted, found)| Moved {
                what: what.to_string(),
                field: field.to_string(),
                predicted: predicted.to_string(),
                found: found.to_string(),
            })
            .collect();
        if moved != wanted {
            problems.push(format!("case {at}: found {moved:#?}, not {wanted:#?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_reread_goes_on_only_on_a_mesh_seen_as_predicted_or_not_looked_at() {
    let before = ahead();
    let mut moved_mesh = before.expected.clone();
    moved_mesh.containers.get_mut("mesh-store").unwrap().image = "postgres:17".into();
    // A mesh as predicted: looked at, nothing moved, clear.
    let same = Reread::of(&before, &before.expected);
    assert_eq!(same, Reread { looked: true, unseen: None, moved: vec![] });
    assert!(same.clear());
    // A mesh that moved: not clear, what moved said.
    let moved = Reread::of(&before, &moved_mesh);
    assert!(!moved.clear());
    assert_eq!(
        moved.moved.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["container `mesh-store` image: predicted postgres:16, found postgres:17"]
    );
    // A mesh that could not be seen: not clear, whatever else it says.
    moved_mesh.unseen = Some("the engine did not answer".into());
    let unseen = Reread::of(&before, &moved_mesh);
    assert_eq!(unseen, Reread { looked: true, unseen: Some("the engine did not answer".into()), moved: vec![] });
    assert!(!unseen.clear());
    // A mesh that cannot look: nothing to hold, the push goes on as it always did.
    let mut blind = moved_mesh.clone();
    blind.looked = false;
    assert_eq!(Reread::of(&before, &blind), Reread::default());
    assert!(Reread::default().clear());
}
