//! The operator's promise: nothing moves until every module has checked, `adopt` does only
//! what its plan says, and the control plane registers only the catalogue's manifest.

use mesh_adopt_runtime::{Mode, ModuleOutcome};
use serde_json::json;

use crate::support::{TestMesh, assert_mentions, catalogue, mesh_adopt, text};

/// Asserts the run changed nothing on the mesh: no command told, nothing carried.
fn nothing_moved(ran: &crate::support::Ran) {
    assert!(ran.commands().is_empty(), "commands reached the mesh: {:?}", ran.commands());
    assert!(ran.mesh.carried().is_empty(), "files were carried: {:?}", ran.mesh.carried());
    assert!(ran.report.changes.is_empty(), "containers changed: {:?}", ran.report.changes);
}

#[tokio::test]
async fn a_bus_layout_difference_stops_the_run_before_the_store_is_adopted() {
    let mut mesh = TestMesh::new();
    mesh.manifest("nats")["resources"][0]["name"] = json!("another-bus");
    let ran = mesh.run().await;
    nothing_moved(&ran);
    assert!(matches!(ran.report.outcome("nats"), Some(ModuleOutcome::Refused { .. })));
    assert_mentions(ran.refusal("nats"), &["another-bus"]);
    // The store checked fine, and was left alone: preflight found a problem elsewhere.
    let Some(ModuleOutcome::NotRun { because, code, remedy }) = ran.report.outcome("postgres") else {
        panic!("postgres was {:?}", ran.report.outcome("postgres"))
    };
    assert_mentions(because, &["preflight found problems in `nats`", "nothing was adopted"]);
    // The run's ending is the refusal's; the store left alone says why as a code, and what mends it.
    assert_eq!(*code, mesh_adopt_runtime::report::Ending::EarlierModuleFailed);
    assert_eq!(*remedy, Some(mesh_adopt_runtime::Remedy::MendModules { modules: vec!["nats".into()] }));
    assert_eq!(ran.report.ending(), Some(mesh_adopt_runtime::report::Ending::Refused));
    assert_eq!(ran.report.exit_code(), 1);
}

#[tokio::test]
async fn an_empty_plugin_stops_the_run_before_any_effect_and_is_a_bad_input() {
    let empty = tempfile::NamedTempFile::new().unwrap();
    let mut mesh = TestMesh::new();
    mesh.plugins.retain(|(m, _)| m != "nats");
    mesh.plugins.push(("nats".into(), empty.path().to_path_buf()));
    let ran = mesh.run().await;
    nothing_moved(&ran);
    assert_mentions(ran.failure("nats"), &["is not a WebAssembly component"]);
    assert_eq!(ran.unusable_input("nats"), mesh_adopt_runtime::report::Input::Plugin);
    assert_eq!(ran.report.exit_code(), 2);
}

#[tokio::test]
async fn every_problem_is_listed_not_only_the_first() {
    let mut mesh = TestMesh::new();
    mesh.manifest("postgres")["resources"][0]["image"] = json!("postgres:17");
    mesh.manifest("nats")["resources"][0]["name"] = json!("another-bus");
    let ran = mesh.run().await;
    nothing_moved(&ran);
    assert_mentions(ran.refusal("postgres"), &["postgres:17"]);
    assert_mentions(ran.refusal("nats"), &["another-bus"]);
}

#[tokio::test]
async fn a_tell_off_the_plan_is_denied_naming_the_command_expected() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "tells_off_plan")
        .handover_undeclared()
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    assert_mentions(
        ran.refusal("postgres"),
        &["`tell push node-1` is not the plan's next command", "`tell module add /postgres-module.json` next"],
    );
    nothing_moved(&ran);
}

#[tokio::test]
async fn an_adopt_that_returns_before_its_plan_is_told_is_incomplete() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "skips_its_plan")
        .handover_undeclared()
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    let Some(ModuleOutcome::Incomplete { left, .. }) = ran.report.outcome("postgres") else {
        panic!("postgres was {:?}", ran.report.outcome("postgres"))
    };
    assert_eq!(left.len(), 6, "{left:?}");
    assert_eq!(left[0].to_string(), "module add /postgres-module.json");
    assert!(!ran.report.succeeded());
    assert_eq!(ran.report.exit_code(), 1);
}

#[tokio::test]
async fn a_foundation_with_two_brokers_cannot_be_read() {
    let mut mesh = TestMesh::new();
    let mut second = mesh.foundation_resource("broker").clone();
    second["name"] = json!("second-bus");
    mesh.foundation["resources"].as_array_mut().unwrap().push(second);
    let bytes = serde_json::to_vec(&mesh.foundation).unwrap();
    let err = mesh_adopt_runtime::Foundation::parse(&bytes).unwrap_err();
    assert!(err.to_string().contains("both have the id `broker`"), "{err}");
}

#[tokio::test]
async fn a_plan_with_a_command_beyond_the_grants_is_refused_in_preflight() {
    // This plugin plans `secret accept … superuser` whatever its manifest says (the real
    // postgres plugin refuses in `check` when the secret is not declared); a manifest that
    // stops declaring the secret makes that plan one the plugin could never carry out.
    let mut mesh = TestMesh::new().with_plugin("postgres", "accepts_without_carrying");
    mesh.manifest("postgres")["secrets"] = json!([]);
    let ran = mesh.run().await;
    nothing_moved(&ran);
    assert_mentions(
        ran.failure("postgres"),
        &["plans a command it could never tell", "declares no secret `superuser`"],
    );
}

#[tokio::test]
async fn a_wall_deadline_too_short_for_the_build_and_the_wait_is_refused_before_any_effect() {
    static HOST: std::sync::OnceLock<mesh_adopt_runtime::PluginHost> = std::sync::OnceLock::new();
    let host = HOST.get_or_init(|| {
        let limits = mesh_adopt_runtime::Limits {
            wall_time: std::time::Duration::from_secs(60),
            ..mesh_adopt_runtime::Limits::default()
        };
        mesh_adopt_runtime::PluginHost::new(limits).unwrap()
    });
    let mut mesh = TestMesh::new();
    mesh.host = Some(host);
    let ran = mesh.run().await;
    nothing_moved(&ran);
    assert_mentions(ran.failure("postgres"), &["may take 1500s", "limits.wall_time", "give more than 1620s"]);
    assert_eq!(ran.unusable_input("postgres"), mesh_adopt_runtime::report::Input::Plan);
    assert_eq!(ran.report.exit_code(), 2);
}

#[tokio::test]
async fn a_secret_value_in_a_host_error_is_redacted_and_fails_the_run() {
    let mut mesh = TestMesh::new();
    mesh.manifest("mesh-vault")["name"] = json!(crate::support::SUPERUSER);
    let ran = mesh.run().await;
    let failure = ran.failure("mesh-vault");
    assert!(!failure.contains(crate::support::SUPERUSER), "{failure}");
    assert_mentions(failure, &["is named `<secret store-superuser>`"]);
    assert!(ran.broken().contains(&"secret-never-shown"), "{:?}", ran.report.violations);
    nothing_moved(&ran);
}

#[tokio::test]
async fn a_module_that_adopts_a_container_and_leaves_its_push_to_another_is_refused_before_any_effect() {
    // postgres declares it adopts the store, and prepares itself but never pushes: nats's push
    // would apply the store, and postgres would be "adopted" by what that push did.
    let ran = TestMesh::new().with_plugin("postgres", "prepares_without_pushing").handover_undeclared().run().await;
    nothing_moved(&ran);
    assert_eq!(ran.report.exit_code(), 1);
    assert!(ran.broken().contains(&"one-push"), "{:?}", ran.report);
    let Some(ModuleOutcome::NotRun { because, .. }) = ran.report.outcome("postgres") else {
        panic!("postgres was {:?}", ran.report.outcome("postgres"))
    };
    assert_mentions(because, &["`postgres` declares it adopts `mesh-store`", "never pushes"]);
}

#[test]
fn a_changed_bus_layout_or_an_empty_bus_plugin_changes_nothing_at_all() {
    for (edit, exit) in [("layout", 1), ("empty plugin", 2)] {
        let dir = catalogue();
        let nats = dir.path().join("modules/nats");
        if edit == "layout" {
            let manifest = std::fs::read_to_string(nats.join("manifest.json")).unwrap();
            let mut manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
            manifest["bus-users"] = "/srv/elsewhere/accounts.conf".into();
            std::fs::write(nats.join("manifest.json"), manifest.to_string()).unwrap();
        } else {
            std::fs::write(nats.join("adopt.wasm"), b"").unwrap();
        }
        let record = dir.path().join("run.jsonl");
        let out = mesh_adopt()
            .args([
                "run",
                "--catalog-source",
                "https://git.mesh.test/catalogue.git@v3",
                "--record",
                record.to_str().unwrap(),
            ])
            .catalogue(dir.path())
            .output();
        assert_eq!(out.status.code(), Some(exit), "{edit}: {}", text(&out.stdout));
        let events: Vec<serde_json::Value> =
            std::fs::read_to_string(&record).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let effects: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| {
                e["event"] == "call" && (e["op"] == "carry" || e["op"] == "tell") && e["result"].get("ok").is_some()
            })
            .collect();
        assert!(effects.is_empty(), "{edit}: {effects:?}");
        let summary = events.iter().find(|e| e["event"] == "summary").expect("a summary");
        assert!(summary["modules"].as_array().unwrap().iter().all(|m| m["outcome"] != "adopted"), "{summary}");
        assert_eq!(summary["changes"], serde_json::json!([]), "{edit}");
        assert_eq!(events.last().unwrap()["exit"], exit, "{edit}");
    }
}
