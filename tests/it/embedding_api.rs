//! The runtime's surface as an installer meets it: the run's event stream, a record written
//! with the runtime alone that the command replays, typed errors told apart without reading
//! their text, and a public API that exposes neither the contract's generated types nor
//! wasmtime's.

use std::path::Path;
use std::sync::{Arc, Mutex};

use mesh_adopt_runtime::error::{BundleFault, CatalogueError, FoundationError, NoPlugin, PluginError};
use mesh_adopt_runtime::events::Event;
use mesh_adopt_runtime::mesh::layer::{Layer, Layered};
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::plan::PlanDifference;
use mesh_adopt_runtime::plan::PlanKey;
use mesh_adopt_runtime::plan::SavedPlan;
use mesh_adopt_runtime::record::stream::{RecordFile, Sink};
use mesh_adopt_runtime::report::Export;
use mesh_adopt_runtime::report::Input;
use mesh_adopt_runtime::{Catalogue, Credentials, Foundation, Held, Mode, ModuleOutcome, PHASE_THREE, Run, RunOptions};
use mesh_adopt_runtime::{Error, Remedy};

use crate::support::{example_catalogue, host, mesh_adopt, plugin};

/// The events a sink was given, in order.
type Seen = Arc<Mutex<Vec<Event>>>;

fn phase_three() -> Vec<String> {
    PHASE_THREE.map(String::from).to_vec()
}

/// The options of a run on `node`, built from the test catalogue source.
fn options_on(node: &str) -> RunOptions {
    RunOptions {
        node: node.to_string(),
        catalog_source: Some(mesh_adopt_runtime::options::CatalogSource {
            repository: "https://git.mesh.test/c.git".into(),
            reference: Some("v2".into()),
        }),
        ..RunOptions::default()
    }
}

/// A run of the example catalogue in `dir`, on a fresh simulated mesh on `node`.
fn run_in<'a>(
    dir: &Path,
    catalogue: &'a Catalogue,
    foundation: &'a Foundation,
    node: &str,
) -> mesh_adopt_runtime::RunBuilder<'a> {
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), node)));
    Run::builder(host(), catalogue, foundation, mesh)
        .credentials(Arc::new(Credentials::open(&dir.join("genesis/credentials"))))
        .options(options_on(node))
}

#[tokio::test]
async fn an_embedder_gets_each_outcome_as_the_run_goes_and_writes_a_record_the_command_replays() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let seen: Arc<Mutex<Vec<Event>>> = Arc::default();
    let kept = seen.clone();
    let watcher: Arc<dyn Sink> = Arc::new(move |event: &Event| kept.lock().unwrap().push(event.clone()));
    let record_path = dir.path().join("embedded.jsonl");
    let record: Arc<dyn Sink> = Arc::new(RecordFile::create(&record_path).unwrap());
    let run = run_in(dir.path(), &catalogue, &foundation, "node-1").events(Arc::new(vec![watcher, record])).build();
    let report = run.run(&phase_three(), Mode::Adopt).await;
    run.end(report.exit_code());
    assert!(report.succeeded(), "{:?}", report.modules);

    let events = seen.lock().unwrap().clone();
    assert!(matches!(events.first(), Some(Event::Run(_))), "the header comes first: {:?}", events.first());
    assert!(matches!(events.last(), Some(Event::End(end)) if end.exit == 0), "{:?}", events.last());
    let at = |wanted: &dyn Fn(&Event) -> bool| events.iter().position(wanted).expect("the event is in the stream");
    // Each outcome is streamed when its module's turn ends: postgres's before nats adopts.
    let postgres_done = at(&|e| matches!(e, Event::Outcome(o) if o.module == "postgres"));
    let nats_adopts = at(&|e| matches!(e, Event::Call(c) if c.module == "nats" && c.phase == Export::Adopt));
    assert!(postgres_done < nats_adopts, "postgres's outcome at {postgres_done}, nats adopting at {nats_adopts}");
    let summary = at(&|e| matches!(e, Event::Summary(_)));
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Outcome(_))).count(), 3);
    assert!(events.iter().rposition(|e| matches!(e, Event::Outcome(_))).unwrap() < summary);

    // The record holds the same lines, and the command replays it.
    let lines = std::fs::read_to_string(&record_path).unwrap();
    assert_eq!(lines.lines().count(), events.len());
    let replayed = mesh_adopt().args(["replay", record_path.to_str().unwrap()]).catalogue(dir.path()).output();
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&replayed.stderr));
    assert!(stdout.contains("the plugin made every recorded call, in order"), "{stdout}");
}

#[tokio::test]
async fn a_malformed_foundation_a_pin_mismatch_and_a_stale_plan_are_told_apart_by_type() {
    let dir = example_catalogue(&plugin("adopt_postgres"));

    // A malformed foundation, from a file and from memory.
    let bundle = dir.path().join("broken.json");
    std::fs::write(&bundle, br#"{"resources": [{"id": "a"}, "#).unwrap();
    let malformed = Foundation::load(&bundle).expect_err("malformed");
    assert!(
        matches!(&malformed, FoundationError::Malformed { path: Some(p), fault: BundleFault::Json(_), .. } if *p == bundle)
    );
    assert!(matches!(Error::from(malformed), Error::Foundation(_)));
    assert!(matches!(Foundation::from_memory(b"[]", "in memory"), Err(FoundationError::Malformed { path: None, .. })));
    // A field to blame is named by its JSON Pointer, and the remedy is to mend it there.
    std::fs::write(&bundle, br#"{"resources": [{"id": "a", "kind": "container", "name": "s"}]}"#).unwrap();
    let missing = Foundation::load(&bundle).expect_err("no image");
    assert_eq!(missing.remedy(), Remedy::EditFile { path: bundle.clone(), at: Some("/resources/0/image".into()) });
    // A plan file that is not one.
    assert!(matches!(SavedPlan::parse(b"{}"), Err(mesh_adopt_runtime::plan::PlanFileError::Fault(_))));
    // An option no plugin could be handed.
    assert!(matches!(
        mesh_adopt_runtime::options::parse_catalog_source("@v1"),
        Err(mesh_adopt_runtime::error::OptionError {
            option: mesh_adopt_runtime::error::RunOptionName::CatalogSource,
            ..
        })
    ));

    // A pin mismatch, from the host and as a module's outcome.
    let wasm = dir.path().join("modules/nats/adopt.wasm");
    let wrong = "0".repeat(64);
    match host().load_pinned(&wasm, Some(&wrong)) {
        Err(PluginError::PinMismatch(mismatch)) => assert_eq!(mismatch.pin, wrong),
        other => panic!("expected a pin mismatch, got {:?}", other.err()),
    }
    let manifest_path = dir.path().join("modules/nats/manifest.json");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let mut pinned: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    pinned["adopt"]["sha256"] = serde_json::Value::String(wrong.clone());
    std::fs::write(&manifest_path, serde_json::to_vec(&pinned).unwrap()).unwrap();
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let report = run_in(dir.path(), &catalogue, &foundation, "node-1").build().run(&phase_three(), Mode::Check).await;
    match report.outcome("nats") {
        Some(ModuleOutcome::Unusable(unusable)) => {
            assert_eq!(unusable.input, Input::Plugin);
            assert!(
                matches!(&unusable.cause, Some(Error::Plugin(PluginError::PinMismatch(m))) if m.pin == wrong),
                "{unusable:?}"
            );
            // What mends it is data: the module's manifest pinned to the plugin it ships.
            let remedy = unusable.cause.as_ref().unwrap().remedy();
            assert!(
                matches!(&remedy, mesh_adopt_runtime::Remedy::PinPlugin { module, manifest, .. }
                    if module == "nats" && *manifest == manifest_path),
                "{remedy:?}"
            );
        }
        other => panic!("expected nats unusable, got {other:?}"),
    }
    // Nor does the runtime name the command line's commands: that is the command's to add.
    assert!(!report.outcome("nats").unwrap().shown().contains("mesh-adopt"));
    std::fs::write(&manifest_path, manifest).unwrap();

    // A stale plan: checked for node-1, applied to a run on node-2.
    let key = PlanKey::ephemeral();
    let checked = run_in(dir.path(), &catalogue, &foundation, "node-1")
        .plan_key(key.clone())
        .build()
        .run(&phase_three(), Mode::Check)
        .await;
    assert!(checked.succeeded(), "{:?}", checked.modules);
    let applied = run_in(dir.path(), &catalogue, &foundation, "node-2")
        .plan_key(key)
        .saved_plan(checked.made_from)
        .build()
        .run(&phase_three(), Mode::Adopt)
        .await;
    assert!(
        matches!(&applied.held, Some(Held::StalePlan { difference: PlanDifference::Node { planned, now } })
            if planned == "node-1" && now == "node-2"),
        "{:?}",
        applied.held
    );
    // A plan that could be applied holds nothing back.
    assert_eq!(checked.held, None);
}

/// An installer's own mesh, on the simulator, whose container engine is down: a layer that
/// changes `inspect` alone, and has preflight see the mesh through it; everything else is the
/// simulator's own, forwarded by the layer without a line of it here.
struct EngineDown;

#[async_trait::async_trait]
impl Layer for EngineDown {
    async fn inspect(
        &self,
        _inner: &dyn mesh_adopt_runtime::mesh::Mesh,
        _node: &str,
        _container: &str,
    ) -> Result<Option<mesh_adopt_runtime::mesh::ContainerState>, mesh_adopt_runtime::mesh::MeshError> {
        Err(mesh_adopt_runtime::mesh::MeshError::Unavailable("cannot connect to the container engine".into()))
    }

    async fn view(
        &self,
        outer: &dyn mesh_adopt_runtime::mesh::Mesh,
        _inner: &dyn mesh_adopt_runtime::mesh::Mesh,
        node: &str,
        containers: &[String],
    ) -> mesh_adopt_runtime::effect::MeshView {
        mesh_adopt_runtime::mesh::inspected_view(outer, node, containers).await
    }
}

/// A mesh that errs when asked what runs is never read as an empty one, whoever implements
/// it: the run stops before any push, and says why.
#[tokio::test]
async fn an_installers_own_mesh_whose_engine_errs_stops_the_run_before_any_push() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let simulated = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
    let mesh = Arc::new(Layered::new(simulated.clone(), EngineDown));
    // What the layer leaves alone is the simulator's own.
    use mesh_adopt_runtime::mesh::Mesh as _;
    assert_eq!((mesh.summary(), mesh.seed(), mesh.now()), (simulated.summary(), simulated.seed(), simulated.now()));
    let report = Run::builder(host(), &catalogue, &foundation, mesh.clone())
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .options(options_on("node-1"))
        .build()
        .run(&phase_three(), Mode::Adopt)
        .await;
    assert!(
        matches!(&report.held, Some(Held::MeshUnseen { why }) if why.contains("container engine")),
        "{:?}",
        report.held
    );
    assert!(report.modules.iter().all(|(_, o)| matches!(o, ModuleOutcome::NotRun { .. })), "{:?}", report.modules);
    assert!(simulated.commands().is_empty(), "nothing reached the control plane: {:?}", simulated.commands());
}

/// What a run streams holds no credential's value, wherever the value reached (here an
/// option naming the node), and each run of a shared transcript streams to its own sink; a
/// module asked for twice and a credential that cannot be read are refused by the runtime
/// itself, not only by the command line.
#[tokio::test]
async fn the_stream_keeps_secrets_out_and_to_its_own_run_and_bad_runs_are_refused() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let value = std::fs::read_to_string(dir.path().join("genesis/credentials/store-superuser")).unwrap();
    let value = value.trim().to_string();
    let lines = |seen: &Seen| -> Vec<String> {
        seen.lock().unwrap().iter().map(|e| serde_json::to_string(e).unwrap()).collect()
    };
    let transcript = Arc::new(mesh_adopt_runtime::record::transcript::Transcript::default());
    let first: Seen = Arc::default();
    let second: Seen = Arc::default();
    for (seen, node) in [(&first, value.clone()), (&second, "node-1".to_string())] {
        let kept = seen.clone();
        let run = run_in(dir.path(), &catalogue, &foundation, "node-1")
            .options(options_on(&node))
            .record(transcript.clone())
            .events(Arc::new(move |event: &Event| kept.lock().unwrap().push(event.clone())))
            .build();
        let report = run.run(&phase_three(), Mode::Check).await;
        run.end(report.exit_code());
    }
    let shown: Vec<String> = lines(&first).into_iter().filter(|l| l.contains(&value)).collect();
    assert!(shown.is_empty(), "a credential's value was streamed: {shown:?}");
    let second = lines(&second);
    assert!(second.iter().any(|l| l.contains(r#""event":"call""#)), "the second run's calls reach its own sink");
    assert!(
        !lines(&first).iter().skip_while(|l| !l.contains(r#""event":"end""#)).skip(1).any(|_| true),
        "nothing after the first run's end"
    );

    let twice = run_in(dir.path(), &catalogue, &foundation, "node-1")
        .build()
        .run(&["postgres".to_string(), "postgres".to_string()], Mode::Check)
        .await;
    assert_eq!(twice.exit_code(), 2);
    assert!(
        matches!(&twice.modules[1].1, ModuleOutcome::Unusable(u) if u.message.contains("asked for twice")),
        "{:?}",
        twice.modules
    );

    let fifo = dir.path().join("genesis/credentials/extra");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let unreadable =
        run_in(dir.path(), &catalogue, &foundation, "node-1").build().run(&phase_three(), Mode::Check).await;
    assert_eq!(unreadable.exit_code(), 2);
    assert!(
        unreadable
            .modules
            .iter()
            .all(|(_, o)| matches!(o, ModuleOutcome::Unusable(u) if u.input == Input::Credentials)),
        "{:?}",
        unreadable.modules
    );
}

/// A stream has one last line, and a header that says what the run did, however the
/// embedder calls the runtime.
#[tokio::test]
async fn a_stream_ends_once_and_its_header_says_what_the_run_did() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let seen: Seen = Arc::default();
    let kept = seen.clone();
    let run = run_in(dir.path(), &catalogue, &foundation, "node-1")
        .events(Arc::new(move |event: &Event| kept.lock().unwrap().push(event.clone())))
        .command(mesh_adopt_runtime::events::Command::Check)
        .build();
    let report = run.run(&["postgres".to_string()], Mode::Adopt).await;
    run.interrupted("cancelled");
    run.end(report.exit_code());
    run.interrupted("cancelled");
    let events = seen.lock().unwrap().clone();
    assert!(matches!(&events[0], Event::Run(header) if header.command == mesh_adopt_runtime::events::Command::Run));
    let last = events.iter().filter(|e| matches!(e, Event::End(_) | Event::Interrupted(_))).count();
    assert_eq!(last, 1, "one last line: {:?}", events.last());
    assert!(matches!(events.last(), Some(Event::Interrupted(_))));
}

/// An installer spawns runs onto a multi-thread executor: a run made of shared parts owns
/// what it needs (no borrow outlives the caller's frame), a hundred of them on their own
/// meshes all adopt, and once they end no run holds on to the host, the catalogue, the
/// foundation or the credentials.
#[test]
fn a_hundred_spawned_runs_adopt_and_leave_nothing_held() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let host = Arc::new(mesh_adopt_runtime::PluginHost::new(mesh_adopt_runtime::Limits::default()).unwrap());
    let catalogue = Arc::new(Catalogue::at(dir.path()));
    let foundation = Arc::new(Foundation::load(&dir.path().join("foundation.json")).unwrap());
    let credentials = Arc::new(Credentials::open(&dir.path().join("genesis/credentials")));
    let executor = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let reports = executor.block_on(async {
        let mut runs = tokio::task::JoinSet::new();
        let mut first = None;
        for index in 0..100 {
            let node = format!("node-{index}");
            let mesh = Arc::new(SimulatedMesh::new(SimSetup::new((*foundation).clone(), &node)));
            first.get_or_insert_with(|| mesh.clone());
            let run: Run<'static> = Run::builder(host.clone(), catalogue.clone(), foundation.clone(), mesh)
                .credentials(credentials.clone())
                .options(options_on(&node))
                .build();
            runs.spawn(async move { run.run(&phase_three(), Mode::Adopt).await });
        }
        (runs.join_all().await, first.expect("a hundred meshes"))
    });
    let (reports, first) = reports;
    drop(executor);
    // What the simulator's node runs after the phase: the store kept, the bus the module's.
    assert_eq!(first.container_image("mesh-store").as_deref(), Some("postgres:16.4-bookworm"));
    assert_eq!(first.container_image("mesh-bus").as_deref(), Some("registry.mesh.local/nats-snapshot:2.10.22-mesh.3"));
    assert_eq!(first.container_image("mesh-nothing"), None);
    drop(first);
    assert_eq!(reports.len(), 100);
    for report in &reports {
        assert!(report.succeeded(), "{:?}", report.modules);
    }
    assert_eq!(Arc::strong_count(&host), 1, "a run still holds the plugin host");
    assert_eq!(Arc::strong_count(&catalogue), 1, "a run still holds the catalogue");
    assert_eq!(Arc::strong_count(&foundation), 1, "a run still holds the foundation");
    assert_eq!(Arc::strong_count(&credentials), 1, "a run still holds the credentials");
}

/// Whatever went wrong with a plugin file is a variant an installer matches, not a sentence
/// it reads: not a component at all, a component of another world, or no file there, the
/// same error whichever way the plugin was asked for.
#[test]
fn a_plugin_that_is_no_component_and_one_of_another_world_are_told_apart_by_variant() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.wasm");
    std::fs::write(&junk, b"#!/bin/sh\necho not a plugin\n").unwrap();
    let core_module = dir.path().join("core.wasm");
    std::fs::write(&core_module, b"\0asm\x01\x00\x00\x00").unwrap();
    for path in [&junk, &core_module] {
        let error = host().load(path).err().expect("not a component");
        assert!(matches!(error, PluginError::NotAComponent { .. }), "{}: {error:?}", path.display());
    }
    let error = host().load(&plugin("future_world")).err().expect("another world");
    assert!(matches!(error, PluginError::OtherWorld { .. }), "{error:?}");
    assert!(error.to_string().contains("future_world.wasm"), "{error}");
    let missing = dir.path().join("never-built.wasm");
    let error = host().load(&missing).err().expect("no file");
    assert!(matches!(&error, PluginError::NoPlugin(NoPlugin { module: None, path }) if *path == missing), "{error:?}");
    // Through the catalogue, the same variant, with the module named.
    std::fs::create_dir_all(dir.path().join("modules/postgres")).unwrap();
    std::fs::write(
        dir.path().join("modules/postgres/manifest.json"),
        r#"{"name":"postgres","version":"1","resources":[{"id":"s","type":"container","name":"s","image":"i:1"}],"adopt":{"plugin":"adopt.wasm"}}"#,
    )
    .unwrap();
    let error = Catalogue::at(dir.path()).module("postgres").expect_err("no plugin");
    assert!(
        matches!(&error, CatalogueError::NoPlugin(NoPlugin { module: Some(m), .. }) if m == "postgres"),
        "{error:?}"
    );
    assert_eq!(error.remedy(), Remedy::BuildPlugin { module: "postgres".into() });
    // At the run's boundary it is the plugin's error, as it is however the plugin was asked for.
    assert!(matches!(Error::from(error), Error::Plugin(PluginError::NoPlugin(_))));
}

/// An installer that holds a plugin's bytes (from its own store, not a file) loads them as
/// they are, digested as a file of them would be, on the code its host was told to run.
#[test]
fn a_host_loads_plugin_bytes_it_holds_on_the_code_it_was_told_to_run() {
    use mesh_adopt_runtime::plugin::CodeKind;
    use mesh_adopt_runtime::plugin::CodePolicy;
    use mesh_adopt_runtime::{Limits, PluginHost};
    let bytes = std::fs::read(plugin("adopt_postgres")).unwrap();
    let host = PluginHost::new(Limits::default()).unwrap().with_code(CodePolicy::Only(CodeKind::Baseline));
    assert_eq!(host.code_policy(), CodePolicy::Only(CodeKind::Baseline));
    let loaded = host.load_bytes(Path::new("held-in-memory.wasm"), &bytes).unwrap();
    assert_eq!(loaded.digest, mesh_adopt_runtime::plugin::Sha256::of(&bytes));
    assert_eq!(loaded.code.kind, CodeKind::Baseline);
    assert_eq!(loaded.path, Path::new("held-in-memory.wasm"));
    let error = host.load_bytes(Path::new("junk.wasm"), b"not a plugin").err().expect("junk");
    assert!(matches!(error, PluginError::NotAComponent { .. }), "{error:?}");
}

/// A layer that only counts the commands told keeps everything else of the mesh inside: the
/// run adopts, the simulator's own view and audit still reach the host (so the rules are
/// verified, not merely predicted), and the layer saw every command.
#[tokio::test]
async fn a_layer_that_counts_tells_leaves_the_rest_of_the_mesh_as_it_is() {
    #[derive(Default)]
    struct CountsTells(std::sync::atomic::AtomicUsize);

    #[async_trait::async_trait]
    impl Layer for CountsTells {
        async fn tell(
            &self,
            inner: &dyn mesh_adopt_runtime::mesh::Mesh,
            command: &mesh_adopt_runtime::mesh::Command,
            timeout: std::time::Duration,
        ) -> Result<String, mesh_adopt_runtime::mesh::MeshError> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            inner.tell(command, timeout).await
        }
    }

    let dir = example_catalogue(&plugin("adopt_postgres"));
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let simulated = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
    let mesh = Arc::new(Layered::new(simulated.clone(), CountsTells::default()));
    let report = Run::builder(host(), &catalogue, &foundation, mesh.clone())
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .options(options_on("node-1"))
        .build()
        .run(&phase_three(), Mode::Adopt)
        .await;
    assert!(report.succeeded(), "{:?}", report.modules);
    assert_eq!(report.rules, mesh_adopt_runtime::report::RulesChecked::Verified);
    let told = simulated.commands().len();
    assert!(told > 0);
    assert_eq!(mesh.layer().0.load(std::sync::atomic::Ordering::SeqCst), told);
}

/// A run has one record: run again, the same `Run` changes nothing, streams nothing more and
/// says why, so a record never holds two runs.
#[tokio::test]
async fn a_run_runs_once_and_its_record_holds_that_run_alone() {
    let dir = example_catalogue(&plugin("adopt_postgres"));
    let catalogue = Catalogue::at(dir.path());
    let foundation = Foundation::load(&dir.path().join("foundation.json")).unwrap();
    let seen: Seen = Arc::default();
    let kept = seen.clone();
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), "node-1")));
    let run = Run::builder(host(), &catalogue, &foundation, mesh.clone())
        .credentials(Arc::new(Credentials::open(&dir.path().join("genesis/credentials"))))
        .options(options_on("node-1"))
        .events(Arc::new(move |event: &Event| kept.lock().unwrap().push(event.clone())))
        .build();
    assert!(run.run(&phase_three(), Mode::Adopt).await.succeeded());
    let (streamed, told) = (seen.lock().unwrap().len(), mesh.commands().len());
    let again = run.run(&phase_three(), Mode::Adopt).await;
    assert_eq!(again.held, Some(Held::AlreadyRan));
    assert!(again.modules.iter().all(|(_, o)| matches!(o, ModuleOutcome::NotRun { .. })), "{:?}", again.modules);
    assert_eq!(again.exit_code(), 1);
    assert_eq!(seen.lock().unwrap().len(), streamed, "nothing more was streamed");
    assert_eq!(mesh.commands().len(), told, "nothing more reached the mesh");
    let headers = seen.lock().unwrap().iter().filter(|e| matches!(e, Event::Run(_))).count();
    assert_eq!(headers, 1);
}

/// Runs spawned past the host's pool of instances wait for one to end instead of failing:
/// with room for two plugins at once and every `tell` slowed so instances overlap, twenty
/// runs all adopt.
#[test]
fn runs_past_the_pool_of_instances_wait_for_one_instead_of_failing() {
    struct SlowTells;

    #[async_trait::async_trait]
    impl Layer for SlowTells {
        async fn tell(
            &self,
            inner: &dyn mesh_adopt_runtime::mesh::Mesh,
            command: &mesh_adopt_runtime::mesh::Command,
            timeout: std::time::Duration,
        ) -> Result<String, mesh_adopt_runtime::mesh::MeshError> {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            inner.tell(command, timeout).await
        }
    }

    let dir = example_catalogue(&plugin("adopt_postgres"));
    let limits = mesh_adopt_runtime::Limits { concurrent_instances: 2, ..mesh_adopt_runtime::Limits::default() };
    let host = Arc::new(mesh_adopt_runtime::PluginHost::new(limits).unwrap());
    let catalogue = Arc::new(Catalogue::at(dir.path()));
    let foundation = Arc::new(Foundation::load(&dir.path().join("foundation.json")).unwrap());
    let credentials = Arc::new(Credentials::open(&dir.path().join("genesis/credentials")));
    let executor = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let reports = executor.block_on(async {
        let mut runs = tokio::task::JoinSet::new();
        for index in 0..20 {
            let node = format!("node-{index}");
            let simulated = Arc::new(SimulatedMesh::new(SimSetup::new((*foundation).clone(), &node)));
            let mesh = Arc::new(Layered::new(simulated, SlowTells));
            let run: Run<'static> = Run::builder(host.clone(), catalogue.clone(), foundation.clone(), mesh)
                .credentials(credentials.clone())
                .options(options_on(&node))
                .build();
            runs.spawn(async move { run.run(&phase_three(), Mode::Adopt).await });
        }
        runs.join_all().await
    });
    for report in &reports {
        assert!(report.succeeded(), "{:?}", report.modules);
    }
    assert_eq!(reports.len(), 20);
}
