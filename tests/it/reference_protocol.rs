//! The reference node's control plane (`node/control`) speaking the live protocol with no root
//! and no engine: its state in a temporary root, a stand-in engine that knows a few images and
//! runs nothing (`MESH_NODE_ENGINE`), and every answer read with the host's own readers: the
//! `state` JSON by `state::read_answer`, the lock's holder lines by `LockHolder::from_line`,
//! its exit statuses by `lock::{HELD, NOT_HELD}`. A plain user runs these as well as root.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use mesh_adopt_live::lock::{HELD, NOT_HELD};
use mesh_adopt_live::state::read_answer;
use mesh_adopt_runtime::effect::KnownModule;
use mesh_adopt_runtime::manifest::ModuleManifest;
use mesh_adopt_runtime::mesh::lock::LockHolder;
use serde_json::{Value, json};

use crate::support::root;

/// The stand-in engine: it says which images it has (those listed in `images` beside it) and
/// refuses everything else, and writes every call it is given to `engine-calls`.
const STAND_IN_ENGINE: &str = r#"#!/bin/sh
here=$(dirname "$0")
printf '%s\n' "$*" >>"$here/engine-calls"
if [ "$1" = image ] && [ "$2" = exists ] && [ $# -eq 3 ]; then
    grep -qxF -- "$3" "$here/images"
    exit $?
fi
echo "the stand-in engine runs nothing: $*" >&2
exit 125
"#;

/// One control plane of the reference node, for one node, its state under a root of its own.
struct Plane {
    root: tempfile::TempDir,
    node: String,
    /// The most seconds a command waits for the node's lock.
    lock_wait: u32,
}

impl Plane {
    /// An empty control plane for `node`, its engine a stand-in with no image yet.
    fn new(node: &str) -> Plane {
        let root = tempfile::tempdir().unwrap();
        let engine = root.path().join("engine");
        std::fs::write(&engine, STAND_IN_ENGINE).unwrap();
        std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(root.path().join("images"), "").unwrap();
        Plane { root, node: node.to_string(), lock_wait: 60 }
    }

    /// `node/control ARGS`, run with python3 from the project's top directory on this plane's
    /// root, `stdin` on its standard input.
    fn control(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = Command::new("python3")
            .arg(root().join("node/control"))
            .args(args)
            .current_dir(root())
            .env("MESH_NODE_ROOT", self.root.path())
            .env("MESH_NODE_NAME", &self.node)
            .env("MESH_NODE_ENGINE", self.root.path().join("engine"))
            .env("MESH_CONTROL_LOCK_WAIT", self.lock_wait.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("python3 could not be started for `node/control {}`: {e}", args.join(" ")));
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    /// `node/control ARGS`, which must succeed: what it printed.
    fn ok(&self, args: &[&str], stdin: &[u8]) -> String {
        let out = self.control(args, stdin);
        assert!(out.status.success(), "`node/control {}` failed: {}", args.join(" "), said(&out));
        String::from_utf8(out.stdout).unwrap()
    }

    /// The `state` command's answer for this plane's node, as it printed it.
    fn state_answer(&self) -> String {
        self.ok(&["state", &self.node], b"")
    }

    /// What the control plane holds for its node, read as a live mesh reads it.
    fn state(&self) -> Vec<KnownModule> {
        let answer = self.state_answer();
        read_answer(&answer, &self.node).unwrap_or_else(|why| panic!("the host cannot read `{answer}`: {why}"))
    }

    /// `manifest` carried to the control plane and registered.
    fn register(&self, manifest: &Value) {
        let remote = format!("/{}-module.json", manifest["name"].as_str().unwrap());
        self.ok(&["carry", &remote], manifest.to_string().as_bytes());
        self.ok(&["module", "add", &remote], b"");
    }

    /// The registered `manifest` built from a catalogue repository holding it (its images on
    /// the engine), assigned to the node and prepared on it.
    fn prepare(&self, manifest: &Value) {
        let module = manifest["name"].as_str().unwrap();
        let images: Vec<&str> =
            manifest["resources"].as_array().unwrap().iter().filter_map(|r| r["image"].as_str()).collect();
        let mut listed = std::fs::OpenOptions::new().append(true).open(self.root.path().join("images")).unwrap();
        for image in images {
            writeln!(listed, "{image}").unwrap();
        }
        let repository = self.catalogue(module, manifest);
        let repository = repository.to_str().unwrap();
        let path = format!("modules/{module}");
        self.ok(&["build", repository, "--path", &path, "--ref", "HEAD", "--wait", "60s"], b"");
        self.ok(&["assign", &self.node, module], b"");
        self.ok(&["prepare", &self.node, module], b"");
    }

    /// A catalogue repository whose one commit holds `manifest` as `module`'s.
    fn catalogue(&self, module: &str, manifest: &Value) -> PathBuf {
        let repository = self.root.path().join(format!("catalogue-{module}"));
        std::fs::create_dir_all(repository.join("modules").join(module)).unwrap();
        std::fs::write(repository.join(format!("modules/{module}/manifest.json")), manifest.to_string()).unwrap();
        for args in [&["init", "--quiet"][..], &["add", "--all"], &["commit", "--quiet", "-m", module]] {
            let done = Command::new("git")
                .args([
                    "-c",
                    "user.name=catalogue",
                    "-c",
                    "user.email=catalogue@localhost",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .arg("-C")
                .arg(&repository)
                .args(args)
                .output()
                .unwrap();
            assert!(done.status.success(), "git {args:?}: {}", said(&done));
        }
        repository
    }

    /// `secret` carried as a secret and accepted as `module`'s.
    fn accept(&self, module: &str, secret: &str) {
        let remote = format!("/accepting-{module}-{secret}");
        self.ok(&["carry", "--secret", &remote], b"a value that never leaves the node\n");
        self.ok(&["secret", "accept", &self.node, module, secret, "--from", &remote], b"");
    }

    /// Every call the stand-in engine was given, in order.
    fn engine_calls(&self) -> Vec<String> {
        let calls = std::fs::read_to_string(self.root.path().join("engine-calls")).unwrap_or_default();
        calls.lines().map(String::from).collect()
    }

    /// `lock`, given `holder`'s line on its standard input.
    fn lock(&self, holder: &LockHolder) -> Output {
        self.control(&["lock"], format!("{}\n", holder.to_line()).as_bytes())
    }

    /// The path of a file of the control plane's state.
    fn control_file(&self, name: &str) -> PathBuf {
        self.root.path().join("control").join(name)
    }
}

/// A command's status and what it printed, for a failure's message.
fn said(out: &Output) -> String {
    format!(
        "{}; stdout `{}`; stderr `{}`",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A module's manifest as a catalogue writes it: one container, and `secrets`.
fn manifest(name: &str, image: &str, secrets: &[&str]) -> Value {
    json!({
        "name": name,
        "version": "1.0.0",
        "resources": [{"id": "server", "type": "container", "name": format!("mesh-{name}"), "image": image,
                       "volumes": ["${access:data}:/data"], "environment": {"MODE": "adopted"}}],
        "accesses": [{"id": "data", "path": format!("/var/lib/mesh/{name}")}],
        "secrets": secrets,
    })
}

/// `manifest` as the host reads a catalogue's.
fn parsed(manifest: &Value) -> ModuleManifest {
    ModuleManifest::parse(manifest.to_string().as_bytes()).unwrap()
}

/// The modules of a state, as (name, prepared, secrets held).
fn held(modules: &[KnownModule]) -> Vec<(&str, bool, Vec<&str>)> {
    modules.iter().map(|m| (m.name.as_str(), m.prepared, m.settled.iter().map(String::as_str).collect())).collect()
}

/// A holder as a run on another host gives it, with an id of its own.
fn holder(id: &str, command: &str) -> LockHolder {
    LockHolder {
        id: id.to_string(),
        host: "installer-7".to_string(),
        machine: "m-installer-7".to_string(),
        pid: 4242,
        command: command.to_string(),
        since: "2025-06-01T12:00:00Z".to_string(),
        node: "node-1".to_string(),
    }
}

#[test]
fn an_empty_control_plane_answers_that_it_holds_no_module_without_asking_the_engine() {
    let plane = Plane::new("node-1");
    let answer = plane.state_answer();
    assert_eq!(serde_json::from_str::<Value>(&answer).unwrap(), json!({"node": "node-1", "modules": []}));
    assert!(read_answer(&answer, "node-1").unwrap().is_empty());
    assert_eq!(plane.engine_calls(), Vec::<String>::new());
}

#[test]
fn a_registered_prepared_module_is_answered_with_its_manifest_and_the_secrets_the_node_holds() {
    let plane = Plane::new("node-1");
    let store = manifest("store", "postgres:16", &["superuser", "replica"]);
    let vault = manifest("vault", "vault:1", &["unseal-key"]);
    plane.register(&store);
    plane.prepare(&store);
    plane.accept("store", "superuser");
    plane.register(&vault);
    // Registered again, a module keeps its place in the order.
    plane.register(&store);

    let modules = plane.state();
    assert_eq!(held(&modules), [("store", true, vec!["superuser"]), ("vault", false, vec![])]);
    // The manifest the host reads back is the one registered, field for field.
    assert_eq!(format!("{:?}", *modules[0].manifest), format!("{:?}", parsed(&store)));
    assert_eq!(format!("{:?}", *modules[1].manifest), format!("{:?}", parsed(&vault)));
    // A secret accepted is held on the node, never shown in the answer.
    let answer = plane.state_answer();
    assert!(!answer.contains("a value that never leaves the node"), "{answer}");
    // The engine was asked only whether the built module's image is there.
    assert_eq!(plane.engine_calls(), ["image exists postgres:16"]);
}

#[test]
fn a_module_is_not_built_on_a_node_without_its_image_nor_prepared_before_it_is_assigned() {
    let plane = Plane::new("node-1");
    let store = manifest("store", "postgres:16", &[]);
    plane.register(&store);
    let repository = plane.catalogue("store", &store);
    let build = ["build", repository.to_str().unwrap(), "--path", "modules/store", "--ref", "HEAD", "--wait", "60s"];
    let refused = plane.control(&build, b"");
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("`postgres:16`"), "{}", said(&refused));
    let refused = plane.control(&["prepare", "node-1", "store"], b"");
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert_eq!(held(&plane.state()), [("store", false, vec![])]);
}

#[test]
fn two_nodes_are_kept_apart_each_control_plane_answering_for_its_own() {
    let (first, second) = (Plane::new("node-1"), Plane::new("node-2"));
    let (store, vault) =
        (manifest("store", "postgres:16", &["superuser"]), manifest("vault", "vault:1", &["unseal-key"]));
    first.register(&store);
    first.prepare(&store);
    first.accept("store", "superuser");
    second.register(&vault);
    second.prepare(&vault);
    second.accept("vault", "unseal-key");

    assert_eq!(held(&first.state()), [("store", true, vec!["superuser"])]);
    assert_eq!(held(&second.state()), [("vault", true, vec!["unseal-key"])]);
    // Asked about the other node, a control plane refuses, naming both.
    let refused = first.control(&["state", "node-2"], b"");
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("no node `node-2` on this control plane; it has `node-1`")
    );
    // And an answer for one node is not read by the host as the other's.
    let why = read_answer(&first.state_answer(), "node-2").unwrap_err();
    assert!(why.contains("answers for the node `node-1`, and the node asked was `node-2`"), "{why}");
}

#[test]
fn a_second_lock_is_refused_with_75_naming_the_first_holder() {
    let plane = Plane::new("node-1");
    let first = LockHolder::this_process("mesh-adopt run --mesh live", "node-1");
    let taken = plane.lock(&first);
    assert_eq!(taken.status.code(), Some(0), "{}", said(&taken));
    assert_eq!(String::from_utf8_lossy(&taken.stdout).trim(), format!("locked {}", first.id));

    let second = holder("b2", "mesh-adopt run --mesh live --plan plan.json");
    let refused = plane.lock(&second);
    assert_eq!(refused.status.code(), Some(HELD), "{}", said(&refused));
    assert_eq!(LockHolder::from_line(&String::from_utf8_lossy(&refused.stdout)), Ok(first.clone()));
    // The first still holds it.
    let holding = plane.ok(&["lock-holder"], b"");
    assert_eq!(LockHolder::from_line(&holding), Ok(first));
    // A holder that is not one JSON line with an id is an error, not a refusal.
    for stdin in [&b""[..], b"not json\n", b"{\"host\": \"h\"}\n", b"{\"id\": \"a\"}\n{\"id\": \"b\"}\n"] {
        let out = plane.control(&["lock"], stdin);
        assert_eq!(out.status.code(), Some(2), "{:?}: {}", String::from_utf8_lossy(stdin), said(&out));
    }
}

#[test]
fn unlock_releases_only_the_holders_id_saying_75_for_another_and_76_when_free() {
    let plane = Plane::new("node-1");
    let (first, second) = (holder("a1", "mesh-adopt run"), holder("b2", "mesh-adopt run"));
    // Free: none held.
    let out = plane.control(&["unlock", "a1"], b"");
    assert_eq!(out.status.code(), Some(NOT_HELD), "{}", said(&out));

    assert_eq!(plane.lock(&first).status.code(), Some(0));
    // Another id: refused, the holder named, the lock left as it was.
    let out = plane.control(&["unlock", "b2"], b"");
    assert_eq!(out.status.code(), Some(HELD), "{}", said(&out));
    assert_eq!(LockHolder::from_line(&String::from_utf8_lossy(&out.stdout)), Ok(first.clone()));
    assert_eq!(LockHolder::from_line(&plane.ok(&["lock-holder"], b"")), Ok(first.clone()));

    // The holder's id: released; then free again.
    assert_eq!(plane.ok(&["unlock", "a1"], b"").trim(), "unlocked a1");
    assert_eq!(plane.ok(&["lock-holder"], b""), "");
    assert!(!plane.control_file("mesh-lock.json").exists());
    assert_eq!(plane.control(&["unlock", "a1"], b"").status.code(), Some(NOT_HELD));
    // Free, it is taken by the next.
    assert_eq!(plane.lock(&second).status.code(), Some(0));
    assert_eq!(LockHolder::from_line(&plane.ok(&["lock-holder"], b"")), Ok(second));
}

#[test]
fn lock_holder_prints_exactly_the_line_lock_took_and_nothing_when_free() {
    let plane = Plane::new("node-1");
    assert_eq!(plane.ok(&["lock-holder"], b""), "");
    let holder = holder("0123456789abcdef", "mesh-adopt run --catalogue /srv/catalogue — «phase three»");
    assert_eq!(plane.lock(&holder).status.code(), Some(0));
    assert_eq!(plane.ok(&["lock-holder"], b""), format!("{}\n", holder.to_line()));
    // What a refused `lock` prints is the same line.
    let refused = plane.lock(&LockHolder::this_process("mesh-adopt run", "node-1"));
    assert_eq!(String::from_utf8(refused.stdout).unwrap(), format!("{}\n", holder.to_line()));
}

#[test]
fn the_mesh_lock_answers_at_once_while_a_command_holds_the_node() {
    let mut plane = Plane::new("node-1");
    plane.lock_wait = 1;
    // The node's lock, as a push holds it for its whole run.
    std::fs::create_dir_all(plane.root.path().join("control")).unwrap();
    let node_lock = std::fs::File::create(plane.control_file("lock")).unwrap();
    node_lock.lock().unwrap();

    let holder = holder("c3", "mesh-adopt run");
    assert_eq!(plane.lock(&holder).status.code(), Some(0));
    assert_eq!(LockHolder::from_line(&plane.ok(&["lock-holder"], b"")), Ok(holder));
    assert_eq!(plane.ok(&["unlock", "c3"], b"").trim(), "unlocked c3");
    // The node's own commands wait for it, and give up naming the lock.
    let waited = plane.control(&["state", "node-1"], b"");
    assert_eq!(waited.status.code(), Some(2), "{}", said(&waited));
    assert!(String::from_utf8_lossy(&waited.stderr).contains("was not released within 1s"), "{}", said(&waited));
    drop(node_lock);
    assert!(plane.state().is_empty());
}

/// `images`, read-only, answers the images asked on its standard input as the live protocol's
/// `images` contract says, read by the host's own reader: the node's engine has some and not
/// others, each asked once.
#[test]
fn images_answers_whether_the_node_has_each_image_asked_as_the_host_reads_it() {
    let plane = Plane::new("node-1");
    std::fs::write(plane.root.path().join("images"), "localhost/mesh-node/store:15\n").unwrap();
    let asked = vec!["localhost/mesh-node/store:15".to_string(), "localhost/mesh-node/bus:2.9-test".to_string()];
    let answer = plane.ok(&["images", "node-1"], asked.join("\n").as_bytes());
    let lacks =
        mesh_adopt_live::images::read_answer(&answer, "node-1", &asked).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(lacks, ["localhost/mesh-node/bus:2.9-test"]);
    assert_eq!(
        plane.engine_calls(),
        asked.iter().map(|image| format!("image exists {image}")).collect::<Vec<_>>(),
        "each image asked of the engine once, nothing else"
    );
    let elsewhere = plane.control(&["images", "node-2"], b"");
    assert_eq!(elsewhere.status.code(), Some(2), "{}", said(&elsewhere));
    assert!(said(&elsewhere).contains("no node `node-2` on this control plane"), "{}", said(&elsewhere));
}
