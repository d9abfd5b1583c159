//! The push rule's canonical form (RFC 8785) and its number rule, held to the shared vectors
//! (`tests/jcs/vectors.json`) in the Python module the reference node and the live stand-ins
//! share (`node/lib/jcs.py`; the host's own canonicaliser is held to them by its unit tests),
//! and the spec digest of each implementation — the host's, the stand-ins' and the reference
//! node's — shown to agree on a spec whose numbers their JSON readers take apart.

use std::io::Write as _;
use std::process::{Command, Stdio};

use mesh_adopt_runtime::Foundation;
use serde_json::Value;

use crate::support::root;

/// The shared vectors, as the file lists them.
fn vectors() -> Vec<Value> {
    let path = root().join("tests/jcs/vectors.json");
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    file["vectors"].as_array().expect("`vectors` lists the vectors").clone()
}

/// `python3 node/lib/jcs.py MODE` with `input` on its standard input: its exit status, what it
/// wrote and what it said.
fn jcs_py(mode: &str, input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new("python3")
        .arg(root().join("node/lib/jcs.py"))
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (Debian's python3)");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let written = String::from_utf8(out.stdout).expect("the canonical form is UTF-8");
    (out.status.code(), written, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_reference_nodes_python_writes_and_judges_every_shared_vector_as_it_says() {
    let vectors = vectors();
    assert!(vectors.len() >= 30, "only {} vectors", vectors.len());
    let mut failures = Vec::new();
    for vector in &vectors {
        let name = vector["name"].as_str().unwrap();
        let input = vector["input"].as_str().unwrap();
        let (status, written, said) = jcs_py("canonical", input);
        match (&vector["canonical"], status) {
            (Value::String(expected), Some(0)) if &written == expected => {}
            (Value::Null, Some(2)) if said.starts_with("error: ") && written.is_empty() => {}
            (expected, status) => {
                failures.push(format!("{name}: expected {expected}, exited {status:?}, wrote {written:?}, said {said}"))
            }
        }
        let (status, _, said) = jcs_py("numbers", input);
        let as_it_says = match vector["refused_at"].as_str() {
            Some("") => status == Some(2) && said.contains("at `the document's top` is beyond ±2^53"),
            Some(pointer) => status == Some(2) && said.contains(&format!("at `{pointer}` is beyond ±2^53")),
            None => status == Some(0) && said.is_empty(),
        };
        if !as_it_says {
            failures.push(format!(
                "{name}: a reader refuses at {}, but it exited {status:?}: {said}",
                vector["refused_at"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_host_the_stand_ins_and_the_reference_node_digest_a_spec_alike_where_their_readers_differ() {
    // serde_json reads `-0` as -0.0 and `1.0` as a float, Python's json reads `-0` as the int 0
    // and writes `1e-07`; keys beyond the basic plane sort apart by code point and by UTF-16.
    let bundle = r#"{"resources": [{"id": "odd", "kind": "container", "name": "mesh-odd", "image": "odd:1",
        "volumes": ["/srv/b:/b", "/srv/a:/a:ro"], "user": 1000,
        "environment": {"ZERO": -0, "ONE": 1.0, "SMALL": 1e-7, "TENTH": 0.1, "LIMIT": 9007199254740992,
                        "TEXT": "tab\there \u001b \u00e9 \ud83d\ude00 \"quoted\" back\\slash"},
        "labels": {"\ue000": "private use", "\ud83d\ude00": "grinning", "z": "last by code point"}}]}"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("foundation.json");
    std::fs::write(&path, bundle).unwrap();

    let host = Foundation::parse(bundle.as_bytes()).unwrap().raised("mesh-odd").unwrap().digest.unwrap().to_string();

    let state = dir.path().join("stand-in");
    std::fs::create_dir(&state).unwrap();
    let genesis = Command::new(root().join("tests/live/control-plane"))
        .arg("genesis")
        .arg(&path)
        .env("STANDIN_STATE", &state)
        .output()
        .unwrap();
    assert!(genesis.status.success(), "{}", String::from_utf8_lossy(&genesis.stderr));
    let stand_in = format!("sha256:{}", std::fs::read_to_string(state.join("specs/mesh-odd")).unwrap().trim());

    let script = "import json, sys; sys.path.insert(0, sys.argv[1]); import mesh_node; \
                  [r] = json.load(open(sys.argv[2]))['resources']; print(mesh_node.digest_of(mesh_node.spec_of(r)))";
    let node =
        Command::new("python3").args(["-B", "-c", script]).arg(root().join("node/lib")).arg(&path).output().unwrap();
    assert!(node.status.success(), "{}", String::from_utf8_lossy(&node.stderr));
    let node = format!("sha256:{}", String::from_utf8(node.stdout).unwrap().trim());

    assert_eq!(host, stand_in, "the host and the live stand-ins");
    assert_eq!(host, node, "the host and the reference node");
}
