//! The runtime's surface as an installer meets it: the run's event stream, a record written
//! with the runtime alone that the command replays, typed errors told apart without reading
//! their text, and a public API that exposes neither the contract's generated types nor
//! wasmtime's.

use std::path::Path;
use std::sync::{Arc, Mutex};

use mesh_adopt_runtime::Error;
use mesh_adopt_runtime::Phase;
use mesh_adopt_runtime::events::Event;
use mesh_adopt_runtime::mesh::simulated::{SimSetup, SimulatedMesh};
use mesh_adopt_runtime::stream::{RecordFile, Sink};
use mesh_adopt_runtime::{
    Catalogue, Credentials, Foundation, Held, Input, Mode, ModuleOutcome, PHASE_THREE, PlanKey, Run, RunOptions,
    SavedPlan,
};

use crate::support::{example_catalogue, host, mesh_adopt, plugin};

fn phase_three() -> Vec<String> {
    PHASE_THREE.map(String::from).to_vec()
}

/// A run of the example catalogue in `dir`, on a fresh simulated mesh on `node`.
fn run_in<'a>(
    dir: &Path,
    catalogue: &'a Catalogue,
    foundation: &'a Foundation,
    node: &str,
) -> mesh_adopt_runtime::RunBuilder<'a> {
    let mesh = Arc::new(SimulatedMesh::new(SimSetup::new(foundation.clone(), node)));
    let options = RunOptions {
        node: node.to_string(),
        catalog_source: Some(mesh_adopt_runtime::CatalogSource {
            repository: "https://git.mesh.test/c.git".into(),
            reference: Some("v2".into()),
        }),
        ..RunOptions::default()
    };
    Run::builder(host(), catalogue, foundation, mesh)
        .credentials(Arc::new(Credentials::open(&dir.join("genesis/credentials"))))
        .options(options)
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
    let nats_adopts = at(&|e| matches!(e, Event::Call(c) if c.module == "nats" && c.phase == Phase::Adopt));
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
    assert!(matches!(Foundation::load(&bundle), Err(Error::Foundation(_))));
    assert!(matches!(Foundation::from_memory(b"[]", "in memory"), Err(Error::Foundation(_))));
    // A plan file that is not one.
    assert!(matches!(SavedPlan::parse(b"{}"), Err(Error::PlanFile(_))));
    // An option no plugin could be handed.
    assert!(matches!(
        mesh_adopt_runtime::parse_catalog_source("@v1"),
        Err(Error::RunOption { option: mesh_adopt_runtime::RunOptionName::CatalogSource, .. })
    ));

    // A pin mismatch, from the host and as a module's outcome.
    let wasm = dir.path().join("modules/nats/adopt.wasm");
    let wrong = "0".repeat(64);
    match host().load_pinned(&wasm, Some(&wrong)) {
        Err(Error::PinMismatch(mismatch)) => assert_eq!(mismatch.pin, wrong),
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
            assert!(matches!(&unusable.cause, Some(Error::PinMismatch(m)) if m.pin == wrong), "{unusable:?}");
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
        matches!(&applied.held, Some(Held::StalePlan { difference }) if difference.contains("node")),
        "{:?}",
        applied.held
    );
    // A plan that could be applied holds nothing back.
    assert_eq!(checked.held, None);
}

/// The runtime's public surface names no wasmtime type and no type generated from the WIT:
/// a contract version or a wasmtime upgrade must not break an embedder. The generated
/// types live in a private module, and the crate denies any private or unnameable type in a
/// public signature (`private_interfaces`, `unnameable_types`), so the compiler holds that
/// half; this reads every public item of the files the public surface comes from and holds
/// the other, save the benchmarks' hooks (`#[doc(hidden)]`).
#[test]
fn the_public_api_names_no_wasmtime_type_and_no_generated_one() {
    let src = crate::support::root().join("host/runtime/src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(private_interfaces, private_bounds, unnameable_types)]"), "the lints guard it");
    assert!(lib.contains("\nmod contract;\n"), "the generated bindings stay private");
    // Every file but the generated bindings' and the sandbox's plumbing, which no public
    // item comes from (the crate's lints hold that).
    let private = ["contract/", "sandbox/mod.rs", "sandbox/imports.rs", "sandbox/state.rs", "sandbox/deadline.rs"];
    let mut public_files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if relative.ends_with(".rs") && !private.iter().any(|p| relative.starts_with(p)) {
                public_files.push(relative);
            }
        }
    }
    assert!(public_files.len() > 20, "{public_files:?}");
    let foreign = ["wasmtime", "Engine", "Component", "Linker", "Store<", "v0_1", "bindgen", "HostError"];
    let mut leaks = Vec::new();
    for file in &public_files {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let item = line.trim_start();
            if !item.starts_with("pub ") || item.starts_with("pub(") {
                continue;
            }
            let attributes = lines[..i].iter().rev().take_while(|l| l.trim_start().starts_with(['#', '/']));
            if attributes.clone().any(|l| l.contains("#[doc(hidden)]")) {
                continue;
            }
            // The item's signature: up to its body or its end.
            let signature: String = lines[i..]
                .iter()
                .scan(false, |done, l| {
                    (!*done).then(|| {
                        *done = l.contains('{') || l.trim_end().ends_with(';') || l.trim_end().ends_with(',');
                        *l
                    })
                })
                .collect::<Vec<_>>()
                .join(" ");
            if let Some(name) = foreign.iter().find(|name| signature.contains(*name)) {
                leaks.push(format!("{file}:{}: `{name}` in `{}`", i + 1, signature.trim()));
            }
        }
    }
    assert!(leaks.is_empty(), "public items that name wasmtime's or the contract's types:\n{}", leaks.join("\n"));
}
