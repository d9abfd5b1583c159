//! The world read again before each push: a mesh that moves between preflight and a module's
//! push (another run pushing, an operator) is caught just before that push, which is not
//! told; the run stops there, its summary claims nothing it did not do, and a replay of its
//! record stops at the same place.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mesh_adopt_runtime::events::{Change, Event};
use mesh_adopt_runtime::mesh::layer::{Layer, Layered};
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::mesh::{Command, Mesh, MeshError};
use mesh_adopt_runtime::record::stream::{RecordFile, Sink};
use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Mode, ModuleOutcome, PHASE_THREE, Run, RunOptions};

use crate::support::{example_catalogue, host, mesh_adopt, plugin};

/// `prepare node-1 nats`: after it, another run moves the mesh.
fn prepare_nats() -> Command {
    Command::Prepare { node: "node-1".into(), module: "nats".into() }
}

/// Another run, from a machine the lock does not cover: once `nats` is prepared on the node,
/// it pushes the node itself and waits for the push to land, before nats's own push.
#[derive(Default)]
struct AnotherRunPushes {
    pushed: AtomicBool,
}

#[async_trait::async_trait]
impl Layer for AnotherRunPushes {
    async fn tell(&self, inner: &dyn Mesh, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        let answer = inner.tell(command, timeout).await;
        if *command == prepare_nats() && !self.pushed.swap(true, Ordering::SeqCst) {
            inner.tell(&Command::Push { node: "node-1".into() }, timeout).await.unwrap();
            inner.sleep(Duration::from_secs(30)).await;
        }
        answer
    }
}

/// The lines of a stream, as JSON.
fn lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Runs phase three of the example catalogue in `dir` on `mesh`, recorded to `record`.
async fn run_recorded(dir: &Path, mesh: Arc<dyn Mesh>, record: &Path) -> mesh_adopt_runtime::RunReport {
    let catalogue = Catalogue::at(dir);
    let foundation = Foundation::load(&dir.join("foundation.json")).unwrap();
    let sink: Arc<dyn Sink> = Arc::new(RecordFile::create(record).unwrap());
    let seen: Arc<Mutex<Vec<Event>>> = Arc::default();
    let run = Run::builder(host(), &catalogue, &foundation, mesh)
        .credentials(Arc::new(Credentials::open(&dir.join("genesis/credentials"))))
        .options(RunOptions {
            node: "node-1".into(),
            catalog_source: Some(mesh_adopt_runtime::options::CatalogSource {
                repository: "https://git.mesh.test/c.git".into(),
                reference: Some("v2".into()),
            }),
            ..RunOptions::default()
        })
        .events(Arc::new(vec![sink, {
            let kept = seen.clone();
            Arc::new(move |event: &Event| kept.lock().unwrap().push(event.clone())) as Arc<dyn Sink>
        }]))
        .build();
    let report = run.run(&PHASE_THREE.map(String::from), Mode::Adopt).await;
    run.end(report.exit_code());
    report
}

/// The example catalogue (postgres's plugin as built) and a simulated mesh of its foundation on
/// node-1: what each re-read on the simulator starts from.
fn example_mesh() -> (tempfile::TempDir, Arc<SimulatedMesh>) {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let simulated = Arc::new(SimulatedMesh::new(SimSetup::new(foundation, "node-1")));
    (dir, simulated)
}

#[tokio::test]
async fn a_mesh_moved_before_nats_pushes_stops_nats_before_its_push_and_the_replay_stops_there_too() {
    let (dir, simulated) = example_mesh();
    let mesh = Arc::new(Layered::new(simulated.clone(), AnotherRunPushes::default()));
    let record = dir.path().join("moved.jsonl");
    let report = run_recorded(dir.path(), mesh.clone(), &record).await;

    // postgres adopted; nats stopped before its push, naming what moved; the vault never ran.
    assert!(matches!(report.modules[0].1, ModuleOutcome::Adopted(_)), "{:?}", report.modules);
    let ModuleOutcome::Refused { code, message, .. } = &report.modules[1].1 else {
        panic!("nats: {:?}", report.modules[1].1)
    };
    assert_eq!(code.as_deref(), Some(mesh_adopt_runtime::plan::Refusal::MESH_MOVED));
    for words in [
        "container `mesh-bus` image: predicted nats:2.10.22-alpine, found",
        "registry.mesh.local/nats-snapshot:2.10.22-mesh.3",
        "Another run or an operator may be at work on the mesh",
        "the push was not told",
    ] {
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    assert!(matches!(report.modules[2].1, ModuleOutcome::NotRun { .. }), "{:?}", report.modules);
    assert_eq!(report.exit_code(), 1);
    // nats told no push: the only pushes the node had are postgres's and the other run's.
    let pushes = simulated.commands().iter().filter(|c| matches!(c, Command::Push { .. })).count();
    assert_eq!(pushes, 2, "{:?}", simulated.commands());

    // The record: nats's push was denied, never sent, and the summary claims no change of
    // the other run's (mesh-bus was recreated by it, not by this run).
    let events = lines(&std::fs::read_to_string(&record).unwrap());
    let push = events
        .iter()
        .find(|e| e["event"] == "call" && e["module"] == "nats" && e["args"][0] == "push")
        .expect("nats's push is recorded");
    assert_eq!(push["result"]["error"]["kind"], "denied", "{push}");
    let reread = events.iter().find(|e| e["event"] == "reread" && e["module"] == "nats").expect("a re-read");
    assert_eq!(reread["moved"][0]["field"], "image", "{reread}");
    let summary = events.iter().find(|e| e["event"] == "summary").unwrap();
    let summary_text = summary.to_string();
    assert!(!summary_text.contains("mesh-bus"), "the summary claims the other run's change: {summary_text}");
    assert!(
        report
            .changes
            .iter()
            .all(|c| !matches!(Change::from(c), Change::Recreated { ref container, .. } if container == "mesh-bus")),
        "{:?}",
        report.changes
    );

    // The replay stops nats at the same place, with the same words, and diverges nowhere.
    let replayed = mesh_adopt().args(["replay", "--json", record.to_str().unwrap()]).catalogue(dir.path()).output();
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    let events = lines(&stdout);
    let verdict = events.iter().find(|e| e["event"] == "replay").expect("a verdict");
    assert!(verdict["divergence"].is_null(), "{verdict}");
    let outcome = events.iter().find(|e| e["event"] == "outcome" && e["module"] == "nats").unwrap();
    assert_eq!(outcome["code"], "mesh-moved", "{outcome}");
    assert_eq!(outcome["message"].as_str(), Some(message.as_str()));
    // The vault made no call in the recorded run, so the replay has none of its to answer.
    let vault = events.iter().find(|e| e["event"] == "outcome" && e["module"] == "mesh-vault");
    assert!(vault.is_none_or(|v| v["outcome"] == "not_run"), "{vault:?}");
}

#[tokio::test]
async fn a_mesh_nothing_moved_is_read_again_before_each_push_and_adopted() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation, "node-1")));
    let record = dir.path().join("still.jsonl");
    let report = run_recorded(dir.path(), mesh, &record).await;
    assert!(report.succeeded(), "{:?}", report.modules);
    let events = lines(&std::fs::read_to_string(&record).unwrap());
    let rereads: Vec<&serde_json::Value> = events.iter().filter(|e| e["event"] == "reread").collect();
    assert_eq!(rereads.len(), 3, "one before each module's push: {rereads:?}");
    assert!(rereads.iter().all(|r| r["moved"].as_array().unwrap().is_empty() && r["unseen"].is_null()));
    // Each comes just before its module's push.
    for reread in rereads {
        let at = events.iter().position(|e| e == reread).unwrap();
        let next = &events[at + 1..].iter().find(|e| e["event"] == "call").unwrap();
        assert_eq!((&next["module"], &next["args"][0]), (&reread["module"], &"push".into()));
    }
}

/// Runs `words` (a run's modules and options) through the binary on fresh live stand-ins,
/// nats's `prepare` slow; once the run is in it, `change` alters the stand-in's node (its
/// directory given). Answers how the run ended and the stand-in.
fn run_changing_the_node_during_the_nats_prepare(
    words: &[&str],
    change: impl FnOnce(&Path),
) -> (std::process::Output, crate::live::StandIn) {
    let standin = crate::live::StandIn::new();
    std::fs::write(standin.path().join("slow-prepare"), "1").unwrap();
    let config = standin.config(None);
    let catalogue = tempfile::tempdir().unwrap();
    crate::support::TestMesh::new().write_catalogue(catalogue.path());
    std::fs::copy(crate::support::root().join("catalogue/foundation.json"), catalogue.path().join("foundation.json"))
        .unwrap();
    let child = mesh_adopt()
        .args(["run", "--mesh", "live", "--catalog-source", "https://git.mesh.test/c.git"])
        .args(words)
        .arg("--config")
        .arg(&config)
        .catalogue(catalogue.path())
        .stdout(std::process::Stdio::piped())
        .spawn();
    // The run is in nats's slow prepare once the stand-in has logged it.
    let started = std::time::Instant::now();
    while !standin.read("argv.log").contains("prepare node-1 nats") {
        assert!(started.elapsed() < Duration::from_secs(120), "nats never prepared: {}", standin.read("argv.log"));
        std::thread::sleep(Duration::from_millis(20));
    }
    change(standin.path());
    (child.wait_with_output().unwrap(), standin)
}

/// Through the binary on the live stand-ins: while nats's `prepare` is slow, an operator
/// moves the bus onto another image (the stand-in's files, as its engine reads them); the run
/// reads the mesh again before nats's push, tells no push, names what moved and exits 1.
#[test]
fn on_the_live_stand_ins_an_outside_change_during_a_slow_step_is_caught_before_the_next_push() {
    let (out, standin) = run_changing_the_node_during_the_nats_prepare(&["postgres", "nats"], |node| {
        std::fs::write(node.join("images/mesh-bus"), "nats:2.11.0-by-hand\n").unwrap()
    });
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for words in [
        "mesh-moved",
        "container `mesh-bus` image: predicted nats:2.10.22-alpine, found nats:2.11.0-by-hand",
        "Another run or an operator may be at work on the mesh",
    ] {
        assert!(said.contains(words), "{words:?} not in {said}");
    }
    let pushes = standin.read("argv.log").lines().filter(|l| l.starts_with("push")).count();
    assert_eq!(pushes, 1, "only postgres pushed: {}", standin.read("argv.log"));
}

/// Through the binary on the live stand-ins: while nats's `prepare` is slow, the engine's
/// answer for the store turns unreadable (a spec label that is no digest). The re-read before
/// nats's push cannot see the mesh: nats is refused for that, and the module after it is not
/// run for that, not for a mesh that moved.
#[test]
fn on_the_live_stand_ins_a_mesh_unreadable_before_a_push_is_said_to_be_unreadable_not_moved() {
    let (out, _standin) =
        run_changing_the_node_during_the_nats_prepare(&["--json", "postgres", "nats", "mesh-vault"], |node| {
            std::fs::write(node.join("specs/mesh-store"), "00").unwrap()
        });
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let events = lines(&said);
    let outcome =
        |module: &str| events.iter().find(|e| e["event"] == "outcome" && e["module"] == module).cloned().expect(&said);
    assert_eq!(outcome("nats")["code"], "mesh-unseen", "{said}");
    let vault = outcome("mesh-vault");
    let because = vault["because"].as_str().unwrap_or_default();
    assert!(because.contains("the mesh could not be read again before `nats`'s push"), "{vault}");
    assert!(!because.contains("moved"), "{vault}");
}

/// Runs postgres and nats through the binary on the live stand-ins with the `state` command,
/// nats's build slow; while it builds, `edit` changes what the control plane holds for
/// `module` (the stand-in's `registered/MODULE.json`). Answers the exit status, what the run
/// said, and the stand-in.
fn run_with_a_manifest_edited_during_the_nats_build(
    module: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (Option<i32>, String, crate::live::StandIn) {
    let standin = crate::live::StandIn::new();
    std::fs::write(standin.path().join("slow-build"), "2").unwrap();
    let config = standin.config_with_state(None);
    let catalogue = tempfile::tempdir().unwrap();
    crate::support::TestMesh::new().write_catalogue(catalogue.path());
    std::fs::copy(crate::support::root().join("catalogue/foundation.json"), catalogue.path().join("foundation.json"))
        .unwrap();
    let child = mesh_adopt()
        .args([
            "run",
            "--json",
            "--mesh",
            "live",
            "--catalog-source",
            "https://git.mesh.test/c.git",
            "postgres",
            "nats",
        ])
        .arg("--config")
        .arg(&config)
        .catalogue(catalogue.path())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let started = std::time::Instant::now();
    while !standin.read("argv.log").lines().any(|l| l.starts_with("build ") && l.contains("modules/nats")) {
        assert!(started.elapsed() < Duration::from_secs(120), "nats never built: {}", standin.read("argv.log"));
        std::thread::sleep(Duration::from_millis(20));
    }
    let registered = standin.path().join(format!("registered/{module}.json"));
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&registered).unwrap()).unwrap();
    edit(&mut manifest);
    std::fs::write(&registered, manifest.to_string()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), standin)
}

/// The container `name` of a manifest, to edit.
fn container<'a>(manifest: &'a mut serde_json::Value, name: &str) -> &'a mut serde_json::Value {
    manifest["resources"].as_array_mut().unwrap().iter_mut().find(|r| r["name"] == name).unwrap()
}

/// Asserts that nats was stopped before its push for what `words` name, the re-read naming
/// it, and that the node kept every container postgres's push left (only postgres pushed).
fn assert_stopped_before_the_nats_push(
    status: Option<i32>,
    said: &str,
    standin: &crate::live::StandIn,
    words: &[&str],
) {
    assert_eq!(status, Some(1), "{said}");
    let events = lines(said);
    let reread = events.iter().find(|e| e["event"] == "reread" && e["module"] == "nats").expect(said);
    let moved = reread["moved"].to_string();
    let outcome = events.iter().find(|e| e["event"] == "outcome" && e["module"] == "nats").expect(said);
    assert_eq!(outcome["code"], "mesh-moved", "{outcome}");
    let message = outcome["message"].as_str().unwrap();
    for words in words {
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    assert!(moved.contains(words[0].split('`').nth(1).unwrap()), "the re-read names the module: {moved}");
    let pushes = standin.read("argv.log").lines().filter(|l| l.starts_with("push")).count();
    assert_eq!(pushes, 1, "only postgres pushed: {}", standin.read("argv.log"));
    let applied = standin.read("applied.log");
    assert!(!applied.contains("recreated"), "nothing was recreated: {applied}");
}

/// A registered module's manifest is as much what the prediction was made from as a
/// container on the node: postgres's, edited while nats builds to run the genesis store on
/// another image, would have nats's push recreate the store postgres declared kept. The re-read
/// before nats's push finds it, names the module, the container and the field, and the push
/// is not told.
#[test]
fn on_the_live_stand_ins_an_edit_to_another_modules_registered_manifest_is_caught_before_the_next_push() {
    let (status, said, standin) = run_with_a_manifest_edited_during_the_nats_build("postgres", |manifest| {
        container(manifest, "mesh-store")["image"] = "postgres:17".into();
    });
    assert_stopped_before_the_nats_push(
        status,
        &said,
        &standin,
        &["module `postgres` container `mesh-store` image: predicted postgres:16.4-bookworm, found postgres:17"],
    );
}

/// The same of the pushing module's own manifest, and of a field of the spec other than the
/// image: what the plan registered is what the prediction applies, and anything else the
/// control plane holds by its push is someone else's.
#[test]
fn on_the_live_stand_ins_an_edit_to_the_pushing_modules_own_manifest_is_caught_before_its_push() {
    let (status, said, standin) = run_with_a_manifest_edited_during_the_nats_build("nats", |manifest| {
        container(manifest, "mesh-bus")["environment"] = serde_json::json!({"NATS_DEBUG": "1"});
        manifest["secrets"] = serde_json::json!(["by-hand"]);
    });
    assert_stopped_before_the_nats_push(
        status,
        &said,
        &standin,
        &[
            "module `nats` container `mesh-bus` environment: predicted none, found {\"NATS_DEBUG\":\"1\"}",
            "module `nats` secrets",
        ],
    );
}

/// On the simulator, through a layer: another run re-registers postgres with the store on
/// another image once nats is prepared. The re-read before nats's push names it, and the
/// store is never recreated.
#[derive(Default)]
struct AnotherRunRegisters {
    registered: AtomicBool,
}

#[async_trait::async_trait]
impl Layer for AnotherRunRegisters {
    async fn tell(&self, inner: &dyn Mesh, command: &Command, timeout: Duration) -> Result<String, MeshError> {
        let answer = inner.tell(command, timeout).await;
        if *command == prepare_nats() && !self.registered.swap(true, Ordering::SeqCst) {
            let mut manifest: serde_json::Value = serde_json::from_slice(
                &std::fs::read(crate::support::root().join("catalogue/modules/postgres/manifest.json")).unwrap(),
            )
            .unwrap();
            container(&mut manifest, "mesh-store")["image"] = "postgres:17".into();
            let bytes = serde_json::to_vec(&manifest).unwrap();
            inner
                .carry("postgres-module.json", mesh_adopt_runtime::mesh::Payload::Bytes(bytes), "/by-hand.json")
                .await?;
            inner.tell(&Command::ModuleAdd { remote: "/by-hand.json".into() }, timeout).await?;
        }
        answer
    }
}

#[tokio::test]
async fn on_the_simulator_a_registered_manifest_changed_before_a_push_stops_it() {
    let (dir, simulated) = example_mesh();
    let mesh = Arc::new(Layered::new(simulated.clone(), AnotherRunRegisters::default()));
    let record = dir.path().join("registered.jsonl");
    let report = run_recorded(dir.path(), mesh, &record).await;
    assert!(matches!(report.modules[0].1, ModuleOutcome::Adopted(_)), "{:?}", report.modules);
    let ModuleOutcome::Refused { code, message, .. } = &report.modules[1].1 else {
        panic!("nats: {:?}", report.modules[1].1)
    };
    assert_eq!(code.as_deref(), Some(mesh_adopt_runtime::plan::Refusal::MESH_MOVED));
    let words = "module `postgres` container `mesh-store` image: predicted postgres:16.4-bookworm, found postgres:17";
    assert!(message.contains(words), "{message}");
    assert_eq!(report.exit_code(), 1);
    let pushes = simulated.commands().iter().filter(|c| matches!(c, Command::Push { .. })).count();
    assert_eq!(pushes, 1, "only postgres pushed: {:?}", simulated.commands());
    let events = lines(&std::fs::read_to_string(&record).unwrap());
    let reread = events.iter().find(|e| e["event"] == "reread" && e["module"] == "nats").unwrap();
    assert_eq!(reread["moved"][0]["what"], "module `postgres` container `mesh-store`", "{reread}");
    assert_eq!(reread["moved"][0]["field"], "image", "{reread}");
}
