//! Plugins that break what adoption must keep fail the run, naming the invariant.

use mesh_adopt_runtime::Mode;

use crate::support::{TestMesh, assert_mentions};

/// Asserts preflight stopped the run on `rule` before anything reached the mesh.
fn refused_before_any_effect(ran: &crate::support::Ran, rule: &str, mentions: &[&str]) {
    assert!(!ran.report.succeeded());
    assert_eq!(ran.report.exit_code(), 1);
    assert!(ran.broken().contains(&rule), "{:?}", ran.report.violations);
    let Some(mesh_adopt_runtime::ModuleOutcome::NotRun { because, code, .. }) = ran.report.outcome("postgres") else {
        panic!("postgres was {:?}", ran.report.outcome("postgres"))
    };
    assert_eq!(*code, mesh_adopt_runtime::report::Ending::RuleWouldBreak);
    assert_eq!(ran.report.ending(), Some(mesh_adopt_runtime::report::Ending::RuleWouldBreak));
    assert_mentions(because, &[&format!("break rule `{rule}`")]);
    // Each says, as data, which module broke it or which container it concerns.
    for violation in &ran.report.violations {
        assert!(violation.module.is_some() || violation.container.is_some(), "{violation:?}");
        if let Some(container) = &violation.container {
            assert!(violation.detail.contains(&format!("`{container}`")), "{violation:?}");
        }
    }
    let detail: Vec<&str> = ran.report.violations.iter().map(|v| v.detail.as_str()).collect();
    assert_mentions(&detail.join("\n"), mentions);
    assert!(ran.commands().is_empty(), "nothing was told: {:?}", ran.commands());
    assert!(ran.mesh.carried().is_empty(), "nothing was carried: {:?}", ran.mesh.carried());
    assert!(ran.mesh.sealed().is_empty(), "nothing was sealed: {:?}", ran.mesh.sealed());
}

#[tokio::test]
async fn a_plan_that_pushes_before_handing_the_superuser_over_is_refused_in_preflight() {
    let ran =
        TestMesh::new().with_plugin("postgres", "pushes_before_secret").run_modules(&["postgres"], Mode::Adopt).await;
    refused_before_any_effect(&ran, "credential-never-replaced", &["`postgres`'s secret `superuser`", "`mesh-store`"]);
}

#[tokio::test]
async fn a_plan_that_accepts_the_superuser_after_its_push_is_refused_in_preflight() {
    let ran =
        TestMesh::new().with_plugin("postgres", "accepts_after_push").run_modules(&["postgres"], Mode::Adopt).await;
    refused_before_any_effect(&ran, "credential-never-replaced", &["genesis credential `store-superuser`"]);
}

#[tokio::test]
async fn a_plan_that_pushes_twice_is_refused_in_preflight() {
    let ran = TestMesh::new().with_plugin("postgres", "pushes_twice").run_modules(&["postgres"], Mode::Adopt).await;
    refused_before_any_effect(&ran, "one-push", &["`postgres`'s plan pushes 2 times"]);
}

#[tokio::test]
async fn a_registration_of_what_this_run_did_not_carry_is_denied() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "registers_without_carrying")
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    // Every tell was denied, and the plugin said it succeeded: not adopted, the denial named.
    assert!(!ran.report.succeeded());
    assert_mentions(
        ran.refusal("postgres"),
        &["not adopted: its plugin was denied `tell module add /postgres-module.json`"],
    );
    assert!(ran.commands().is_empty(), "{:?}", ran.commands());
    let denied = ran.transcript.events().into_iter().any(|e| {
        matches!(&e, mesh_adopt_runtime::record::transcript::Entry::Call { outcome: Err(error), .. }
            if error.message.contains("registers `/postgres-module.json`, and this plugin carried nothing there"))
    });
    assert!(denied, "the registration was not denied for want of a carry");
}

#[tokio::test]
async fn a_carry_no_planned_command_uses_is_denied() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "carries_unplanned")
        .handover_undeclared()
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    assert_mentions(ran.refusal("postgres"), &["a carry to `/postgres-module.json` is used by no command of the plan"]);
    assert!(ran.mesh.carried().is_empty(), "{:?}", ran.mesh.carried());
}

#[tokio::test]
async fn a_node_that_loses_the_store_on_a_push_stops_the_run_naming_expected_and_found() {
    let ran = TestMesh::new()
        .with_setup(|setup| {
            setup.applies = mesh_adopt_runtime::mesh::simulated::NodeApplies::LosingContainer("mesh-store".into())
        })
        .run()
        .await;
    assert!(!ran.report.succeeded());
    assert!(ran.broken().contains(&"effect-as-predicted"), "{:?}", ran.report.violations);
    let detail: Vec<&str> = ran.report.violations.iter().map(|v| v.detail.as_str()).collect();
    assert_mentions(
        &detail.join("\n"),
        &[
            "after `postgres`'s push",
            "`mesh-store` is not on the node, where the prediction has it run postgres:16.4-bookworm",
        ],
    );
    // The phase stopped at the first difference, once the store's push had landed.
    for module in ["nats", "mesh-vault"] {
        let outcome = ran.report.outcome(module);
        assert!(matches!(outcome, Some(mesh_adopt_runtime::ModuleOutcome::NotRun { .. })), "{module}: {outcome:?}");
    }
}

#[tokio::test]
async fn a_forged_manifest_that_would_recreate_the_store_is_denied_and_the_store_kept() {
    // The plugin carries the catalogue's manifest with the store's image changed: were it
    // registered, the push would recreate the store.
    let ran = TestMesh::new()
        .with_plugin("postgres", "recreates_store")
        .handover_undeclared()
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    assert!(!ran.report.succeeded());
    assert_mentions(ran.refusal("postgres"), &["failed to carry", "not the catalogue's manifest of `postgres`"]);
    assert!(ran.commands().is_empty(), "nothing was told: {:?}", ran.commands());
    assert!(ran.mesh.carried().is_empty(), "nothing was carried: {:?}", ran.mesh.carried());
    assert_eq!(ran.mesh.recreations("mesh-store"), 0);
    assert!(ran.broken().is_empty());
}
