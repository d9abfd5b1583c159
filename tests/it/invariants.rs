//! Plugins that break what adoption must keep fail the run, naming the invariant.

use mesh_adopt::run::Mode;

use crate::support::TestMesh;

#[tokio::test]
async fn pushing_before_accepting_the_superuser_breaks_credential_never_replaced() {
    let ran =
        TestMesh::new().with_plugin("postgres", "pushes_before_secret").run_modules(&["postgres"], Mode::Adopt).await;
    // The plugin itself reports success: only the node's apply shows what it did.
    ran.assert_adopted("postgres");
    assert!(!ran.report.succeeded());
    assert_eq!(ran.broken(), ["credential-never-replaced"]);
    assert!(ran.report.violations[0].detail.contains("`postgres`'s secret `superuser`"));
}

#[tokio::test]
async fn recreating_the_store_breaks_store_never_recreated() {
    let ran = TestMesh::new().with_plugin("postgres", "recreates_store").run_modules(&["postgres"], Mode::Adopt).await;
    assert!(!ran.report.succeeded());
    assert_eq!(ran.broken(), ["store-never-recreated"]);
    assert_eq!(ran.mesh.recreations("mesh-store"), 1);
}

#[tokio::test]
async fn the_full_phase_three_keeps_every_invariant() {
    let ran = TestMesh::new().run().await;
    for module in ["postgres", "nats", "mesh-vault"] {
        ran.assert_adopted(module);
    }
    assert!(ran.report.succeeded());
    assert_eq!(ran.mesh.recreations("mesh-store"), 0);
    assert_eq!(ran.mesh.recreations("mesh-bus"), 1);
    assert!(ran.mesh.container_image("mesh-vault").is_some(), "the vault is raised");
}
