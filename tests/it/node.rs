//! Phase three on the reference node (`node/`): a real container engine, real PostgreSQL and
//! NATS, the node's own control plane and genesis, driven through the binary with
//! `node/mesh-adopt.toml` as an operator would. The node has fixed names and ports, so these
//! tests take it one at a time. Where the node cannot be set up (not root, no Debian packages)
//! they fail, naming what is missing; they never pass without it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{mesh_adopt, root, shared_compile_cache};

/// The node's state root, as `node/setup` and the node's catalogue have it.
pub(crate) const NODE_ROOT: &str = "/var/lib/mesh-adopt-node";

/// The ref the catalogue repository is tagged with (`node/demo repository`).
const CATALOGUE_REF: &str = "v3.2.0";

/// What genesis gave the store's superuser: the node catalogue's credential.
fn superuser() -> String {
    std::fs::read_to_string(root().join("node/catalogue/genesis/credentials/store-superuser"))
        .unwrap()
        .trim()
        .to_string()
}

/// The node, held for one test: set up once per suite (images built, plugins placed, the
/// catalogue repository made), then reset and raised by genesis for each test.
pub(crate) struct Node {
    _turn: MutexGuard<'static, ()>,
    /// The operator's state directory for the test's runs (plan key, local lock).
    state: tempfile::TempDir,
}

pub(crate) fn node() -> Node {
    static TURN: Mutex<()> = Mutex::new(());
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    if let Err(why) = READY.get_or_init(set_up) {
        panic!("the reference node is not there, so phase three cannot be shown on a real engine: {why}");
    }
    Node { _turn: turn, state: tempfile::tempdir().unwrap() }
}

/// `node/setup` (installs and builds what is missing), the node catalogue's plugins built from
/// source beside its manifests, and its repository.
fn set_up() -> Result<(), String> {
    run_tool(&["node/setup"]).map_err(|e| {
        format!("`node/setup` (run as root; it installs podman, runc and mmdebstrap from Debian) failed: {e}")
    })?;
    let built = mesh_adopt()
        .args(["build", "--no-pin", "--catalogue"])
        .arg(root().join("node/catalogue"))
        .env("XDG_CACHE_HOME", shared_compile_cache())
        .current_dir(root())
        .timeout(Duration::from_secs(600))
        .output();
    if !built.status.success() {
        return Err(format!("building node/catalogue's plugins failed: {}", String::from_utf8_lossy(&built.stderr)));
    }
    run_tool(&["node/demo", "repository"]).map(drop)
}

/// Runs a node tool from the project's top directory; its standard output, or why it failed.
fn run_tool(argv: &[&str]) -> Result<String, String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{}` could not be started: {e}", argv.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{}` exited with {}: {}{}",
            argv.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn tool(argv: &[&str]) -> String {
    run_tool(argv).unwrap_or_else(|e| panic!("{e}"))
}

impl Node {
    /// An empty node, then genesis: the store, the bus and the control plane's container.
    pub(crate) fn genesis(&self) {
        tool(&["node/setup", "--reset"]);
        tool(&["node/genesis", "node/catalogue/foundation.json", "node/catalogue/genesis/credentials"]);
    }

    /// `mesh-adopt COMMAND --mesh live` on `catalogue` with the node's configuration, as the
    /// README gives it, its events as JSON lines.
    pub(crate) fn mesh_adopt(&self, command: &str, catalogue: &Path) -> crate::support::Cli {
        mesh_adopt()
            .args([command, "--mesh", "live", "--json", "--config", "node/mesh-adopt.toml", "--catalog-source"])
            .arg(format!("{NODE_ROOT}/catalogue.git@{CATALOGUE_REF}"))
            .arg("--catalogue")
            .arg(catalogue)
            .env("XDG_CACHE_HOME", shared_compile_cache())
            .env("XDG_STATE_HOME", self.state.path())
            .current_dir(root())
            .timeout(Duration::from_secs(180))
    }

    /// Runs phase three on `catalogue`: its exit status and its events.
    fn run(&self, catalogue: &Path) -> (Option<i32>, Vec<Value>) {
        let out = self.mesh_adopt("run", catalogue).output();
        (out.status.code(), events(&out.stdout))
    }
}

impl Drop for Node {
    /// Leaves the node empty for the next test and the rest of the suite: no store or bus left
    /// listening on the loopback's fixed ports.
    fn drop(&mut self) {
        let _ = run_tool(&["node/setup", "--reset"]);
    }
}

pub(crate) fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not an event: {line}: {e}")))
        .collect()
}

/// The calls of a run that change the mesh: carries and tells.
fn effects(events: &[Value]) -> usize {
    events.iter().filter(|e| e["event"] == "call" && (e["op"] == "carry" || e["op"] == "tell")).count()
}

pub(crate) fn shown(events: &[Value]) -> String {
    events.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

/// Asserts the run took the mesh's own lock (node/control's), with this machine's, and
/// released it at its end.
fn locked_by_the_mesh(events: &[Value]) {
    let locks: Vec<(&Value, &Value)> =
        events.iter().filter(|e| e["event"] == "lock").map(|e| (&e["outcome"], &e["scope"])).collect();
    assert_eq!(
        locks,
        [(&Value::from("taken"), &Value::from("mesh")), (&Value::from("released"), &Value::Null)],
        "{}",
        shown(events)
    );
    assert!(!Path::new(NODE_ROOT).join("control/mesh-lock.json").exists(), "the mesh's lock was left");
}

/// The `effect` event: what the run predicted every push does.
fn effect_of(events: &[Value]) -> &Value {
    events.iter().find(|e| e["event"] == "effect").unwrap_or_else(|| panic!("no effect: {}", shown(events)))
}

/// `node/podman container inspect NAME`, the one object.
pub(crate) fn inspect(name: &str) -> Value {
    let answer: Value = serde_json::from_str(&tool(&["node/podman", "container", "inspect", name])).unwrap();
    answer[0].clone()
}

fn id(name: &str) -> String {
    inspect(name)["Id"].as_str().unwrap().to_string()
}

/// Every `mesh-*` container's id, by name.
fn ids() -> Vec<(String, String)> {
    let names = tool(&["node/podman", "ps", "--all", "--format", "{{.Names}}"]);
    let mut ids: Vec<(String, String)> =
        names.lines().filter(|n| n.starts_with("mesh-")).map(|n| (n.to_string(), id(n))).collect();
    ids.sort();
    ids
}

/// A query over TCP with genesis's superuser password, from a client in the store's image.
fn sql(query: &str) -> String {
    let out = Command::new("node/podman")
        .args(["exec", "-e", "PGPASSWORD", "mesh-store", "psql", "-h", "127.0.0.1", "-U", "postgres", "-v"])
        .args(["ON_ERROR_STOP=1", "-qAt", "-c", query])
        .env("PGPASSWORD", superuser())
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "`{query}`: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Rows in the store and messages in a JetStream stream on the bus, written before a run.
struct Written {
    rows: String,
    messages: String,
}

const STREAM: &str = "ADOPTION";

fn write_data() -> Written {
    sql("create table adopted_rows (id int primary key, word text not null)");
    sql("insert into adopted_rows select n, md5(n::text) from generate_series(1, 500) n");
    tool(&["node/bus", "publish", STREAM, "adoption.test", "50"]);
    Written { rows: rows(), messages: messages() }
}

fn rows() -> String {
    sql("select count(*) || ' ' || md5(string_agg(id || ':' || word, ',' order by id)) from adopted_rows")
}

fn messages() -> String {
    tool(&["node/bus", "count", STREAM]).trim().to_string()
}

/// A psql session opened over TCP and kept open: a connection that must outlive the run.
struct Session {
    child: std::process::Child,
    answers: BufReader<std::process::ChildStdout>,
}

impl Session {
    fn open() -> Session {
        let mut child = Command::new("node/podman")
            .args(["exec", "-i", "-e", "PGPASSWORD", "mesh-store", "psql", "-h", "127.0.0.1", "-U", "postgres", "-qAt"])
            .env("PGPASSWORD", superuser())
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let answers = BufReader::new(child.stdout.take().unwrap());
        Session { child, answers }
    }

    fn ask(&mut self, query: &str) -> String {
        writeln!(self.child.stdin.as_mut().unwrap(), "{query}").unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        line.trim().to_string()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP GET on the node's loopback: the bus monitor's answer.
fn http_get(url_path: &str, port: u16) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(stream, "GET {url_path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

pub(crate) fn node_log() -> String {
    std::fs::read_to_string(Path::new(NODE_ROOT).join("control/node.log")).unwrap_or_default()
}

fn seals_log() -> String {
    std::fs::read_to_string(Path::new(NODE_ROOT).join("control/seals.log")).unwrap_or_default()
}

fn vault_key() -> Vec<u8> {
    std::fs::read(Path::new(NODE_ROOT).join("state/secrets/mesh-vault/unseal-key")).unwrap()
}

/// A copy of the node's catalogue (plugins included) with `edit` made to it.
fn edited_catalogue(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("cp").arg("-r").arg(root().join("node/catalogue/.")).arg(dir.path()).status().unwrap();
    assert!(status.success());
    edit(dir.path());
    dir
}

fn edit_json(path: PathBuf, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

#[test]
fn phase_three_on_a_real_node_keeps_the_store_recreates_the_bus_once_and_loses_nothing() {
    let node = node();
    node.genesis();
    let written = write_data();

    // Each edit a rule refuses, refused before any effect, every container as it was.
    let before = ids();
    let postgres = |dir: &Path| dir.join("modules/postgres/manifest.json");
    type Edit = Box<dyn FnOnce(&Path)>;
    let edits: [(&str, &str, Edit); 4] = [
        (
            "the store's environment",
            "genesis-touched-as-declared",
            Box::new(move |dir: &Path| {
                edit_json(postgres(dir), |m| m["resources"][0]["environment"]["PGDATA"] = "/tmp/empty".into())
            }),
        ),
        (
            "a volume of the store",
            "genesis-touched-as-declared",
            Box::new(move |dir: &Path| {
                edit_json(postgres(dir), |m| {
                    m["resources"][0]["volumes"]
                        .as_array_mut()
                        .unwrap()
                        .push(format!("{NODE_ROOT}/state/mesh-store/extra:/extra").into())
                })
            }),
        ),
        (
            "a vault named like the control plane",
            "one-owner",
            Box::new(|dir: &Path| {
                edit_json(dir.join("modules/mesh-vault/manifest.json"), |m| {
                    m["resources"][0]["name"] = "mesh-control".into()
                })
            }),
        ),
        (
            "the bus already on the module's image",
            "genesis-touched-as-declared",
            Box::new(|dir: &Path| {
                edit_json(dir.join("foundation.json"), |f| {
                    f["resources"][2]["image"] = "localhost/mesh-node/bus:2.9-mesh.1".into()
                })
            }),
        ),
    ];
    for (what, rule, edit) in edits {
        let catalogue = edited_catalogue(edit);
        let (status, events) = node.run(catalogue.path());
        assert_eq!(status, Some(1), "{what}: {}", shown(&events));
        assert!(shown(&events).contains(rule), "{what}: `{rule}` not named: {}", shown(&events));
        assert_eq!(effects(&events), 0, "{what}: effects before the refusal: {}", shown(&events));
        assert_eq!(ids(), before, "{what}: a container changed");
    }

    // check shows what the run will do, from the engine's answer.
    let checked = node.mesh_adopt("check", &root().join("node/catalogue")).output();
    let predicted = shown(&events(&checked.stdout));
    assert_eq!(checked.status.code(), Some(0), "{predicted}");
    for effect in [
        r#""kept","container":"mesh-store""#,
        r#""recreated","container":"mesh-bus""#,
        r#""created","container":"mesh-vault""#,
    ] {
        assert!(predicted.contains(effect), "{effect} not predicted: {predicted}");
    }
    assert_eq!(ids(), before, "check changed a container");

    // The same catalogue without an edit adopts.
    let store_started = sql("select pg_postmaster_start_time()");
    let mut session = Session::open();
    let pid = session.ask("select pg_backend_pid();");
    let (store, bus) = (id("mesh-store"), id("mesh-bus"));
    let (status, events) = node.run(&root().join("node/catalogue"));
    assert_eq!(status, Some(0), "{}", shown(&events));
    locked_by_the_mesh(&events);

    // Kept means kept: the same container, the same postmaster, the open connection, the rows.
    assert_eq!(id("mesh-store"), store, "the store was replaced");
    assert_eq!(sql("select pg_postmaster_start_time()"), store_started, "the store's server restarted");
    assert_eq!(session.ask("select pg_backend_pid();"), pid, "the connection opened before the run is gone");
    assert_eq!(session.ask("select count(*) from adopted_rows;"), "500");
    assert_eq!(rows(), written.rows);

    // The bus recreated once, onto the module's image and the same data, every message there.
    let recreated = inspect("mesh-bus");
    assert_ne!(recreated["Id"].as_str().unwrap(), bus, "the bus was not recreated");
    assert_eq!(recreated["Config"]["Image"], "localhost/mesh-node/bus:2.9-mesh.1");
    let data = format!("{NODE_ROOT}/state/mesh-bus/data");
    assert!(
        recreated["Mounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["Source"] == data.as_str() && m["Destination"] == "/data"),
        "{recreated}"
    );
    assert_eq!(node_log().matches("recreated mesh-bus").count(), 1, "{}", node_log());
    assert_eq!(messages(), written.messages, "messages lost with the bus");
    assert!(http_get("/healthz", 8222).contains("ok"), "the bus's monitor does not answer ok");

    // The vault created, reading the key the node sealed for it.
    let vault = inspect("mesh-vault");
    assert_eq!(vault["State"]["Running"], true, "{vault}");
    assert!(
        vault["Mounts"].as_array().unwrap().iter().any(|m| m["Destination"] == "/run/secrets/unseal-key"),
        "{vault}"
    );
    assert!(!vault_key().is_empty());
    assert_eq!(seals_log().lines().count(), 1, "{}", seals_log());

    // A re-run on the adopted node reads what the node holds: it predicts no change and no
    // seal, and changes no container and seals nothing.
    let (adopted, seals, key) = (ids(), seals_log(), vault_key());
    let (status, events) = node.run(&root().join("node/catalogue"));
    assert_eq!(status, Some(0), "{}", shown(&events));
    locked_by_the_mesh(&events);
    let effect = effect_of(&events);
    assert_eq!(effect["complete"], true, "{effect}");
    for push in effect["pushes"].as_array().unwrap() {
        assert!(push["containers"].as_array().unwrap().iter().all(|c| c["change"] == "kept"), "{effect}");
        assert_eq!(push["secrets"], serde_json::json!([]), "a seal predicted on a re-run: {effect}");
    }
    let held = effect["held"].as_array().unwrap();
    assert!(held.contains(&serde_json::json!({"module": "mesh-vault", "secret": "unseal-key"})), "{effect}");
    assert_eq!(ids(), adopted, "a re-run replaced a container");
    assert_eq!(seals_log(), seals, "a re-run sealed again");
    assert_eq!(vault_key(), key);
    assert_eq!(rows(), written.rows);
    assert_eq!(messages(), written.messages);
}

#[test]
fn the_node_applies_its_own_push_rule_without_the_host() {
    let _node = node();
    _node.genesis();
    let manifest = root().join("node/catalogue/modules/postgres/manifest.json");
    let store = id("mesh-store");
    let push = |manifest: &[u8]| -> String {
        // The control plane's `build` reads the manifest from the repository: one holding this one.
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(work.path().join("modules/postgres")).unwrap();
        std::fs::write(work.path().join("modules/postgres/manifest.json"), manifest).unwrap();
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@localhost", "-C"])
                .arg(work.path())
                .args(args)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "--quiet"]);
        git(&["add", "--all"]);
        git(&["commit", "--quiet", "-m", "postgres"]);
        let mut carry = Command::new("node/control")
            .args(["carry", "/postgres-module.json"])
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        carry.stdin.take().unwrap().write_all(manifest).unwrap();
        assert!(carry.wait().unwrap().success());
        let repository = work.path().to_str().unwrap();
        tool(&["node/control", "module", "add", "/postgres-module.json"]);
        tool(&["node/control", "build", repository, "--path", "modules/postgres", "--ref", "HEAD", "--wait", "60s"]);
        tool(&["node/control", "assign", "node-1", "postgres"]);
        tool(&["node/control", "prepare", "node-1", "postgres"]);
        tool(&["node/control", "push", "node-1"])
    };

    let unchanged = std::fs::read(&manifest).unwrap();
    let pushed = push(&unchanged);
    assert!(pushed.contains("kept mesh-store"), "{pushed}");
    assert_eq!(id("mesh-store"), store, "the same spec replaced the store");

    let mut changed: Value = serde_json::from_slice(&unchanged).unwrap();
    changed["resources"][0]["environment"]["MESH_NOTE"] = "changed".into();
    let pushed = push(&serde_json::to_vec(&changed).unwrap());
    assert!(pushed.contains("recreated mesh-store"), "{pushed}");
    let recreated = inspect("mesh-store");
    assert_ne!(recreated["Id"].as_str().unwrap(), store, "another spec kept the store");
    assert!(
        recreated["Config"]["Env"].as_array().unwrap().iter().any(|e| e == "MESH_NOTE=changed"),
        "{}",
        recreated["Config"]["Env"]
    );
}

#[test]
fn a_run_killed_mid_push_leaves_a_node_a_rerun_converges_on_losing_nothing() {
    let node = node();
    node.genesis();
    let written = write_data();
    let slow = Path::new(NODE_ROOT).join("control/slow-push");
    std::fs::write(&slow, "3").unwrap();
    let mut run = node.mesh_adopt("run", &root().join("node/catalogue")).stdout(Stdio::null()).spawn();
    let killed = run.id();
    // The third push is the vault's: killed once the node has begun it, before it applies.
    let began = Instant::now();
    while node_log().matches("push begun").count() < 3 {
        assert!(began.elapsed() < Duration::from_secs(120), "no third push began: {}", node_log());
        assert!(run.try_wait().unwrap().is_none(), "the run ended before its third push: {}", node_log());
        std::thread::sleep(Duration::from_millis(50));
    }
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(node_log().matches("push finished").count() < 3, "the push had finished before the kill");
    // The node's push outlives the host killed outright, as a control plane's server does.
    let began = Instant::now();
    while node_log().matches("push finished").count() < 3 {
        assert!(began.elapsed() < Duration::from_secs(60), "the node never finished the push: {}", node_log());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::remove_file(&slow).unwrap();
    let key = vault_key();

    // The killed run's lock keeps the next run out, named, until the operator breaks it.
    let (status, events) = node.run(&root().join("node/catalogue"));
    assert_eq!((status, effects(&events)), (Some(1), 0), "{}", shown(&events));
    let lock = events.iter().find(|e| e["event"] == "lock").unwrap_or_else(|| panic!("{}", shown(&events)));
    assert_eq!((lock["holder"]["pid"].as_u64(), &lock["process_gone"]), (Some(u64::from(killed)), &Value::Bool(true)));
    let mesh_lock = Path::new(NODE_ROOT).join("control/mesh-lock.json");
    let left = std::fs::read_to_string(&mesh_lock).unwrap_or_default();
    assert!(left.contains(lock["holder"]["id"].as_str().unwrap()), "the killed run held the node's own lock: {left}");
    let unlocked = mesh_adopt()
        .args(["unlock", lock["holder"]["id"].as_str().unwrap(), "--config", "node/mesh-adopt.toml"])
        .env("XDG_STATE_HOME", node.state.path())
        .current_dir(root())
        .output();
    assert!(unlocked.status.success(), "{}", String::from_utf8_lossy(&unlocked.stderr));
    assert!(!mesh_lock.exists(), "unlock left the node's own lock");

    let (status, events) = node.run(&root().join("node/catalogue"));
    assert_eq!(status, Some(0), "{}", shown(&events));
    locked_by_the_mesh(&events);
    let effect = effect_of(&events);
    let sealed: Vec<&Value> = effect["pushes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["secrets"].as_array().unwrap())
        .filter(|s| s["accepted"] == false)
        .collect();
    assert!(sealed.is_empty(), "the re-run predicted a seal over what the killed run's push sealed: {effect}");
    assert_eq!(vault_key(), key, "the re-run sealed the vault's key over");
    assert_eq!(seals_log().lines().count(), 1, "{}", seals_log());
    assert_eq!(rows(), written.rows);
    assert_eq!(messages(), written.messages);
    assert_eq!(inspect("mesh-bus")["Config"]["Image"], "localhost/mesh-node/bus:2.9-mesh.1");
}

/// `control/secrets.json` with `edit` made to it: the control plane's record of the secrets
/// the node holds.
fn edit_secrets_record(edit: impl FnOnce(&mut Value)) {
    let path = Path::new(NODE_ROOT).join("control/secrets.json");
    let mut record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut record);
    std::fs::write(&path, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
}

/// The text of a run's events, and how many of its calls changed the mesh.
fn said_and_effects(out: &std::process::Output) -> (String, usize) {
    let events = events(&out.stdout);
    (format!("{}\n{}", shown(&events), String::from_utf8_lossy(&out.stderr)), effects(&events))
}

#[test]
fn a_control_plane_that_forgot_the_vaults_key_while_the_vault_holds_it_is_refused_and_the_key_kept() {
    let node = node();
    node.genesis();
    let written = write_data();
    let catalogue = root().join("node/catalogue");
    let (status, events) = node.run(&catalogue);
    assert_eq!(status, Some(0), "{}", shown(&events));
    let (key, seals, adopted, started) = (vault_key(), seals_log(), ids(), sql("select pg_postmaster_start_time()"));

    // The control plane loses its record of the key it sealed; the file, and the vault
    // running with it mounted, stay.
    let mut record = Value::Null;
    edit_secrets_record(|secrets| {
        record = secrets["mesh-vault"].as_object_mut().unwrap().remove("unseal-key").unwrap()
    });
    let source = format!("{NODE_ROOT}/state/secrets/mesh-vault/unseal-key");
    for command in ["check", "run"] {
        let out = node.mesh_adopt(command, &catalogue).output();
        let (said, effects) = said_and_effects(&out);
        assert_eq!((out.status.code(), effects), (Some(1), 0), "{command}: {said}");
        for fragment in [
            format!(
                "the engine shows `mesh-vault` (running) holding `mesh-vault`'s secret `unseal-key`, mounted at \
                 `/run/secrets/unseal-key` from `{source}`"
            ),
            "the control plane's `state` says the node holds no secret `unseal-key` of `mesh-vault`".to_string(),
        ] {
            assert!(said.contains(&fragment), "{command}: expected {fragment:?} in {said}");
        }
    }
    assert_eq!(vault_key(), key, "the vault's key was sealed over");
    assert_eq!((seals_log(), ids()), (seals.clone(), adopted.clone()));

    // The remedy the refusal names, the record put back: the run goes through, the key kept.
    edit_secrets_record(|secrets| secrets["mesh-vault"]["unseal-key"] = record);
    let (status, events) = node.run(&catalogue);
    assert_eq!(status, Some(0), "{}", shown(&events));
    assert_eq!((vault_key(), seals_log(), ids()), (key, seals, adopted));
    assert_eq!((rows(), sql("select pg_postmaster_start_time()")), (written.rows, started));
}

/// The image only the tests run (`node/setup`'s `bus-test`): taken away, it takes no image a
/// mesh runs with it.
const TEST_IMAGE: &str = "localhost/mesh-node/bus:2.9-test";

#[test]
fn a_node_without_a_modules_image_refuses_check_and_run_before_any_effect_and_its_remedy_keeps_the_data() {
    let node = node();
    node.genesis();
    let written = write_data();
    // The bus module runs the test-only image, which the node no longer has.
    let catalogue = edited_catalogue(|dir| {
        edit_json(dir.join("modules/nats/manifest.json"), |m| m["resources"][0]["image"] = TEST_IMAGE.into())
    });
    tool(&["node/podman", "rmi", TEST_IMAGE]);
    let (before, store, started) = (ids(), id("mesh-store"), sql("select pg_postmaster_start_time()"));
    for command in ["check", "run"] {
        let out = node.mesh_adopt(command, catalogue.path()).output();
        let (said, effects) = said_and_effects(&out);
        assert_eq!((out.status.code(), effects), (Some(1), 0), "{command}: {said}");
        let named = format!("node `node-1` has no image `{TEST_IMAGE}`, which `nats` runs in `mesh-bus`");
        assert!(said.contains(&named), "{command}: {said}");
        assert_eq!(ids(), before, "{command}: a container changed");
    }
    assert_eq!((id("mesh-store"), sql("select pg_postmaster_start_time()")), (store.clone(), started.clone()));
    // A person is told the remedy too.
    let out = mesh_adopt()
        .args(["check", "--mesh", "live", "--config", "node/mesh-adopt.toml", "--catalogue"])
        .arg(catalogue.path())
        .args(["--catalog-source", &format!("{NODE_ROOT}/catalogue.git@{CATALOGUE_REF}")])
        .env("XDG_CACHE_HOME", shared_compile_cache())
        .env("XDG_STATE_HOME", node.state.path())
        .current_dir(root())
        .output();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(&format!("remedy       put the image `{TEST_IMAGE}` on node `node-1`")), "{said}");

    // node/README.md's remedy for a missing image brings it back, touching nothing else.
    let began = Instant::now();
    tool(&["node/setup", "--image", TEST_IMAGE]);
    assert!(began.elapsed() < Duration::from_secs(60), "bringing one image back took {:?}", began.elapsed());
    assert!(run_tool(&["node/podman", "image", "exists", TEST_IMAGE]).is_ok(), "the image is not back");
    assert_eq!(ids(), before, "bringing the image back changed a container");
    assert_eq!((id("mesh-store"), sql("select pg_postmaster_start_time()")), (store, started));
    assert_eq!(rows(), written.rows, "the store's rows");
    assert_eq!(messages(), written.messages);
    let checked = node.mesh_adopt("check", catalogue.path()).output();
    assert_eq!(checked.status.code(), Some(0), "{}", said_and_effects(&checked).0);
}

#[test]
fn the_readmes_live_line_runs_as_written_after_node_demo_up_and_demo_read_shows_kept_and_recreated() {
    let node = node();
    let binary = env!("CARGO_BIN_EXE_mesh-adopt");
    let demo = |step: &str| {
        Command::new("node/demo")
            .arg(step)
            .env("MESH_ADOPT", binary)
            .env("XDG_CACHE_HOME", shared_compile_cache())
            .env("XDG_STATE_HOME", node.state.path())
            .current_dir(root())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let up = demo("up");
    assert!(up.status.success(), "{}{}", String::from_utf8_lossy(&up.stdout), String::from_utf8_lossy(&up.stderr));
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("mesh-adopt run --mesh live "))
        .unwrap_or_else(|| panic!("the README shows no live line"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let run_line = || {
        Command::new(binary)
            .args(&words[1..])
            .env("XDG_CACHE_HOME", shared_compile_cache())
            .env("XDG_STATE_HOME", node.state.path())
            .current_dir(root())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run_line();
    assert_eq!(out.status.code(), Some(0), "`{line}`: {}", String::from_utf8_lossy(&out.stdout));
    let read = demo("read");
    let said = String::from_utf8_lossy(&read.stdout);
    assert!(read.status.success(), "{said}{}", String::from_utf8_lossy(&read.stderr));
    for fragment in ["rows: 1000, as written", "never restarted", "recreated from the one genesis raised", "kept"] {
        assert!(said.contains(fragment), "expected {fragment:?} in {said}");
    }

    // The bus gone, as a push killed between removing and raising it leaves it: the next check
    // says so, and the README's line raises it again, its messages kept.
    tool(&["node/podman", "rm", "--force", "--time", "1", "mesh-bus"]);
    let read = demo("read");
    assert!(!read.status.success(), "a bus gone read as kept");
    assert!(String::from_utf8_lossy(&read.stdout).contains("mesh-bus: no container: gone"));
    let checked = node.mesh_adopt("check", &root().join("node/catalogue")).output();
    let (said, _) = said_and_effects(&checked);
    assert_eq!(checked.status.code(), Some(0), "{said}");
    assert!(
        said.contains(r#""warning":"container-gone","container":"mesh-bus","module":"nats","genesis":true"#),
        "{said}"
    );
    let out = run_line();
    assert_eq!(out.status.code(), Some(0), "`{line}`: {}", String::from_utf8_lossy(&out.stdout));
    let read = demo("read");
    assert!(read.status.success(), "{}", String::from_utf8_lossy(&read.stdout));
}
