//! A container's spec digest as the push rule defines it (`crate::model::spec`), case by case:
//! equal specs have one digest however they are written; every field changes it; the
//! foundation bundle's form and a manifest's form of one container have one digest; and a
//! push keeps a running container by it.

use serde_json::{Value, json};

use super::manifest;
use crate::catalogue::Foundation;
use crate::effect::{ContainerSpec, Spec, SpecDigest};

/// The store as a manifest declares it, with every field a row may change.
fn declared() -> Value {
    json!({"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16",
           "volumes": ["/srv/store:/data", "/etc/store:/etc/pg:ro"], "environment": {"PGDATA": "/data"},
           "command": ["postgres", "-c", "fsync=on"], "user": "999"})
}

/// A row's edit of the store's resource, at first as [`declared`] has it.
type Edit = fn(&mut Value);

/// The spec of the container `resource` declares, as a push applies it from a manifest.
fn spec(resource: &Value) -> Spec {
    let module = manifest(&json!({"name": "store", "resources": [resource]}));
    Spec::of_module(&module.resolved_containers()[0])
}

#[test]
fn equal_specs_have_one_digest_however_they_are_written() {
    let cases: Vec<Edit> = vec![
        // The same, written again.
        |_| {},
        // Mounts in another order: a node compares them as a set.
        |r| r["volumes"].as_array_mut().unwrap().reverse(),
        // An empty field is a missing one: an empty object, list or string, or null.
        |r| r["labels"] = json!({}),
        |r| r["ports"] = json!([]),
        |r| r["entrypoint"] = json!(""),
        |r| r["healthcheck"] = Value::Null,
        // The resource's identity and the bookkeeping are not its spec.
        |r| r["id"] = json!("another-id"),
        |r| r["kind"] = json!("container"),
        |r| r["credentials"] = json!(["store-superuser"]),
    ];
    let plain = spec(&declared());
    let mut problems = Vec::new();
    for (at, edit) in cases.into_iter().enumerate() {
        let mut written = declared();
        edit(&mut written);
        let written = spec(&written);
        if written.digest() != plain.digest() {
            problems.push(format!("case {at}: {} and {} have two digests", written.canonical(), plain.canonical()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_field_of_a_spec_changes_its_digest() {
    let cases: Vec<(&str, Edit)> = vec![
        // Its name, image and mounts...
        ("name", |r| r["name"] = json!("mesh-store-2")),
        ("image", |r| r["image"] = json!("postgres:17")),
        ("volumes", |r| r["volumes"][0] = json!("/srv/other:/data")),
        ("volumes", |r| r["volumes"][1] = json!("/etc/store:/etc/pg")),
        ("volumes", |r| r["volumes"].as_array_mut().unwrap().truncate(1)),
        // ...every field it has...
        ("environment", |r| r["environment"]["PGDATA"] = json!("/tmp")),
        ("environment", |r| r["environment"]["EXTRA"] = json!("1")),
        ("command", |r| r["command"][2] = json!("fsync=off")),
        ("command", |r| r["command"] = json!("postgres -c fsync=on")),
        ("user", |r| r["user"] = json!(999)),
        // ...and every field it may have, known to the node or not.
        ("entrypoint", |r| r["entrypoint"] = json!(["/bin/sh"])),
        ("labels", |r| r["labels"] = json!({"tier": "data"})),
        ("restart", |r| r["restart"] = json!("always")),
        ("ports", |r| r["ports"] = json!(["5432:5432"])),
        ("networks", |r| r["networks"] = json!(["mesh"])),
        ("healthcheck", |r| r["healthcheck"] = json!({"test": ["pg_isready"]})),
        ("a-field-no-one-knows", |r| r["a-field-no-one-knows"] = json!(false)),
    ];
    let plain = spec(&declared());
    let mut problems = Vec::new();
    for (field, edit) in cases {
        let mut changed = declared();
        edit(&mut changed);
        let changed = spec(&changed);
        if changed.digest() == plain.digest() {
            problems.push(format!("a change of `{field}` left the digest as it was: {}", changed.canonical()));
        }
        if plain.differing_fields(&changed) != [field] {
            problems.push(format!("a change of `{field}` is said to be of {:?}", plain.differing_fields(&changed)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_bundles_form_and_the_manifests_form_of_one_container_have_one_digest() {
    let bundle = |resource: Value| {
        let bytes = serde_json::to_vec(&json!({"resources": [resource]})).unwrap();
        let foundation = Foundation::parse(&bytes).expect("the test's bundle parses");
        foundation.specs["mesh-store"].clone()
    };
    let module = |resource: Value, accesses: Value| {
        let module = manifest(&json!({"name": "store", "resources": [resource], "accesses": accesses}));
        Spec::of_module(&module.resolved_containers()[0])
    };
    let cases: Vec<(Value, Value, Value)> = vec![
        // Name, image and one mount; the bundle's credentials and the manifest's access aside.
        (
            json!({"id": "store", "kind": "container", "name": "mesh-store", "image": "postgres:16",
                   "volumes": ["/srv/store:/data"], "credentials": ["store-superuser"]}),
            json!({"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16",
                   "volumes": ["${access:data}:/data"]}),
            json!([{"id": "data", "path": "/srv/store"}]),
        ),
        // Mounts in another order, and every other field alike.
        (
            json!({"id": "store", "kind": "container", "name": "mesh-store", "image": "postgres:16",
                   "volumes": ["/etc/store:/etc/pg:ro", "/srv/store:/data"],
                   "environment": {"PGDATA": "/data"}, "command": ["postgres"], "ports": ["5432:5432"]}),
            json!({"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16",
                   "volumes": ["${access:data}:/data", "${access:conf}:/etc/pg:ro"],
                   "environment": {"PGDATA": "/data"}, "command": ["postgres"], "ports": ["5432:5432"]}),
            json!([{"id": "data", "path": "/srv/store"}, {"id": "conf", "path": "/etc/store"}]),
        ),
        // No mounts, and fields empty on one side and missing on the other.
        (
            json!({"id": "store", "kind": "container", "name": "mesh-store", "image": "postgres:16", "labels": {}}),
            json!({"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16", "volumes": []}),
            json!([]),
        ),
    ];
    for (at, (in_bundle, in_manifest, accesses)) in cases.into_iter().enumerate() {
        let (genesis, adopted) = (bundle(in_bundle), module(in_manifest, accesses));
        assert_eq!(
            genesis.digest(),
            adopted.digest(),
            "case {at}: {} and {}",
            genesis.canonical(),
            adopted.canonical()
        );
    }
    // And one field apart, two digests, the field named.
    let genesis = bundle(json!({"id": "store", "kind": "container", "name": "mesh-store", "image": "postgres:16"}));
    let adopted = module(
        json!({"id": "server", "type": "container", "name": "mesh-store", "image": "postgres:16", "user": "0"}),
        json!([]),
    );
    assert_ne!(genesis.digest(), adopted.digest());
    assert_eq!(genesis.differing_fields(&adopted), ["user"]);
}

#[test]
fn a_push_keeps_a_running_container_by_its_digest_and_else_by_image_and_mounts() {
    let digest = |digit: char| SpecDigest::parse(&digit.to_string().repeat(64));
    let mounts = |volumes: &[&str]| Some(volumes.iter().map(|v| v.to_string()).collect::<Vec<_>>());
    let pushed = ContainerSpec::new("postgres:16", mounts(&["/a:/data", "/b:/conf"])).with_digest(digest('a'));
    let cases: Vec<(ContainerSpec, bool)> = vec![
        // The digest recorded is the one pushed: kept, whatever else the engine says.
        (ContainerSpec::new("postgres:16", mounts(&["/a:/data", "/b:/conf"])).with_digest(digest('a')), true),
        (ContainerSpec::new("postgres:15", mounts(&["/c:/data"])).with_digest(digest('a')), true),
        // Another digest: recreated, even on the same image and mounts.
        (ContainerSpec::new("postgres:16", mounts(&["/a:/data", "/b:/conf"])).with_digest(digest('b')), false),
        // No digest recorded: the same image and mounts, in any order, kept...
        (ContainerSpec::new("postgres:16", mounts(&["/b:/conf", "/a:/data"])), true),
        // ...mounts not shown, kept on the image...
        (ContainerSpec::new("postgres:16", None), true),
        // ...another image or other mounts, recreated.
        (ContainerSpec::new("postgres:15", mounts(&["/a:/data", "/b:/conf"])), false),
        (ContainerSpec::new("postgres:16", mounts(&["/a:/data"])), false),
    ];
    for (at, (running, kept)) in cases.into_iter().enumerate() {
        assert_eq!(running.keeps(&pushed), kept, "case {at}: {running:?}");
    }
}
