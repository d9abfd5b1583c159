//! Manifests and foundation bundles the host and a node could read apart, or that leave
//! nothing to raise, refused where they are read, naming the field (its JSON Pointer) and the
//! file: by the command (`mesh-adopt check`, exit 2) and by the reference control plane
//! (`node/control module add`, `node/genesis`, exit 2), each given the same bytes. The node's
//! readers run before anything touches its engine, so no podman and no root are needed here.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{example_catalogue, mesh_adopt, plugin, root, shared_compile_cache};

const SOURCE: &str = "https://git.mesh.test/c.git";

/// A string standing in for a raw JSON text until the document is written: what lets a case
/// write a number exactly as it means it (serde_json would write 2^64 as a float).
const RAW: &str = "@raw@";

/// `value` written as pretty JSON, `raw` where it holds [`RAW`].
fn written(value: &Value, raw: &str) -> String {
    serde_json::to_string_pretty(value).unwrap().replace(&format!("\"{RAW}\""), raw)
}

/// The shipped `module` manifest with `edit` applied and `raw` written where the edit put
/// [`RAW`].
fn manifest_text(module: &str, edit: impl FnOnce(&mut Value), raw: &str) -> String {
    let path = root().join("catalogue/modules").join(module).join("manifest.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut value);
    written(&value, raw)
}

/// The shipped foundation bundle with `edit` applied, and `raw` where it put [`RAW`].
fn bundle_text(edit: impl FnOnce(&mut Value), raw: &str) -> String {
    let mut value: Value =
        serde_json::from_slice(&std::fs::read(root().join("catalogue/foundation.json")).unwrap()).unwrap();
    edit(&mut value);
    written(&value, raw)
}

/// A document the host and the node must both refuse: what it is, its text, the JSON Pointer
/// every refusal names, and what the host's says besides.
struct Refused {
    what: &'static str,
    text: String,
    pointer: &'static str,
    says: Vec<&'static str>,
}

/// The vault's manifest, edited, for each refusal of a manifest.
fn refused_manifests() -> Vec<Refused> {
    let vault = |edit: fn(&mut Value), raw: &str| manifest_text("mesh-vault", edit, raw);
    vec![
        Refused {
            what: "2^64 in the container's environment",
            text: vault(|m| m["resources"][0]["environment"] = json!({"SIZE": RAW}), "18446744073709551616"),
            pointer: "/resources/0/environment/SIZE",
            says: vec![
                "is ambiguous",
                "the number `18446744073709551616` at `/resources/0/environment/SIZE` is beyond ±2^53",
            ],
        },
        Refused {
            what: "2^53 + 1 as the container's user",
            text: vault(|m| m["resources"][0]["user"] = json!(RAW), "9007199254740993"),
            pointer: "/resources/0/user",
            says: vec!["is ambiguous", "`9007199254740993` at `/resources/0/user`"],
        },
        Refused {
            what: "2^53 + 1 written as a fraction, in the command",
            text: vault(|m| m["resources"][0]["command"] = json!(["vault", RAW]), "9007199254740993.0"),
            pointer: "/resources/0/command/1",
            says: vec!["is ambiguous", "`9007199254740993.0` at `/resources/0/command/1`"],
        },
        Refused {
            what: "1e16 in a field the host does not read",
            text: vault(|m| m["x-limit"] = json!(RAW), "1e16"),
            pointer: "/x-limit",
            says: vec!["is ambiguous", "`1e16` at `/x-limit`"],
        },
        Refused {
            what: "the vault's only resource typed `store-superuser`",
            text: vault(|m| m["resources"][0]["type"] = json!("store-superuser"), ""),
            pointer: "/resources/0/type",
            says: vec![
                "is malformed",
                "is of type `store-superuser` (`/resources/0/type`), which the contract does not know",
            ],
        },
        Refused {
            what: "the vault's only resource a service",
            text: vault(|m| m["resources"][0]["type"] = json!("service"), ""),
            pointer: "/resources",
            says: vec![
                "is malformed",
                "none of its resources is a container (`/resources` declares",
                "nothing to adopt or install",
            ],
        },
        Refused {
            what: "ESC in the container's id",
            text: vault(|m| m["resources"][0]["id"] = json!("va\u{1b}ult"), ""),
            pointer: "/resources/0/id",
            says: vec!["is malformed", "`/resources/0/id`", "holds a control character"],
        },
        Refused {
            what: "a path in the container's name",
            text: vault(|m| m["resources"][0]["name"] = json!("../mesh-vault"), ""),
            pointer: "/resources/0/name",
            says: vec!["is malformed", "`/resources/0/name` (`../mesh-vault`) holds a path separator"],
        },
        Refused {
            what: "a backslash in an access's id",
            text: vault(|m| m["accesses"][0]["id"] = json!("ex\\port"), ""),
            pointer: "/accesses/0/id",
            says: vec!["is malformed", "`/accesses/0/id`", "holds a path separator"],
        },
    ]
}

/// The shipped foundation bundle, edited, for each refusal of a bundle.
fn refused_bundles() -> Vec<Refused> {
    let bundle = |edit: fn(&mut Value), raw: &str| bundle_text(edit, raw);
    vec![
        Refused {
            what: "the control plane's kind `../../etc`",
            text: bundle(|b| b["resources"][0]["kind"] = json!("../../etc"), ""),
            pointer: "/resources/0/kind",
            says: vec!["`/resources/0/kind` (`../../etc`) holds a path separator"],
        },
        Refused {
            what: "a kind no one knows",
            text: bundle(|b| b["resources"][4]["kind"] = json!("daemon"), ""),
            pointer: "/resources/4/kind",
            says: vec!["is of kind `daemon` (`/resources/4/kind`), which the contract does not know"],
        },
        Refused {
            what: "ESC in the store's id",
            text: bundle(|b| b["resources"][1]["id"] = json!("st\u{1b}ore"), ""),
            pointer: "/resources/1/id",
            says: vec!["`/resources/1/id`", "holds a control character"],
        },
        Refused {
            what: "a backslash in the bus's name",
            text: bundle(|b| b["resources"][2]["name"] = json!("mesh\\bus"), ""),
            pointer: "/resources/2/name",
            says: vec!["`/resources/2/name`", "holds a path separator"],
        },
        Refused {
            what: "2^64 in the store's spec",
            text: bundle(|b| b["resources"][1]["shm-size"] = json!(RAW), "18446744073709551616"),
            pointer: "/resources/1/shm-size",
            says: vec!["the number `18446744073709551616` at `/resources/1/shm-size` is beyond ±2^53"],
        },
    ]
}

/// What a command said, on either stream.
fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `mesh-adopt check MODULES` on `catalogue`, sharing the suite's compile cache.
fn check(catalogue: &Path, modules: &[&str]) -> Output {
    mesh_adopt()
        .arg("check")
        .args(modules)
        .args(["--catalog-source", SOURCE])
        .catalogue(catalogue)
        .env("XDG_CACHE_HOME", shared_compile_cache())
        .output()
}

#[test]
fn the_command_refuses_each_manifest_naming_the_field_and_the_file_and_exits_2() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let path = dir.path().join("modules/mesh-vault/manifest.json");
    let shipped = std::fs::read(&path).unwrap();
    let mut failures = Vec::new();
    for case in refused_manifests() {
        std::fs::write(&path, &case.text).unwrap();
        let out = check(dir.path(), &["mesh-vault"]);
        let said = said(&out);
        let named_file = format!("the `mesh-vault` module's manifest `{}`", path.display());
        let named = [named_file.as_str(), &format!("`{}`", case.pointer)];
        let missing: Vec<&&str> =
            named.iter().chain(&case.says).filter(|fragment| !said.contains(**fragment)).collect();
        if out.status.code() != Some(2) || !missing.is_empty() {
            failures.push(format!("{}: exited {:?}, not saying {missing:?}:\n{said}", case.what, out.status));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    // Within ±2^53, and -0, the manifest is taken: the refusals above are of what they name.
    let within = manifest_text(
        "mesh-vault",
        |m| m["resources"][0]["environment"] = json!({"LIMIT": RAW}),
        "9007199254740992, \"ZERO\": -0, \"SMALL\": 1e-7",
    );
    std::fs::write(&path, within).unwrap();
    let out = check(dir.path(), &["mesh-vault"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    std::fs::write(&path, shipped).unwrap();
}

#[test]
fn the_command_refuses_each_foundation_bundle_naming_the_field_and_the_file_and_exits_2() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let path = dir.path().join("foundation.json");
    let mut failures = Vec::new();
    for case in refused_bundles() {
        std::fs::write(&path, &case.text).unwrap();
        let out = check(dir.path(), &["mesh-vault"]);
        let said = said(&out);
        let named_file = format!("the foundation bundle `{}` is malformed", path.display());
        let named = [named_file.as_str(), &format!("`{}`", case.pointer)];
        let missing: Vec<&&str> =
            named.iter().chain(&case.says).filter(|fragment| !said.contains(**fragment)).collect();
        if out.status.code() != Some(2) || !missing.is_empty() {
            failures.push(format!("{}: exited {:?}, not saying {missing:?}:\n{said}", case.what, out.status));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `node/TOOL ARGS` on a node whose state root is `root`, `input` on its standard input.
fn node_tool(state_root: &Path, tool: &str, args: &[&str], input: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(root().join("node").join(tool))
        .args(args)
        .env("MESH_NODE_ROOT", state_root)
        .env("MESH_CONTROL_LOCK_WAIT", "10")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node/{tool} cannot be started: {e}"));
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_reference_control_plane_refuses_each_manifest_the_host_refuses_naming_the_same_field() {
    let state_root = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for case in refused_manifests() {
        let carried = node_tool(state_root.path(), "control", &["carry", "/mesh-vault-module.json"], &case.text);
        assert!(carried.status.success(), "{}", said(&carried));
        let out = node_tool(state_root.path(), "control", &["module", "add", "/mesh-vault-module.json"], "");
        let said = said(&out);
        // The node names the file as the command carrying it names it: the path it was carried to.
        let named_file = "the manifest at `/mesh-vault-module.json`";
        let pointer = format!("`{}`", case.pointer);
        if out.status.code() != Some(2) || !said.contains(named_file) || !said.contains(&pointer) {
            failures.push(format!("{}: exited {:?}, not naming {pointer}:\n{said}", case.what, out.status));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let registered = state_root.path().join("control/manifests/mesh-vault.json");
    assert!(!registered.exists(), "a refused manifest was registered");

    // The shipped manifest, and one with -0 in it, are registered.
    for text in [
        manifest_text("mesh-vault", |_| {}, ""),
        manifest_text("mesh-vault", |m| m["resources"][0]["user"] = json!(RAW), "-0"),
    ] {
        node_tool(state_root.path(), "control", &["carry", "/mesh-vault-module.json"], &text);
        let out = node_tool(state_root.path(), "control", &["module", "add", "/mesh-vault-module.json"], "");
        assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    }
}

#[test]
fn reference_genesis_refuses_each_bundle_the_host_refuses_before_it_raises_anything() {
    let state_root = tempfile::tempdir().unwrap();
    let bundle = state_root.path().join("foundation.json");
    let credentials = root().join("catalogue/genesis/credentials");
    let mut failures = Vec::new();
    for case in refused_bundles() {
        std::fs::write(&bundle, &case.text).unwrap();
        let out =
            node_tool(state_root.path(), "genesis", &[bundle.to_str().unwrap(), credentials.to_str().unwrap()], "");
        let said = said(&out);
        let named_file = format!("the foundation bundle `{}`", bundle.display());
        let pointer = format!("`{}`", case.pointer);
        if out.status.code() != Some(2) || !said.contains(&named_file) || !said.contains(&pointer) {
            failures.push(format!("{}: exited {:?}, not naming {pointer}:\n{said}", case.what, out.status));
        }
        assert!(!said.contains("genesis: raised"), "{said}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
