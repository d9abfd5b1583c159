//! `check` is read-only: the host denies every effect while it runs.

use mesh_adopt_runtime::{Mode, ModuleOutcome};

use crate::support::{TestMesh, assert_mentions};

#[tokio::test]
async fn denies_a_tell_during_check() {
    let ran =
        TestMesh::new().with_plugin("postgres", "tells_during_check").run_modules(&["postgres"], Mode::Adopt).await;
    assert_mentions(
        ran.refusal("postgres"),
        &["denied", "`tell module add /postgres-module.json`", "`check` may only read"],
    );
    assert!(ran.commands().is_empty());
    assert!(ran.broken().is_empty());
}

#[tokio::test]
async fn check_of_the_catalogue_plans_without_changing_anything() {
    let ran = TestMesh::new().run_modules(&["postgres", "nats", "mesh-vault"], Mode::Check).await;
    let Some(ModuleOutcome::Checked(plan)) = ran.report.outcome("postgres") else {
        panic!("{:?}", ran.report.outcome("postgres"))
    };
    assert_eq!(plan.commands.len(), 7);
    assert_eq!(plan.commands[5].to_string(), "secret accept node-1 postgres superuser --from /accepting-superuser");
    assert!(ran.report.succeeded());
    assert!(ran.commands().is_empty());
    assert!(ran.mesh.carried().is_empty());
}

#[tokio::test]
async fn a_check_that_plans_past_a_denied_call_is_not_used_and_nothing_moves() {
    let ran = TestMesh::new()
        .with_plugin("postgres", "plans_past_a_denial")
        .handover_undeclared()
        .run_modules(&["postgres"], Mode::Adopt)
        .await;
    assert_eq!(ran.unusable_input("postgres"), mesh_adopt_runtime::report::Input::Plan);
    assert_mentions(
        ran.failure("postgres"),
        &["was denied `tell module add /postgres-module.json`", "planned anyway", "Nothing of `postgres`"],
    );
    assert!(ran.commands().is_empty(), "{:?}", ran.commands());
    assert!(ran.mesh.carried().is_empty());
}
