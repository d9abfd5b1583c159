//! The runtime embedded in an installer, in each setting an installer may have: a tokio
//! current-thread runtime, a runtime built without timers or IO, a synchronous `main`, and a
//! run cancelled half-way. None panics; each adopts phase three, or stops as asked.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::record::transcript::Transcript;
use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Run, RunReport};
use mesh_adopt_runtime::{Mode, PHASE_THREE};

use crate::live::{StandIn, standin_processes_alive};
use crate::support::{TestMesh, host};

/// Phase three's catalogue written in `dir`, and its foundation.
fn phase_three_in(dir: &Path) -> Foundation {
    let mesh = TestMesh::new();
    mesh.write_catalogue(dir);
    Foundation::parse(&serde_json::to_vec(&mesh.foundation).unwrap()).unwrap()
}

fn modules() -> Vec<String> {
    PHASE_THREE.map(String::from).to_vec()
}

/// Phase three's catalogue and foundation, written in a directory: what an installer has.
struct PhaseThree<'a> {
    dir: &'a Path,
    catalogue: Catalogue,
    foundation: Foundation,
}

impl PhaseThree<'_> {
    fn at(dir: &Path) -> PhaseThree<'_> {
        PhaseThree { dir, catalogue: Catalogue::at(dir), foundation: phase_three_in(dir) }
    }

    /// What an installer would build: a run of phase three on a fresh simulated mesh.
    fn run(&self) -> Run<'_> {
        let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(self.foundation.clone(), "node-1")));
        Run::builder(host(), &self.catalogue, &self.foundation, mesh)
            .credentials(Arc::new(Credentials::open(&self.dir.join("genesis/credentials"))))
            .options(TestMesh::new().options)
            .build()
    }
}

/// What an installer would run: phase three on the simulated mesh, as a future.
async fn adopt_phase_three(dir: &Path) -> RunReport {
    PhaseThree::at(dir).run().run(&modules(), Mode::Adopt).await
}

fn assert_all_adopted(report: &RunReport) {
    assert!(report.succeeded(), "{:?}", report.modules);
    assert_eq!(report.modules.len(), 3);
}

#[tokio::test(flavor = "current_thread")]
async fn phase_three_adopts_on_a_current_thread_runtime() {
    let dir = tempfile::tempdir().unwrap();
    assert_all_adopted(&adopt_phase_three(dir.path()).await);
}

#[test]
fn phase_three_adopts_on_a_runtime_built_without_timers_or_io() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Twenty times: a timer the run wrongly took from the caller's runtime would panic in
    // some of them (the watchdog races the plugin).
    for _ in 0..20 {
        assert_all_adopted(&runtime.block_on(adopt_phase_three(dir.path())));
    }
}

#[test]
fn the_wall_deadline_and_a_live_mesh_work_without_the_callers_timers() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    // The watchdog: a plugin sleeping a year through the contract is stopped at its deadline.
    let ran = runtime.block_on(TestMesh::new().with_plugin("postgres", "clock_sleeps_a_year").run());
    assert_eq!(ran.stop_kind("postgres"), mesh_adopt_runtime::error::StopKind::WallTime);
    // A live mesh brings its own thread for its processes, their timeouts and its sleeps.
    let standin = StandIn::new();
    let dir = tempfile::tempdir().unwrap();
    let (report, _) = runtime.block_on(TestMesh::new().run_live(dir.path(), standin.mesh(None), &["mesh-vault"]));
    assert!(report.succeeded(), "{:?}", report.modules);
}

#[test]
fn a_synchronous_main_adopts_through_run_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let report = PhaseThree::at(dir.path()).run().run_blocking(&modules(), Mode::Adopt).unwrap();
    assert_all_adopted(&report);
}

#[tokio::test]
async fn run_blocking_called_from_async_code_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let report = PhaseThree::at(dir.path()).run().run_blocking(&modules(), Mode::Adopt).unwrap();
    assert_all_adopted(&report);
}

#[tokio::test(flavor = "current_thread")]
async fn a_run_cancelled_in_a_hanging_tell_ends_its_command_and_its_record_says_interrupted() {
    let standin = StandIn::new();
    std::fs::write(standin.path().join("hang-build"), "").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let phase_three = PhaseThree::at(dir.path());
    // The embedder's record: every event as a JSON line, as it happens.
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let into = lines.clone();
    let transcript = Arc::new(Transcript::observed(Box::new(move |event| {
        let line = serde_json::to_string(&event.to_event()).unwrap();
        into.lock().unwrap().push(line);
    })));
    let run = Run::builder(host(), &phase_three.catalogue, &phase_three.foundation, standin.mesh(None))
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .record(transcript.clone())
        .options(TestMesh::new().options)
        .build();
    let modules = vec!["mesh-vault".to_string()];
    let building = async {
        while !standin.read("argv.log").contains("build ") {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    // The embedder's cancellation: whichever comes first, and the run's future is dropped.
    tokio::select! {
        report = run.run(&modules, Mode::Adopt) => panic!("the build hangs, yet the run ended: {:?}", report.modules),
        () = building => {}
    }
    let cancelled = Instant::now();
    lines.lock().unwrap().push(serde_json::to_string(&transcript.interrupted("cancelled")).unwrap());
    // The hanging build's whole process group is gone at once.
    while !standin_processes_alive(&standin).is_empty() {
        assert!(cancelled.elapsed() < Duration::from_secs(2), "{:?}", standin_processes_alive(&standin));
        std::thread::sleep(Duration::from_millis(20));
    }
    let lines = lines.lock().unwrap();
    let last: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(
        (last["event"].as_str(), last["signal"].as_str(), last["exit"].as_u64()),
        (Some("interrupted"), Some("cancelled"), Some(130))
    );
    let done: Vec<String> = last["done"].as_array().unwrap().iter().map(|e| e["args"].to_string()).collect();
    assert!(done.iter().any(|d| d.contains("mesh-vault-module.json")), "{done:?}");
    assert!(!done.iter().any(|d| d.contains("\"build\"")), "the build never answered, so it is not done: {done:?}");
}

/// An embedder cancels a run on the simulator, which answers every call at once, as the
/// event of postgres's outcome arrives: the run yields between modules and at every host
/// call, so it stops there, nats makes no call, the record ends `interrupted`, and the mesh's
/// lock is released as the run's future is dropped.
#[tokio::test(flavor = "current_thread")]
async fn a_run_cancelled_as_an_outcome_arrives_stops_before_the_next_module_makes_a_call() {
    use mesh_adopt_runtime::events::Event;
    use mesh_adopt_runtime::mesh::Mesh as _;
    let dir = tempfile::tempdir().unwrap();
    let phase_three = PhaseThree::at(dir.path());
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(phase_three.foundation.clone(), "node-1")));
    let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
    let cancel = Mutex::new(Some(cancel));
    let seen = Arc::new(Mutex::new(Vec::<Event>::new()));
    let into = seen.clone();
    let run = Run::builder(host(), &phase_three.catalogue, &phase_three.foundation, mesh.clone())
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .options(TestMesh::new().options)
        .events(Arc::new(move |event: &Event| {
            into.lock().unwrap().push(event.clone());
            if let Event::Outcome(outcome) = event
                && outcome.module == "postgres"
                && let Some(cancel) = cancel.lock().unwrap().take()
            {
                let _ = cancel.send(());
            }
        }))
        .build();
    let modules = modules();
    tokio::select! {
        report = run.run(&modules, Mode::Adopt) => panic!("cancelled at postgres's outcome, yet it ended: {:?}", report.modules),
        _ = cancelled => {}
    }
    run.interrupted("cancelled");
    let events = seen.lock().unwrap().clone();
    let adopted = events.iter().any(|e| matches!(e, Event::Outcome(o) if o.module == "postgres" && o.succeeded));
    assert!(adopted, "postgres adopted before the cancel: {events:?}");
    let by_nats = |e: &&Event| {
        matches!(e, Event::Call(c) if c.module == "nats") || matches!(e, Event::Started(s) if s.module == "nats")
    };
    let nats_calls: Vec<&Event> = events.iter().filter(by_nats).collect();
    assert!(nats_calls.is_empty(), "nats made a call after the cancel: {nats_calls:?}");
    assert!(!mesh.calls().iter().any(|c| c.contains("nats")), "{:?}", mesh.calls());
    assert!(matches!(events.last(), Some(Event::Interrupted(i)) if i.signal == "cancelled"), "{:?}", events.last());
    assert_eq!(mesh.lock_holder().await, Ok(None), "the dropped run released the mesh's lock");
}

/// Drives `future` on this thread with no runtime at all: what any executor at least does.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::park();
    }
}

#[test]
fn phase_three_adopts_driven_by_an_executor_that_is_not_tokio() {
    let dir = tempfile::tempdir().unwrap();
    assert_all_adopted(&block_on(adopt_phase_three(dir.path())));
    // And the wall deadline's watchdog still stops a plugin sleeping a year.
    let ran = block_on(TestMesh::new().with_plugin("postgres", "clock_sleeps_a_year").run());
    assert_eq!(ran.stop_kind("postgres"), mesh_adopt_runtime::error::StopKind::WallTime);
    // And a live mesh, whose processes, timeouts and sleeps are its own thread's.
    let standin = StandIn::new();
    let dir = tempfile::tempdir().unwrap();
    let (report, _) = block_on(TestMesh::new().run_live(dir.path(), standin.mesh(None), &["mesh-vault"]));
    assert!(report.succeeded(), "{:?}", report.modules);
}

/// A cold compile runs off the executor's thread: a run cancelled while its plugins compile
/// (a host with no cache compiles each) ends as soon as its executor takes the cancel, on a
/// current-thread runtime where a compile on that thread would hold everything; the
/// abandoned compile ends on its own thread and its plugin is linked for the next run.
#[tokio::test(flavor = "current_thread")]
async fn a_run_cancelled_while_its_plugins_compile_ends_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let phase_three = PhaseThree::at(dir.path());
    let cold = mesh_adopt_runtime::PluginHost::new(mesh_adopt_runtime::Limits::default()).unwrap();
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(phase_three.foundation.clone(), "node-1")));
    let loaded = Arc::new(Mutex::new(0usize));
    let seen = loaded.clone();
    let run = Run::builder(&cold, &phase_three.catalogue, &phase_three.foundation, mesh)
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .options(TestMesh::new().options)
        .record(Arc::new(Transcript::observed(Box::new(move |event| {
            if serde_json::to_value(event.to_event()).unwrap()["event"] == "loaded" {
                *seen.lock().unwrap() += 1;
            }
        }))))
        .build();
    let (cancel_at, modules) = (Duration::from_millis(30), modules());
    let started = Instant::now();
    tokio::select! {
        report = run.run(&modules, Mode::Check) => panic!("three cold compiles ended within 30 ms: {:?}", report.modules),
        () = tokio::time::sleep(cancel_at) => {}
    }
    let late = started.elapsed() - cancel_at;
    assert!(*loaded.lock().unwrap() < 3, "the cancel came after every plugin was compiled");
    assert!(late < Duration::from_millis(50), "the cancel took effect {late:?} after it was asked for");
    // The abandoned compile ends on its thread and is kept: the next run's load takes it.
    let again = PhaseThree::at(dir.path());
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(again.foundation.clone(), "node-1")));
    let report = Run::builder(&cold, &again.catalogue, &again.foundation, mesh)
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .options(TestMesh::new().options)
        .build()
        .run(&modules, Mode::Check)
        .await;
    assert!(report.succeeded(), "{:?}", report.modules);
}

/// The threads of this process, by name, as the system lists them.
fn thread_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect();
    names.sort();
    names
}

/// Run in a process of its own by the test below: a cold run of phase three on a
/// current-thread runtime, then the threads left, one name a line.
#[test]
#[ignore = "run by the_threads_a_run_leaves_are_the_ones_the_embedding_guide_names, in a process of its own"]
fn threads_left_by_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let phase_three = PhaseThree::at(dir.path());
    let cold = mesh_adopt_runtime::PluginHost::new(mesh_adopt_runtime::Limits::default()).unwrap();
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(phase_three.foundation.clone(), "node-1")));
    let report = runtime.block_on(
        Run::builder(&cold, &phase_three.catalogue, &phase_three.foundation, mesh)
            .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
            .options(TestMesh::new().options)
            .build()
            .run(&modules(), Mode::Adopt),
    );
    assert!(report.succeeded(), "{:?}", report.modules);
    println!("while the host lives:");
    for name in thread_names() {
        println!("thread {name}");
    }
    drop(cold);
    std::thread::sleep(Duration::from_millis(100));
    println!("after the host is dropped:");
    for name in thread_names() {
        println!("thread {name}");
    }
}

/// The threads docs/embedding.md says a run leaves are the only ones it leaves: the engine's
/// ticker while the host lives, the runtime's timer thread, and wasmtime's pool of compile
/// threads (one a core, named after the thread that first compiled, `mesh-adopt-compile`,
/// which itself ends with its compile).
#[test]
fn the_threads_a_run_leaves_are_the_ones_the_embedding_guide_names() {
    let probe = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["embedding::threads_left_by_a_run", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&probe.stdout).into_owned();
    assert!(probe.status.success(), "{said}{}", String::from_utf8_lossy(&probe.stderr));
    let (living, after) = said.split_once("after the host is dropped:").expect("the probe's two lists");
    let names = |list: &str| -> Vec<String> {
        list.lines().filter_map(|l| l.strip_prefix("thread ")).map(String::from).collect()
    };
    let (living, after) = (names(living), names(after));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The test harness's own: the process's main thread and the test's thread.
    let harness = |name: &str| name.starts_with("it-") || name.starts_with("embedding::");
    let documented = |name: &str| ["futures-timer", "mesh-adopt-comp"].contains(&name) || harness(name);
    assert_eq!(
        living.iter().filter(|n| *n == "mesh-adopt-epoc").count(),
        1,
        "one ticker while the host lives: {living:?}"
    );
    assert!(after.iter().all(|n| documented(n)), "a thread the guide does not name: {after:?}");
    assert!(after.iter().filter(|n| *n == "mesh-adopt-comp").count() <= cores, "{after:?}");
    assert!(docs_embedding().contains("`futures-timer`") && docs_embedding().contains("`mesh-adopt-epoch`"));
}

fn docs_embedding() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/embedding.md")).unwrap()
}
