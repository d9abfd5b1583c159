//! An installer embedding the runtime on the live stand-ins, without the command line's
//! checks in front of it: the run itself refuses options the command line would, before any
//! command reaches the control plane, and the node it reads and the node it names are the
//! run's own.

use std::sync::{Arc, Mutex};

use mesh_adopt_live::{LiveConfig, LiveMesh};
use mesh_adopt_runtime::error::RunOptionName;
use mesh_adopt_runtime::events::Event;
use mesh_adopt_runtime::options::parse_catalog_source;
use mesh_adopt_runtime::record::transcript::Transcript;
use mesh_adopt_runtime::{
    Catalogue, Credentials, Foundation, Held, Mode, ModuleOutcome, PHASE_THREE, Run, RunOptions, RunReport,
};

use crate::live::{StandIn, adopted_stand_ins_with_state, live_catalogue};
use crate::support::host;

/// A run of `modules` in `mode` on `node`, made as an installer makes it (no `validate`), on
/// the live mesh `config` reaches, with this machine's locks in `locks`: its report, its
/// record and the events it streamed, as JSON.
async fn embedded_run(
    config: &std::path::Path,
    catalogue: &std::path::Path,
    locks: &std::path::Path,
    node: &str,
    mode: Mode,
    modules: &[&str],
) -> (RunReport, Arc<Transcript>, Vec<serde_json::Value>) {
    let mesh = Arc::new(LiveMesh::new(LiveConfig::load(config).unwrap()).with_locks_in(locks));
    let foundation = Foundation::load(&catalogue.join("foundation.json")).unwrap();
    let transcript = Arc::new(Transcript::default());
    let events: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let kept = events.clone();
    let options = RunOptions {
        node: node.to_string(),
        catalog_source: Some(parse_catalog_source("https://git.mesh.test/c.git").unwrap()),
        ..RunOptions::default()
    };
    let modules: Vec<String> = modules.iter().map(|m| m.to_string()).collect();
    let report = Run::builder(host(), Catalogue::at(catalogue), &foundation, mesh)
        .credentials(Arc::new(Credentials::open(&catalogue.join("genesis/credentials"))))
        .record(transcript.clone())
        .events(Arc::new(move |event: &Event| kept.lock().unwrap().push(serde_json::to_value(event).unwrap())))
        .options(options)
        .build()
        .run(&modules, mode)
        .await;
    let events = events.lock().unwrap().clone();
    (report, transcript, events)
}

/// `validate` refuses the node `Node_1` (no RFC 1123 name); an installer that never called it
/// gets the same refusal from the run, exit 2, and nothing reaches the control plane: no call
/// in its record, no command in the stand-in's log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_a_node_validate_refuses_is_refused_before_any_command() {
    let standin = StandIn::new();
    let catalogue = live_catalogue();
    let locks = tempfile::tempdir().unwrap();
    let config = standin.config_with_state(None);
    let before = standin.read("argv.log");
    let (report, transcript, events) =
        embedded_run(&config, catalogue.path(), locks.path(), "Node_1", Mode::Adopt, &PHASE_THREE).await;
    let Some(Held::Options { error }) = &report.held else { panic!("not held by its options: {:?}", report.held) };
    assert_eq!(error.option, RunOptionName::Node);
    assert!(error.to_string().contains("a node name is an RFC 1123 subdomain"), "{error}");
    assert_eq!(report.exit_code(), 2);
    for (module, outcome) in &report.modules {
        let ModuleOutcome::NotRun { because, .. } = outcome else { panic!("{module}: {outcome:?}") };
        assert!(because.starts_with("the node `Node_1`") || because.starts_with("the node is"), "{because}");
    }
    assert!(events.iter().all(|e| e["event"] != "call" && e["event"] != "started"), "{events:?}");
    assert!(transcript.effects("postgres").is_empty());
    assert_eq!(standin.read("argv.log"), before, "a command reached the control plane");
    assert!(std::fs::read_dir(locks.path()).unwrap().next().is_none(), "a lock was taken");
}

/// node-1 runs the vault with its key, node-2 has nothing. An installer's check on node-2
/// asks the control plane and the engine about node-2 alone, and predicts the vault created
/// there; on node-1 the same check predicts it kept: what a check predicts from and the node
/// it names are the run's, whichever node the configuration's `node` is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_predicts_each_node_from_that_nodes_own_state() {
    let (_nats, standin, config, catalogue) = adopted_stand_ins_with_state();
    let locks = tempfile::tempdir().unwrap();
    let vault = |events: &[serde_json::Value]| -> (String, serde_json::Value) {
        let effect = events.iter().find(|e| e["event"] == "effect").expect("an effect event");
        let containers = effect["pushes"][0]["containers"].as_array().unwrap();
        let container = containers.iter().find(|c| c["container"] == "mesh-vault").expect("the vault");
        (container["change"].as_str().unwrap().to_string(), effect["pushes"][0]["secrets"][0]["accepted"].clone())
    };
    let told = standin.read("argv.log").len();
    let (report, _, events) =
        embedded_run(&config, catalogue.path(), locks.path(), "node-2", Mode::Check, &["mesh-vault"]).await;
    assert!(report.succeeded(), "{:?}", report.modules);
    assert_eq!(report.made_from.node, "node-2");
    assert_eq!(vault(&events), ("created".to_string(), serde_json::json!(false)));
    let asked = standin.read("argv.log")[told..].to_string();
    assert!(asked.contains("state node-2\n") && !asked.contains("node-1"), "{asked}");

    let (report, _, events) =
        embedded_run(&config, catalogue.path(), locks.path(), "node-1", Mode::Check, &["mesh-vault"]).await;
    assert!(report.succeeded(), "{:?}", report.modules);
    assert_eq!(vault(&events).0, "kept");
}
